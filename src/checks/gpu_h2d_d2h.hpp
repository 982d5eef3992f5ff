// gpu.h2d_d2h: pinned host<->GPU copy bandwidth (H2D, D2H, both at once) per GPU alone and for all
// selected GPUs at once, the data verified, graded against the PCIe link's rate at the generation
// and width NVML reports while the copies run (docs/checks.md).
#pragma once
#include <optional>

#include "checks/gpu_measurement.hpp"
#include "specs/pcie.hpp"

namespace gpuvet {

class GpuHostCopyCheck : public GpuKernelCheck {
public:
    std::string_view key() const override { return "gpu.h2d_d2h"; }
    std::string_view title() const override { return "Host<->GPU copy bandwidth"; }
    std::vector<CheckResult> run(CheckContext& ctx) override;
};

namespace measure {
// Healthy pinned copies reach about 82% of the link (REFERENCES.md).
inline constexpr double kHostCopyExpected = 0.82, kHostCopyWarn = 0.72, kHostCopyFail = 0.50;
// A GPU whose rate with all GPUs copying falls below this fraction of its rate alone shares its
// uplink (PCIe switch or root port) with others.
inline constexpr double kSharedBelow = 0.70;
}  // namespace measure

}  // namespace gpuvet
