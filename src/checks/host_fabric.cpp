#include "checks/host_fabric.hpp"

#include <dlfcn.h>

#include <cstdlib>

#include "checks/host_fabric_judge.hpp"
#include "core/context.hpp"
#include "core/strings.hpp"
#include "host/fabric.hpp"

namespace gpuvet {

std::optional<std::string> probe_libibverbs() {
    const char* chosen = std::getenv("GPUVET_LIBIBVERBS");  // a test double, or /nonexistent
    void* h = ::dlopen(chosen && *chosen ? chosen : "libibverbs.so.1", RTLD_LAZY | RTLD_LOCAL);
    if (!h) {
        const char* e = ::dlerror();
        return std::string(e ? e : "not found");
    }
    ::dlclose(h);
    return std::nullopt;
}

HostFabricCheck::HostFabricCheck(LibraryProbe probe)
    : probe_(probe ? std::move(probe) : LibraryProbe(probe_libibverbs)) {}

FabricFacts collect_fabric(const std::filesystem::path& root, const HostFabricCheck::LibraryProbe& probe) {
    HostFs fs(root);
    FabricFacts f = read_fabric(fs);
    if (!f.devices.empty()) {
        f.libibverbs_error = probe ? probe() : probe_libibverbs();
        f.libibverbs_probed = true;
        read_fabric_acs(fs, f);
    }
    return f;
}

std::vector<CheckResult> HostFabricCheck::run(CheckContext& ctx) {
    return {judge_fabric(collect_fabric(ctx.options.root, probe_))};
}

namespace {

std::string port_row(const RdmaPort& p, const RdmaDevice& d) {
    auto coded = [](const std::optional<CodedState>& s) {
        return s ? std::to_string(s->code) + ": " + s->name : std::string("unreadable");
    };
    std::string v = (p.link_layer.empty() ? std::string("link layer unreadable")
                     : p.roce()           ? "RoCE"
                                          : p.link_layer) +
                    ", " + coded(p.state) + ", " + coded(p.phys_state) + ", " +
                    (p.rate_text.empty() ? std::string("rate unreadable") : p.rate_text);
    if (p.netdev) v += ", " + *p.netdev + (p.netdev_mtu ? " MTU " + std::to_string(*p.netdev_mtu) : std::string());
    if (d.pci) {
        v += ", PCI " + d.pci->bdf;
        if (d.pci->numa_node) v += " NUMA " + std::to_string(*d.pci->numa_node);
        if (d.pci->link.width && d.pci->link.speed_gts)
            v += " x" + std::to_string(*d.pci->link.width) + " " + format_number(*d.pci->link.speed_gts) + " GT/s";
    }
    return v;
}

}  // namespace

FabricInventory fabric_inventory_of(const FabricFacts& f, const CheckResult& judged) {
    FabricInventory inv;
    inv.verdict = to_string(judged.verdict);
    inv.summary = judged.summary;
    if (f.devices.empty()) inv.absent_reason = "no RDMA device (/sys/class/infiniband is empty or absent)";
    for (const RdmaDevice& d : f.devices)
        for (const RdmaPort& p : d.ports)
            inv.rows.emplace_back(d.name + " port " + std::to_string(p.port), port_row(p, d));
    for (const GpuNicPair& pair : pair_gpus_with_nics(f)) {
        if (!pair.nic) continue;
        inv.rows.emplace_back("GPU " + f.gpus[pair.gpu].bdf, "nearest NIC " + f.devices[*pair.nic].name + ", " +
                                                                 to_string(pair.distance) + " (" +
                                                                 topo_word(pair.distance) + ")");
    }
    if (!f.devices.empty()) {
        inv.rows.emplace_back("Verbs devices", f.uverbs.empty()
                                                   ? std::string("none in /dev/infiniband")
                                                   : std::to_string(f.uverbs.size()) + " in /dev/infiniband");
        inv.rows.emplace_back("GPUDirect RDMA", !f.peermem_evidence.empty()
                                                    ? "nvidia-peermem (" + f.peermem_evidence + ")"
                                                : dmabuf_possible(f) ? std::string("DMA-BUF possible")
                                                                     : std::string("not available"));
    }
    for (const Finding& x : judged.findings) inv.findings.push_back(std::string(to_string(x.verdict)) + ": " + x.text);
    return inv;
}

}  // namespace gpuvet
