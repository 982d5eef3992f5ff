// What the burn's CUDA loads (burn.cpp) and HIP loads (amd_burn.cpp) share: each GPU's compute and
// memory load behind one interface, so that one loop times, checks and records the batches and one
// driver samples the telemetry and hands everything to the same verdicts, whichever vendor's
// kernels run.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/context.hpp"
#include "core/result.hpp"
#include "gpu/burn.hpp"

namespace gpuvet::burn_detail {

// The compute load of one GPU: FMA kernels or tensor GEMMs.
class ComputeLoad {
public:
    virtual ~ComputeLoad() = default;
    virtual std::string name() const = 0;  // "fma f32", "gemm bf16 8192^3"
    // One batch: launch, time, check against the reference. Returns FLOPs and GPU milliseconds.
    virtual std::pair<double, double> batch(std::uint64_t& compared, std::uint64_t& mismatches,
                                            std::uint64_t& nans) = 0;
};

// The memory load of one GPU: copies over most of the free memory, verified.
class MemoryTraffic {
public:
    virtual ~MemoryTraffic() = default;
    // One batch: copy, verify. Returns bytes moved and GPU milliseconds.
    virtual std::pair<double, double> batch(std::uint64_t& compared, std::uint64_t& mismatches) = 0;
};

struct Loads {
    std::unique_ptr<ComputeLoad> compute;   // null for --load memory
    std::unique_ptr<MemoryTraffic> memory;  // null for --load gemm
    std::string note;                       // why this compute load runs (shown with an FMA load)
    bool note_always = false;               // shown whatever the compute load is
};

// Prepares the loads of GPU `k` (position in the outcomes) on its load thread, its GPU current;
// throws an Error when they cannot run, Interrupted when `stop` came while filling buffers.
using PrepareLoads = std::function<Loads(std::size_t k, const std::atomic<bool>& stop)>;
// Calls fn(k) for every GPU that has a device session, in parallel, each on its own thread with
// its GPU current, and returns when all have returned.
using RunParallel = std::function<void(const std::function<void(std::size_t k)>& fn)>;

// The burn: every GPU whose outcome has no load_error yet under its loads for opt.duration_s,
// telemetry sampled from the run's device backend (`telemetry_library` names it in a warning when
// it cannot start), then judge_burn. `outcomes` carry what is known of each GPU beforehand.
std::vector<CheckResult> drive_burn(CheckContext& ctx, const BurnOptions& opt, std::vector<GpuBurnOutcome> outcomes,
                                    const PrepareLoads& prepare, const RunParallel& run_parallel,
                                    std::string_view telemetry_library);

}  // namespace gpuvet::burn_detail

namespace gpuvet {

class HipSession;
// The burn on AMD GPUs (amd_burn.cpp): gpuvet's FMA and STREAM kernels through HIP, telemetry from
// the run's AMD library (`telemetry_library`: "AMD SMI" or "ROCm SMI"), the same verdicts.
// `outcomes` carry each GPU's index, name, SKU and thresholds; `sessions` (parallel to it) its HIP
// session, null for a GPU that could not be opened (its outcome's load_error says why).
std::vector<CheckResult> run_burn_hip(CheckContext& ctx, const BurnOptions& opt, std::vector<GpuBurnOutcome> outcomes,
                                      const std::vector<HipSession*>& sessions, std::string_view telemetry_library);

}  // namespace gpuvet

namespace gpuvet::burn_detail {

// The FMA chain's inputs, exact in every format (docs/kernels.md): a = 0.9375, b = 0.125, x0 = 1.
inline constexpr double kFmaA = 0.9375, kFmaB = 0.125, kFmaX0 = 1.0;
inline constexpr std::uint32_t kF16A = 0x3B80, kF16B = 0x3000, kF16X0 = 0x3C00;
inline constexpr std::uint32_t kBf16A = 0x3F70, kBf16B = 0x3E00, kBf16X0 = 0x3F80;
inline std::uint32_t pair_of(std::uint32_t h) { return (h << 16) | h; }
// The result every thread of `kernel` (fma_f64, fma_f32, fma_f16x2, fma_bf16x2) stores after
// `iterations`, by the CPU reference: `elem_bytes` bytes (8 for f64, else 4).
std::vector<unsigned char> fma_expected_word(std::string_view kernel, std::uint32_t iterations);

}  // namespace gpuvet::burn_detail
