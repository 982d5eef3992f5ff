// The GPU inventory turned into the printers' tables of facts (core/inventory_facts.hpp): each
// typed value kept as the driver gave it, each driver code decoded here, beside its decoder.
#include <type_traits>

#include "core/amd_throttle.hpp"
#include "gpu/device/derived_facts.hpp"
#include "gpu/inventory_facts.hpp"
#include "gpu/inventory_fields.hpp"

namespace gpuvet {

namespace {

template <class T>
FactValue value_of(const T& v) {
    if constexpr (std::is_same_v<T, bool> || std::is_same_v<T, std::string>) return v;
    else if constexpr (std::is_floating_point_v<T>) return double(v);
    else if constexpr (std::is_signed_v<T>) return std::int64_t(v);
    else return std::uint64_t(v);
}

template <class T>
Fact<FactValue> fact_of(const Fact<T>& f) {
    return f ? Fact<FactValue>(value_of(*f)) : Fact<FactValue>::absent(f.absent_reason);
}

InventoryLink link_of(const NvLinkInfo& l) {
    InventoryLink out;
    out.link = l.link;
    out.active = l.active;
    out.remote_pci_bus_id = l.remote_pci_bus_id;
    out.version = l.version;
    out.version_name = l.version ? nvlink_version_name(*l.version) : "?";
    out.remote_type = l.remote_type;
    return out;
}

// AMD's own parts: xGMI links and RAS blocks.
void amd_parts(const GpuInfo& g, InventoryGpu& out) {
    for (const auto& l : g.xgmi_links)
        out.xgmi_links.push_back({l.link, l.active, l.remote_pci_bus_id, l.bit_rate_gbps, l.max_bandwidth_gbps});
    out.xgmi_links_absent_reason = g.xgmi_absent_reason;
    out.xgmi_links_active = active_xgmi_links(g);
    for (const auto& b : g.ras_blocks) out.ras_blocks.push_back({b.block, b.correctable, b.uncorrectable, b.deferred});
}

InventoryGpu gpu_of(const GpuInfo& g) {
    InventoryGpu out;
    out.index = g.index;
    out.vendor = g.vendor.value_or("");
    out.lost = g.lost;
    out.name = g.name;
    auto add = [&](const char* key, const char* label, const auto& fact) {
        out.facts.push_back(InventoryFact{key, label, fact_of(fact), std::nullopt});
    };
    if (out.vendor == "AMD") {
        visit_amd_gpu_facts(g, add);
        amd_parts(g, out);
    } else {
        visit_gpu_facts(g, add);
    }
    for (auto& f : out.facts) {
        if (f.key == "clock_event_reasons")
            f.decoded =
                g.clock_event_reasons ? decode_clock_reasons(*g.clock_event_reasons) : std::vector<std::string>{};
        if (f.key == "amd_throttle_status")
            f.decoded =
                g.amd_throttle_status ? amd_throttle::names(*g.amd_throttle_status) : std::vector<std::string>{};
    }
    for (const auto& l : g.nvlinks) out.nvlinks.push_back(link_of(l));
    out.nvlinks_active = active_nvlinks(g);
    out.nvlinks_absent_reason = g.nvlink_absent_reason;
    for (const auto& p : g.processes)
        out.processes.push_back(InventoryProcess{p.pid, p.name, p.type, p.used_memory_bytes});
    out.processes_absent_reason = g.processes_absent_reason;
    out.errors = g.errors;
    return out;
}

}  // namespace

InventoryFacts inventory_facts_of(const Inventory& inv) {
    InventoryFacts out;
    out.cuda_present = inv.cuda_present;
    out.cuda_absent_reason = inv.cuda_absent_reason;
    out.driver_version = inv.driver_version;
    out.cuda_driver_version = inv.cuda_driver_version;
    out.nvml_version = inv.nvml_version;
    out.nvml_present = inv.nvml_present;
    out.nvml_absent_reason = inv.nvml_absent_reason;
    out.libcuda_path = inv.libcuda_path;
    out.libnvml_path = inv.libnvml_path;
    out.amd_present = inv.amd_present;
    out.amd_absent_reason = inv.amd_absent_reason;
    out.amd_library = inv.amd_library;
    out.libamd_path = inv.libamd_path;
    out.amd_driver_version = inv.amd_driver_version;
    out.amd_library_version = inv.amd_library_version;
    for (const auto& g : inv.gpus) out.gpus.push_back(gpu_of(g));
    out.topology = inv.topology.matrix;
    out.topology_absent_reason = inv.topology.absent_reason;
    out.errors = inv.errors;
    return out;
}

}  // namespace gpuvet
