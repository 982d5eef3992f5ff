// gpu.pcie_link: has the host<->GPU link trained to what the GPU and the slot can do? A narrower
// link is a FAIL (half the lanes, half the bandwidth); a lower generation at idle only a WARN,
// because GPUs drop the generation to save power when idle (gpu.h2d_d2h measures it under load).
#pragma once
#include "checks/gpu_inventory_check.hpp"

namespace gpuvet {

class GpuPcieLinkCheck final : public InventoryCheck {
public:
    std::string_view key() const override { return "gpu.pcie_link"; }
    std::string_view title() const override { return "PCIe link"; }

protected:
    CheckResult assess(const GpuInfo& gpu, const GpuSpec* spec, CheckContext& ctx) override;
};

}  // namespace gpuvet
