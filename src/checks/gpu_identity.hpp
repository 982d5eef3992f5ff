// gpu.identity: is each GPU the SKU its name says? PCI device id, driver name, SM count (AMD: compute
// units and gfx target) and memory size must agree (a re-badged or cut-down card is a FAIL). Records
// the SKU in the report's GPU list.
#pragma once
#include "checks/gpu_inventory_check.hpp"
#include "gpu/identify.hpp"

namespace gpuvet {

class GpuIdentityCheck final : public InventoryCheck {
public:
    std::string_view key() const override { return "gpu.identity"; }
    std::string_view title() const override { return "GPU identity"; }

protected:
    CheckResult assess(const GpuInfo& gpu, const GpuSpec* spec, CheckContext& ctx) override;
    CheckResult lost(const GpuInfo& gpu) override;

private:
    static void add_amd_identity(const GpuInfo& g, const GpuSpec* s, const Identification& id, CheckResult& r);
};

}  // namespace gpuvet
