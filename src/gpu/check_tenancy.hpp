// gpu.tenancy: is the GPU ours alone? Foreign processes, memory already in use, the compute mode,
// MIG slicing and vGPU (the seed articles: `nvidia-smi -q -d COMPUTE` shows mode and other tenants).
#pragma once
#include <cstdint>

#include "gpu/inventory_check.hpp"

namespace gpuvet {

// Used memory with no process visible above this is another tenant's (container, VM) or a leak.
// The driver's own baseline on an idle datacenter GPU stays well under it (a few hundred MiB).
inline constexpr std::uint64_t kIdleMemoryUsedBytes = 1ull << 30;

class GpuTenancyCheck final : public InventoryCheck {
public:
    explicit GpuTenancyCheck(std::uint32_t self_pid = 0);  // 0: this process
    std::string_view key() const override { return "gpu.tenancy"; }
    std::string_view title() const override { return "GPU tenancy"; }

protected:
    CheckResult assess(const GpuInfo& gpu, const GpuSpec* spec, CheckContext& ctx) override;

private:
    std::uint32_t self_pid_;
};

}  // namespace gpuvet
