// gpu.health: memory errors (ECC, row remapping, retired pages; AMD: RAS per block and bad pages),
// persistence, power limit, clock event reasons (AMD: throttle status) and temperature, as the driver
// reports them before any load. Floors: Azure
// azurehpc-health-checks and DCGM (docs/checks.md).
#pragma once
#include "checks/gpu_inventory_check.hpp"

namespace gpuvet {

// Azure azurehpc-health-checks: more uncorrectable remapped rows than this fails the GPU.
inline constexpr std::uint32_t kMaxUncorrectableRemappedRows = 512;
// An idle GPU this close to its slowdown temperature has no headroom for load.
inline constexpr int kIdleSlowdownMarginC = 10;

namespace health {
// Shared by both vendors' judges: the power limit against the GPU's own default (WARN below it), and
// the temperature before any load against the slowdown threshold (WARN within the margin).
void judge_power_limit(const GpuInfo& g, const char* source, CheckResult& r, Findings& f);
void judge_idle_temperature(const GpuInfo& g, const std::string& source, CheckResult& r, Findings& f);
// An AMD GPU (gpu_health_amd.cpp): RAS counts per block, bad pages, the power cap, the throttle
// status and the junction temperature before any load.
CheckResult assess_amd(const GpuInfo& g, const GpuSpec* spec);
}  // namespace health

class GpuHealthCheck final : public InventoryCheck {
public:
    std::string_view key() const override { return "gpu.health"; }
    std::string_view title() const override { return "GPU health"; }

protected:
    CheckResult assess(const GpuInfo& gpu, const GpuSpec* spec, CheckContext& ctx) override;
};

}  // namespace gpuvet
