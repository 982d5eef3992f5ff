// gpu.tenancy: is the GPU ours alone? Foreign processes, memory already in use, the compute mode,
// MIG slicing and vGPU (the seed articles: `nvidia-smi -q -d COMPUTE` shows mode and other tenants),
// and utilization while nothing of ours runs (gpu/idle_utilization.hpp): the sign of a tenant
// whose processes NVML cannot show. It runs before any gpuvet load (core/registry.cpp).
#pragma once
#include <cstdint>
#include <functional>
#include <map>

#include "gpu/idle_utilization.hpp"
#include "checks/gpu_inventory_check.hpp"

namespace gpuvet {

// Used memory with no process visible above this is another tenant's (container, VM) or a leak.
// The driver's own baseline on an idle datacenter GPU stays well under it (a few hundred MiB).
inline constexpr std::uint64_t kIdleMemoryUsedBytes = 1ull << 30;

class GpuTenancyCheck final : public InventoryCheck {
public:
    // Reads the idle-utilization window of the given NVML indexes (all in one window).
    using UtilizationSampler = std::function<std::map<int, IdleUtilization>(CheckContext&, const std::vector<int>&)>;
    // self_pid 0: this process. sampler empty: the run's device backend (NvmlBackend::shared()), 5/10/20 reads at 10 Hz
    // by tier. mig_expected: the order asks for MIG (--expect "... mig"), so MIG mode on is what was bought.
    explicit GpuTenancyCheck(std::uint32_t self_pid = 0, UtilizationSampler sampler = {}, bool mig_expected = false);
    std::string_view key() const override { return "gpu.tenancy"; }
    std::string_view title() const override { return "GPU tenancy"; }
    // Samples the selected GPUs' utilization once, then assesses each GPU.
    std::vector<CheckResult> run(CheckContext& ctx) override;

protected:
    CheckResult assess(const GpuInfo& gpu, const GpuSpec* spec, CheckContext& ctx) override;

private:
    bool mig_expected_;
    std::uint32_t self_pid_;
    UtilizationSampler sampler_;
    std::map<int, IdleUtilization> idle_;  // by NVML index, filled by run()
};

}  // namespace gpuvet
