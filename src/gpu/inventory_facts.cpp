// The GPU inventory turned into the printers' tables of facts (core/inventory_facts.hpp): each
// typed value kept as the driver gave it, each driver code decoded here, beside its decoder.
#include <type_traits>

#include "gpu/inventory.hpp"
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

InventoryGpu gpu_of(const GpuInfo& g) {
    InventoryGpu out;
    out.index = g.index;
    out.lost = g.lost;
    out.name = g.name;
    visit_gpu_facts(g, [&](const char* key, const char* label, const auto& fact) {
        out.facts.push_back(InventoryFact{key, label, fact_of(fact), std::nullopt});
    });
    for (auto& f : out.facts)
        if (f.key == "clock_event_reasons")
            f.decoded =
                g.clock_event_reasons ? decode_clock_reasons(*g.clock_event_reasons) : std::vector<std::string>{};
    for (const auto& l : g.nvlinks) out.nvlinks.push_back(link_of(l));
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
    for (const auto& g : inv.gpus) out.gpus.push_back(gpu_of(g));
    out.topology = inv.topology.matrix;
    out.topology_absent_reason = inv.topology.absent_reason;
    out.errors = inv.errors;
    return out;
}

}  // namespace gpuvet
