// gpu.memtest: nearly all free GPU memory written with memtest.ptx patterns and verified on the
// device; bytes tested prove the capacity; any error fails, naming its offset (docs/checks.md).
#pragma once
#include "checks/gpu_measurement.hpp"

namespace gpuvet {
class GpuMemtestCheck : public GpuKernelCheck {
public:
    std::string_view key() const override { return "gpu.memtest"; }
    std::string_view title() const override { return "GPU memory test"; }
    std::vector<CheckResult> run(CheckContext& ctx) override;
};
}  // namespace gpuvet
