// host.fabric: the RDMA NICs and ports, their place against the GPUs in the PCI tree, and the
// GPUDirect RDMA prerequisites, from sysfs (no root needed, except for ACS). What a multi-node
// job's NCCL will find here, before it silently falls back to TCP sockets.
#pragma once
#include <functional>

#include "core/check.hpp"
#include "core/fabric_inventory.hpp"
#include "host/fabric.hpp"

namespace gpuvet {

class HostFabricCheck final : public Check {
public:
    // Tries to load libibverbs.so.1: empty when it loads, else the loader's error.
    using LibraryProbe = std::function<std::optional<std::string>()>;
    explicit HostFabricCheck(LibraryProbe probe = {});
    std::string_view key() const override { return "host.fabric"; }
    std::string_view title() const override { return "RDMA fabric (NICs, ports, GPUDirect)"; }
    std::vector<CheckResult> run(CheckContext& ctx) override;

private:
    LibraryProbe probe_;
};

// Everything host.fabric reads: sysfs under `root`, then (when there is an RDMA device) the
// library probe and the ACS state of the bridges between GPUs and NICs.
FabricFacts collect_fabric(const std::filesystem::path& root, const HostFabricCheck::LibraryProbe& probe);

// The inventory's section: a row per port, per GPU and its NIC, and for GPUDirect RDMA.
FabricInventory fabric_inventory_of(const FabricFacts& f, const CheckResult& judged);

// dlopen("libibverbs.so.1", or $GPUVET_LIBIBVERBS when set): nullopt when it loads (it is closed again), else the
// reason.
std::optional<std::string> probe_libibverbs();

}  // namespace gpuvet
