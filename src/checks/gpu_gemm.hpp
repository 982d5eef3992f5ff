// gpu.gemm: tensor-core GEMM throughput per precision (TF32, FP16, BF16, FP8, INT8) through
// cuBLASLt, the best rate over a shape sweep, with every shape's sampled outputs checked on the CPU.
// On AMD GPUs run() hands over to amd_measure::gemm (hipBLASLt, amd_gemm.cpp).
#pragma once
#include "core/check.hpp"

namespace gpuvet {

struct GpuSpec;
struct GpuInfo;

class GpuGemmCheck final : public Check {
public:
    std::string_view key() const override { return "gpu.gemm"; }
    std::string_view title() const override { return "Tensor GEMM throughput"; }
    std::optional<std::string> unmet_requirement(const CheckContext& ctx) const override;
    std::vector<CheckResult> run(CheckContext& ctx) override;
};

}  // namespace gpuvet
