// The burn: every selected GPU under full load at once for a set time, results checked against
// a reference, NVML telemetry sampled alongside, then judged by judge_burn.
// Load per GPU (one thread each, its session current there):
//   gemm   - tensor GEMM through cuBLASLt when available; until then the FMA kernels of the dtype
//   memory - stream_copy over most of the free memory, checked with stream_verify
//   mixed  - alternating FMA and memory batches
// Stops on the duration, ctx.stop (Ctrl-C / SIGTERM) or a failing GPU; what was measured is
// always returned, so an interrupted run still yields a complete report.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "core/context.hpp"
#include "core/numbers.hpp"
#include "core/result.hpp"
#include "gpu/burn_judge.hpp"
#include "gpu/inventory.hpp"

namespace gpuvet {

enum class BurnDtype { bf16, fp16, tf32, fp32, fp64 };
enum class BurnLoad { gemm, memory, mixed };
const char* to_string(BurnDtype d);
const char* to_string(BurnLoad l);
// Parse "bf16" / "gemm"...; throw a Usage Error naming the accepted values.
BurnDtype parse_burn_dtype(const std::string& s);
BurnLoad parse_burn_load(const std::string& s);
// How long a burn may run: long enough to reach steady clocks, short enough to end within a day.
inline constexpr NumberRule kBurnDurationRule{
    .min = 1, .max = 86400, .unit = NumberUnit::Seconds, .what = "a duration", .example = "10m"};
// "10m", "90s", "1h", "45" (seconds) under kBurnDurationRule; throws a Usage Error naming `option`.
double parse_duration_s(const std::string& s, std::string_view option = "--duration");

struct BurnOptions {
    double duration_s = 60;
    BurnDtype dtype = BurnDtype::bf16;
    BurnLoad load = BurnLoad::gemm;
    double sample_hz = 1;  // NVML telemetry rate, 1-20
    // Fraction of free memory the memory load uses (two buffers together).
    double memory_fraction = 0.8;
};

// The GPUs to burn, with what the run knows of them.
struct BurnTargets {
    std::vector<const GpuInfo*> gpus;        // the selected GPUs
    std::vector<std::string> skus;           // parallel to gpus: the SKU key, or the driver's name (peers compare it)
    std::optional<int> cuda_driver_version;  // picks the cuBLASLt that matches the driver
};

// Runs the burn on `targets` and returns one gpu.burn result per GPU. Telemetry and throughput
// series are appended to ctx.report->series.
std::vector<CheckResult> run_burn(CheckContext& ctx, const BurnOptions& opt, const BurnTargets& targets);

}  // namespace gpuvet
