// gpu.driver: is an NVIDIA driver present and usable, and new enough for current CUDA builds; on a
// box with AMD GPUs, AMD's amdgpu driver and the library that reads it (its ROCm user space is
// gpu.software's to judge).
#pragma once
#include "core/check.hpp"
#include "core/result.hpp"

namespace gpuvet {

// What a driver's CUDA version (cuDriverGetVersion: 12040 = 12.4) can run: WARN below CUDA 12.
struct CudaSupport {
    Verdict verdict;
    std::string advice;  // empty when there is nothing to say
};
CudaSupport cuda_support(int cuda_driver_version);

class GpuDriverCheck final : public Check {
public:
    std::string_view key() const override { return "gpu.driver"; }
    std::string_view title() const override { return "NVIDIA driver"; }
    std::vector<CheckResult> run(CheckContext& ctx) override;
    // AMD's driver as gpu.driver reports it.
    static CheckResult amd_driver_result(const DriverInfo& d);
};

}  // namespace gpuvet
