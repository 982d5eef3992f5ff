// gpu.health: memory errors (ECC, row remapping, retired pages), persistence, power limit, clock
// event reasons and temperature, as the driver reports them before any load. Floors: Azure
// azurehpc-health-checks and DCGM (docs/checks.md).
#pragma once
#include "checks/gpu_inventory_check.hpp"

namespace gpuvet {

// Azure azurehpc-health-checks: more uncorrectable remapped rows than this fails the GPU.
inline constexpr std::uint32_t kMaxUncorrectableRemappedRows = 512;
// An idle GPU this close to its slowdown temperature has no headroom for load.
inline constexpr int kIdleSlowdownMarginC = 10;

class GpuHealthCheck final : public InventoryCheck {
public:
    std::string_view key() const override { return "gpu.health"; }
    std::string_view title() const override { return "GPU health"; }

protected:
    CheckResult assess(const GpuInfo& gpu, const GpuSpec* spec, CheckContext& ctx) override;
};

}  // namespace gpuvet
