// The registry table. Explicit on purpose: reading this file tells what `gpuvet check` does and
// in which order. A new check is one row here, its own file in checks/ and its tests.
#include "cli/registry.hpp"

#include "checks/gpu_allreduce.hpp"
#include "checks/gpu_burn.hpp"
#include "checks/gpu_driver.hpp"
#include "checks/gpu_fp_peak.hpp"
#include "checks/gpu_gemm.hpp"
#include "checks/gpu_h2d_d2h.hpp"
#include "checks/gpu_health.hpp"
#include "checks/gpu_identity.hpp"
#include "checks/gpu_memory_bandwidth.hpp"
#include "checks/gpu_memtest.hpp"
#include "checks/gpu_nvlink.hpp"
#include "checks/gpu_p2p.hpp"
#include "checks/gpu_software.hpp"
#include "checks/gpu_pcie_link.hpp"
#include "checks/gpu_tenancy.hpp"
#include "checks/gpu_train.hpp"
#include "checks/host_balance.hpp"
#include "checks/host_cpu.hpp"
#include "checks/host_fabric.hpp"
#include "checks/host_identity.hpp"
#include "checks/host_memory.hpp"
#include "checks/host_network.hpp"
#include "checks/host_storage.hpp"
#include "checks/order.hpp"
#include "core/error.hpp"
#include "order/order.hpp"

namespace gpuvet {

namespace {

template <class C>
CheckPtr plain(const CheckSettings&) {
    return std::make_unique<C>();
}

CheckPtr storage(const CheckSettings& s) {
    return std::make_unique<HostStorageCheck>(StorageSettings{s.data_dir, s.storage_bytes});
}
CheckPtr network(const CheckSettings& s) {
    return std::make_unique<HostNetworkCheck>(NetworkSettings{s.net_server, s.net_seconds, s.net_streams});
}
CheckPtr tenancy(const CheckSettings& s) {
    return std::make_unique<GpuTenancyCheck>(0, GpuTenancyCheck::UtilizationSampler{},
                                             s.order && s.order->mig_expected.value_or(false));
}
CheckPtr burn(const CheckSettings& s) {
    return s.burn ? std::make_unique<GpuBurnCheck>(*s.burn) : std::make_unique<GpuBurnCheck>(s.burn_s);
}
CheckPtr software(const CheckSettings& s) { return std::make_unique<GpuSoftwareCheck>(s.train); }
CheckPtr train(const CheckSettings& s) { return std::make_unique<GpuTrainCheck>(s.train); }
CheckPtr order(const CheckSettings& s) { return std::make_unique<OrderCheck>(s.order, s.data_dir); }

}  // namespace

const std::vector<RegistryRow>& registry() {
    static const std::vector<RegistryRow> rows = {
        {"host.identity", "host", plain<HostIdentityCheck>},
        {"host.cpu", "host", plain<HostCpuCheck>},
        {"host.memory", "host", plain<HostMemoryCheck>},
        {"host.storage", "host", storage},
        {"host.network", "host", network},
        {"host.fabric", "host", plain<HostFabricCheck>},    // RDMA NICs and ports, GPU-NIC pairing, GPUDirect
        {"host.balance", "host", plain<HostBalanceCheck>},  // reads host.cpu, host.storage, host.network
        {"gpu.driver", "gpu", plain<GpuDriverCheck>},
        {"gpu.software", "gpu", software},  // the framework stack the driver has to serve
        // Drawn from the GPU inventory: no load, so they run first and describe the idle state.
        {"gpu.identity", "gpu", plain<GpuIdentityCheck>},
        {"gpu.tenancy", "gpu", tenancy},
        {"gpu.health", "gpu", plain<GpuHealthCheck>},
        {"gpu.pcie_link", "gpu", plain<GpuPcieLinkCheck>},
        {"gpu.nvlink", "gpu", plain<GpuNvlinkCheck>},
        // Measurements under load, after the idle state was recorded.
        {"gpu.memory_bandwidth", "gpu", plain<GpuMemoryBandwidthCheck>},
        {"gpu.fp_peak", "gpu", plain<GpuFpPeakCheck>},
        {"gpu.memtest", "gpu", plain<GpuMemtestCheck>},
        {"gpu.h2d_d2h", "gpu", plain<GpuHostCopyCheck>},
        {"gpu.p2p", "gpu", plain<GpuP2pCheck>},
        {"gpu.gemm", "gpu", plain<GpuGemmCheck>},
        {"gpu.allreduce", "gpu", plain<GpuAllReduceCheck>},
        {"gpu.train", "gpu", train},  // check --full, bench train: a framework benchmark vs public baselines
        {"gpu.burn", "gpu", burn},    // last of the GPU checks: it heats the GPUs
        {"order", "order", order},    // reads host.network
    };
    return rows;
}

const std::vector<RegistryRow>& report_checks() {
    // Made by `check` after the registry's checks ran, from their report and the history database.
    static const std::vector<RegistryRow> rows = {
        {"history.drift", "history", nullptr},
    };
    return rows;
}

namespace {

// A token names one check ("gpu.p2p") or, ending in '.', an area ("gpu.", "host.", "order.").
bool matches(const RegistryRow& row, const std::string& t) {
    if (row.key == t) return true;
    return t.size() > 1 && t.back() == '.' && row.area == std::string_view(t).substr(0, t.size() - 1);
}

bool matches_any(const RegistryRow& row, const std::vector<std::string>& wanted) {
    for (const auto& t : wanted)
        if (matches(row, t)) return true;
    return wanted.empty();
}

}  // namespace

bool selects_report_check(const std::vector<std::string>& wanted, std::string_view key) {
    for (const auto& row : report_checks())
        if (row.key == key) return matches_any(row, wanted);
    return false;
}

void require_known_checks(const std::vector<std::string>& wanted) {
    std::string known;
    for (const auto* rows : {&registry(), &report_checks()})
        for (const auto& row : *rows) known += (known.empty() ? "" : ", ") + std::string(row.key);
    for (const auto& t : wanted) {
        bool any = false;
        for (const auto* rows : {&registry(), &report_checks()})
            for (const auto& row : *rows) any = any || matches(row, t);
        if (!any)
            throw usage_error(
                "unknown check '" + t + "'",
                "give check keys or areas ending in '.' (gpu., host., order., history.), comma-separated; "
                "the checks are: " +
                    known);
    }
}

CheckList select_checks(const std::vector<std::string>& wanted, const CheckSettings& settings) {
    require_known_checks(wanted);
    CheckList chosen;  // registry order, whatever order they were asked in
    for (const auto& row : registry()) {
        if (matches_any(row, wanted)) chosen.push_back(row.make(settings));
    }
    return chosen;
}

}  // namespace gpuvet
