// The registry: every check of `gpuvet check`, in the order they run. Explicit on purpose:
// reading this file tells what `gpuvet check` does.
#include "core/check.hpp"
#include "core/error.hpp"
#include "checks/gpu_allreduce.hpp"
#include "checks/gpu_burn.hpp"
#include "checks/gpu_driver.hpp"
#include "checks/gpu_health.hpp"
#include "checks/gpu_identity.hpp"
#include "checks/gpu_nvlink.hpp"
#include "checks/gpu_pcie_link.hpp"
#include "checks/gpu_tenancy.hpp"
#include "checks/gpu_gemm.hpp"
#include "checks/gpu_fp_peak.hpp"
#include "checks/gpu_h2d_d2h.hpp"
#include "checks/gpu_p2p.hpp"
#include "checks/gpu_memory_bandwidth.hpp"
#include "checks/gpu_memtest.hpp"
#include "checks/host_balance.hpp"
#include "checks/host_cpu.hpp"
#include "checks/host_identity.hpp"
#include "checks/host_memory.hpp"
#include "checks/host_network.hpp"
#include "checks/host_storage.hpp"
#include "checks/order.hpp"

namespace gpuvet {

CheckList all_checks() {
    CheckList c;
    c.push_back(std::make_unique<HostIdentityCheck>());
    c.push_back(std::make_unique<HostCpuCheck>());
    c.push_back(std::make_unique<HostMemoryCheck>());
    c.push_back(std::make_unique<HostStorageCheck>());
    c.push_back(std::make_unique<HostNetworkCheck>());
    c.push_back(std::make_unique<HostBalanceCheck>());
    c.push_back(std::make_unique<GpuDriverCheck>());
    // Drawn from the GPU inventory: no load, so they run first and describe the idle state.
    c.push_back(std::make_unique<GpuIdentityCheck>());
    c.push_back(std::make_unique<GpuTenancyCheck>());
    c.push_back(std::make_unique<GpuHealthCheck>());
    c.push_back(std::make_unique<GpuPcieLinkCheck>());
    c.push_back(std::make_unique<GpuNvlinkCheck>());
    // Measurements under load, after the idle state was recorded.
    c.push_back(std::make_unique<GpuMemoryBandwidthCheck>());
    c.push_back(std::make_unique<GpuFpPeakCheck>());
    c.push_back(std::make_unique<GpuMemtestCheck>());
    c.push_back(std::make_unique<GpuHostCopyCheck>());
    c.push_back(std::make_unique<GpuP2pCheck>());
    c.push_back(std::make_unique<GpuGemmCheck>());
    c.push_back(std::make_unique<GpuAllReduceCheck>());
    c.push_back(std::make_unique<GpuBurnCheck>());  // last of the GPU checks: it heats the GPUs
    // Last: order.network reads host.network's measurement.
    c.push_back(std::make_unique<OrderCheck>());
    return c;
}

CheckList select_checks(const std::vector<std::string>& wanted) {
    CheckList all = all_checks();
    if (wanted.empty()) return all;
    // A token names one check ("gpu.p2p") or, ending in '.', an area ("gpu.", "host.").
    auto matches = [](std::string_view key, const std::string& t) {
        return key == t || (!t.empty() && t.back() == '.' && key.substr(0, t.size()) == t);
    };
    std::string known;
    for (const auto& c : all) known += (known.empty() ? "" : ", ") + std::string(c->key());
    for (const auto& t : wanted) {
        bool any = false;
        for (const auto& c : all) any = any || matches(c->key(), t);
        if (!any)
            throw usage_error("unknown check '" + t + "'",
                              "give check keys or areas ending in '.' (gpu., host., order.), comma-separated; "
                              "the checks are: " + known);
    }
    CheckList chosen;  // registry order, whatever order they were asked in
    for (auto& c : all) {
        bool take = false;
        for (const auto& t : wanted) take = take || matches(c->key(), t);
        if (take) chosen.push_back(std::move(c));
    }
    return chosen;
}

}  // namespace gpuvet
