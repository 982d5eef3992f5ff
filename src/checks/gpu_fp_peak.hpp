// gpu.fp_peak: FMA throughput of the CUDA cores in FP64, FP32, FP16 (half2) and BF16 (bf162),
// results verified against the CPU reference, graded against the SKU's datasheet (docs/checks.md).
#pragma once
#include "checks/gpu_measurement.hpp"

namespace gpuvet {
class GpuFpPeakCheck : public GpuKernelCheck {
public:
    std::string_view key() const override { return "gpu.fp_peak"; }
    std::string_view title() const override { return "GPU FMA peak throughput"; }
    std::vector<CheckResult> run(CheckContext& ctx) override;
};
namespace measure {
inline constexpr double kFmaExpected = 0.90, kFmaWarn = 0.80, kFmaFail = 0.70;
}
}  // namespace gpuvet
