// gpu.nvlink: are the NVLink links the SKU has present and active? On AMD GPUs the same question of
// their xGMI (Infinity Fabric) links, AMD's counterpart. Adds this GPU's row of the topology matrix
// (like `nvidia-smi topo -m`) to the details.
#pragma once
#include "checks/gpu_inventory_check.hpp"
#include "gpu/device/derived_facts.hpp"

namespace gpuvet {

class GpuNvlinkCheck final : public InventoryCheck {
public:
    std::string_view key() const override { return "gpu.nvlink"; }
    std::string_view title() const override { return "NVLink"; }

protected:
    CheckResult assess(const GpuInfo& gpu, const GpuSpec* spec, CheckContext& ctx) override;
};

// PCIe and NVL cards get NVLink only through an optional bridge; SXM and superchips always have it.
bool nvlink_needs_bridge(const GpuSpec& spec);

}  // namespace gpuvet
