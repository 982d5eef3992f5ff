// What every GPU measurement shares: one result per selected GPU with per-GPU errors isolated,
// grading against a Reference, tier sizes, and
// the clocks and temperature NVML reported while the measurement ran.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/check.hpp"
#include "core/stats.hpp"
#include "core/context.hpp"
#include "core/error.hpp"  // Interrupted
#include "core/result.hpp"
#include "gpu/session.hpp"

namespace gpuvet {

struct GpuSpec;

namespace measure {

// A reference "spec × fractions" with its source: expected, warn below, fail below.
Reference of_spec(double spec, double expected, double warn, double fail, std::string source);
// "H100 SXM5 80GB datasheet (gpuvet specs show h100-sxm5-80gb)": short enough for every figure,
// and the command names where the full citation lives.
std::string datasheet_source(const GpuSpec& sp);
// Repetitions by tier: quick, standard, full.
int by_tier(const CheckContext& ctx, int quick, int standard, int full);

// Clocks and temperature of a GPU read through the run's device backend (sm_clock_mhz,
// mem_clock_mhz, temperature_c), added to the result after the measurement; absent with the
// reason when the backend cannot say.
void add_clocks(CheckResult& r, int index, std::string_view suffix = "");

// Runs `fn` for each selected GPU (sequentially, context current) and returns one result per GPU.
// A GPU that could not be opened, or whose fn throws gpuvet::Error, gets an ERROR result with the
// message and advice; the others go on. Without any GPU the single result says so (SKIP).
using PerGpu = std::function<void(GpuSet::Member&, CheckResult&)>;
std::vector<CheckResult> for_each_gpu(CheckContext& ctx, std::string_view key, std::string_view title,
                                      const PerGpu& fn);

// Opens the selected GPUs; per-GPU errors become ERROR results appended to `errors`.
GpuSet open_gpus(CheckContext& ctx, std::string_view key, std::string_view title, std::vector<CheckResult>& errors);
CheckResult error_result(std::string_view key, std::string_view title, int gpu, const std::string& what,
                         const std::string& advice);

// "1.23" with `digits` decimals.
std::string fixed(double v, int digits);

}  // namespace measure
}  // namespace gpuvet

namespace gpuvet {
// Base of the GPU measurement checks: SKIP without a driver or without GPUs.
class GpuMeasureCheck : public Check {
public:
    std::optional<std::string> unmet_requirement(const CheckContext& ctx) const override;
};
// Base of the measurements gpuvet also makes on AMD GPUs with its own kernels (memory bandwidth,
// FMA peak, memtest, host copies): when the run's GPUs are AMD ones (amd_measure::run_is_amd) they
// need HIP instead of CUDA, and run() takes the HIP path (checks/amd_checks.hpp).
class GpuKernelCheck : public GpuMeasureCheck {
public:
    std::optional<std::string> unmet_requirement(const CheckContext& ctx) const override;
};
}  // namespace gpuvet
