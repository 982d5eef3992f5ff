// What gpuvet's AMD GPU measurements share, beside gpu_measurement.hpp's NVIDIA ones: the one rule
// that says a run's GPUs are AMD ones (so the four kernel checks take the HIP path), the GPUs
// selected with their fixed facts (AMD SMI's describe) and SKU, a HIP session per GPU, one result
// per GPU with its errors isolated, and the clocks AMD SMI reads after the measurement.
#pragma once
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/check.hpp"
#include "core/result.hpp"
#include "gpu/amd_session.hpp"
#include "gpu/device/backend.hpp"

namespace gpuvet {

struct GpuSpec;

namespace amd_measure {

// True when the run's GPUs are AMD ones: NVIDIA's driver is absent and AMD's library (AMD SMI, or
// ROCm SMI on older stacks) lists GPUs. The NVIDIA path is taken whenever NVIDIA's driver is present,
// exactly as before AMD GPUs were known, also on a box with GPUs of both vendors.
bool run_is_amd(const CheckContext& ctx);
// The AMD library the run chose (gpu/device/backend_choice.hpp); AMD SMI's when no AMD GPU is listed.
const DeviceBackend& amd_devices();
// Why the AMD kernel measurements cannot run (HIP missing or not starting), or nullopt.
std::optional<std::string> kernel_requirement();

// One selected AMD GPU: AMD SMI's index (the report's GPU), its facts, SKU and HIP session (or
// why there is none).
struct Member {
    int index = 0;
    DeviceFacts facts;
    const GpuSpec* spec = nullptr;
    std::unique_ptr<HipSession> session;
    std::string error, advice;
};
// The GPUs --gpus selected (all when empty), each with a session when HIP could open it.
std::vector<Member> open_gpus(const CheckContext& ctx);

// Runs `fn` for each opened GPU in turn (its HIP device current) and returns one result per GPU:
// a GPU that could not be opened, or whose fn throws gpuvet::Error, gets an ERROR result; a stop
// makes the rest SKIP. Without any GPU the single result says so.
using PerGpu = std::function<void(Member&, CheckResult&)>;
std::vector<CheckResult> for_each_gpu(CheckContext& ctx, std::string_view key, std::string_view title,
                                      const PerGpu& fn);

// The GFX and memory clocks and the junction temperature AMD SMI reports now, under the keys the
// NVIDIA measurements use (sm_clock_mhz, mem_clock_mhz, temperature_c); absent with the reason.
void add_clocks(CheckResult& r, int index);

}  // namespace amd_measure
}  // namespace gpuvet
