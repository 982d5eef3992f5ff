#include "report/inventory_view.hpp"

#include <fmt/format.h>

#include <type_traits>

#include "core/strings.hpp"

namespace gpuvet {

namespace {

Json value_json(const FactValue& v) {
    return std::visit([](const auto& x) { return Json(x); }, v);
}
Json value_json(const auto& v) { return Json(v); }

template <class T>
Json fact_json(const Fact<T>& f) {
    Json j;
    j["value"] = f ? value_json(*f) : Json(nullptr);
    j["absent_reason"] = f ? Json(nullptr) : Json(f.absent_reason);
    return j;
}

// An empty text (no reason, no path) is null in the JSON.
Json text_or_null(const std::string& s) { return s.empty() ? Json(nullptr) : Json(s); }

bool ends_with(std::string_view s, std::string_view suffix) {
    return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

std::string join(const std::vector<std::string>& v, const char* sep) {
    std::string out;
    for (const auto& s : v) out += (out.empty() ? "" : sep) + s;
    return out;
}

// A present value, formatted by its type and the unit in its key.
template <class T>
std::string format_value(std::string_view key, const T& v) {
    if constexpr (std::is_same_v<T, bool>) {
        return v ? "yes" : "no";
    } else if constexpr (std::is_same_v<T, std::string>) {
        return v;
    } else {
        if (key == "pci_device_id" || key == "pci_vendor_id")
            return fmt::format("0x{:04x}", static_cast<unsigned long long>(v));
        if (key == "pci_subsystem_id") return fmt::format("0x{:08x}", static_cast<unsigned long long>(v));
        if (ends_with(key, "_bytes")) return fmt::format("{:.2f} GiB", static_cast<double>(v) / (1ULL << 30));
        if (ends_with(key, "_w")) return fmt::format("{:.1f} W", static_cast<double>(v));
        if (ends_with(key, "_mhz")) return fmt::format("{} MHz", v);
        if (ends_with(key, "_c")) return fmt::format("{} °C", v);
        if (ends_with(key, "_percent")) return fmt::format("{} %", v);
        if (key.substr(0, 9) == "pcie_gen_") return fmt::format("Gen{}", v);
        if (key.substr(0, 11) == "pcie_width_") return fmt::format("x{}", v);
        return fmt::format("{}", v);
    }
}

template <class T>
std::string format_fact(std::string_view key, const Fact<T>& f) {
    return f ? format_value(key, *f) : "— (" + f.absent_reason + ")";
}

// A bit set prints as the names of its bits, decoded where it was read.
std::string format_fact(const InventoryFact& f) {
    if (!f.value) return "— (" + f.value.absent_reason + ")";
    if (f.decoded) return f.decoded->empty() ? "none" : join(*f.decoded, ", ");
    return std::visit([&](const auto& v) { return format_value(f.key, v); }, *f.value);
}

Json driver_json(const InventoryFacts& inv) {
    Json d;
    d["present"] = inv.cuda_present;
    d["absent_reason"] = inv.cuda_present ? Json(nullptr) : Json(inv.cuda_absent_reason);
    d["driver_version"] = fact_json(inv.driver_version);
    d["cuda_driver_version"] = fact_json(inv.cuda_driver_version);
    d["nvml_version"] = fact_json(inv.nvml_version);
    d["nvml_present"] = inv.nvml_present;
    d["nvml_absent_reason"] = inv.nvml_present ? Json(nullptr) : Json(inv.nvml_absent_reason);
    d["libcuda_path"] = text_or_null(inv.libcuda_path);
    d["libnvml_path"] = text_or_null(inv.libnvml_path);
    Json amd;
    amd["present"] = inv.amd_present;
    amd["absent_reason"] = inv.amd_present ? Json(nullptr) : Json(inv.amd_absent_reason);
    amd["library"] = text_or_null(inv.amd_library);
    amd["library_version"] = fact_json(inv.amd_library_version);
    amd["driver_version"] = fact_json(inv.amd_driver_version);
    amd["library_path"] = text_or_null(inv.libamd_path);
    d["amd"] = amd;
    return d;
}

Json amd_json(const InventoryGpu& g) {
    Json links = Json::array();
    for (const auto& l : g.xgmi_links) {
        Json jl;
        jl["link"] = l.link;
        jl["active"] = fact_json(l.active);
        jl["remote_pci_bus_id"] = fact_json(l.remote_pci_bus_id);
        jl["bit_rate_gbps"] = fact_json(l.bit_rate_gbps);
        jl["max_bandwidth_gbps"] = fact_json(l.max_bandwidth_gbps);
        links.push_back(jl);
    }
    Json ras = Json::array();
    for (const auto& b : g.ras_blocks)
        ras.push_back(Json{{"block", b.block},
                           {"correctable", fact_json(b.correctable)},
                           {"uncorrectable", fact_json(b.uncorrectable)},
                           {"deferred", fact_json(b.deferred)}});
    return Json{{"xgmi_links", links},
                {"xgmi_links_absent_reason", text_or_null(g.xgmi_links_absent_reason)},
                {"ras_blocks", ras}};
}

Json gpu_json(const InventoryGpu& g) {
    Json jg;
    jg["index"] = g.index;
    jg["lost"] = g.lost;
    for (const auto& f : g.facts) {
        jg[f.key] = fact_json(f.value);
        if (f.decoded) jg[f.key]["decoded"] = *f.decoded;
    }
    Json links = Json::array();
    for (const auto& l : g.nvlinks) {
        Json jl;
        jl["link"] = l.link;
        jl["active"] = fact_json(l.active);
        jl["remote_pci_bus_id"] = fact_json(l.remote_pci_bus_id);
        jl["version"] = fact_json(l.version);
        jl["remote_type"] = fact_json(l.remote_type);
        links.push_back(jl);
    }
    jg["nvlinks"] = links;
    jg["nvlinks_absent_reason"] = text_or_null(g.nvlinks_absent_reason);
    Json procs = Json::array();
    for (const auto& p : g.processes) {
        Json jp;
        jp["pid"] = p.pid;
        jp["name"] = p.name.empty() ? Json(nullptr) : Json(p.name);
        jp["type"] = p.type;
        jp["used_memory_bytes"] = fact_json(p.used_memory_bytes);
        procs.push_back(jp);
    }
    jg["processes"] = procs;
    jg["processes_absent_reason"] = text_or_null(g.processes_absent_reason);
    jg["errors"] = g.errors;
    if (!g.vendor.empty()) jg["vendor"] = g.vendor;
    if (g.vendor == "AMD") {
        const Json amd = amd_json(g);  // held: a range-for over a temporary's items() would dangle
        for (auto& [k, v] : amd.items()) jg[k] = v;
    }
    return jg;
}

// One "  label   value" line of the listing.
void add_line(std::string& out, std::string_view label, const std::string& value) {
    out += fmt::format("  {:<30} {}\n", label, value);
}

void render_amd_driver(const InventoryFacts& inv, const Style& st, std::string& out) {
    out += st.bold("AMD driver") + "\n";
    add_line(out, "amdgpu driver version", format_fact("amd_driver_version", inv.amd_driver_version));
    add_line(out, inv.amd_library + " version", format_fact("amd_library_version", inv.amd_library_version));
    if (!inv.libamd_path.empty())
        add_line(out, inv.amd_library == "ROCm SMI" ? "librocm_smi64" : "libamd_smi", inv.libamd_path);
}

void render_driver(const InventoryFacts& inv, const Style& st, std::string& out) {
    if (!inv.cuda_present && !inv.nvml_present && !inv.amd_present && !inv.amd_absent_reason.empty())
        out += "no GPU driver found: NVIDIA (" + inv.cuda_absent_reason + "), AMD (" + inv.amd_absent_reason + ")\n\n";
    else if (!inv.cuda_present && !inv.amd_present)
        out += "no NVIDIA driver found (" + inv.cuda_absent_reason + ")\n\n";
    if (inv.amd_present && !inv.cuda_present && !inv.nvml_present) {
        // An AMD box: NVIDIA's driver is absent by nature, said in one line.
        render_amd_driver(inv, st, out);
        add_line(out, "NVIDIA driver", "— (" + inv.cuda_absent_reason + ")");
        for (const auto& e : inv.errors) add_line(out, "problem", e);
        return;
    }
    out += st.bold("Driver") + "\n";
    add_line(out, "Driver version", format_fact("driver_version", inv.driver_version));
    std::string cuda = inv.cuda_driver_version ? cuda_version_text(*inv.cuda_driver_version)
                                               : "— (" + inv.cuda_driver_version.absent_reason + ")";
    add_line(out, "CUDA driver API", cuda);
    add_line(out, "NVML version", format_fact("nvml_version", inv.nvml_version));
    if (!inv.libcuda_path.empty()) add_line(out, "libcuda", inv.libcuda_path);
    if (!inv.libnvml_path.empty()) add_line(out, "libnvidia-ml", inv.libnvml_path);
    for (const auto& e : inv.errors) add_line(out, "problem", e);
    if (inv.amd_present) {
        out += '\n';
        render_amd_driver(inv, st, out);
    }
}

// AMD: the xGMI links and the RAS blocks' counts.
void render_amd_links(const InventoryGpu& g, std::string& out) {
    if (!g.xgmi_links_absent_reason.empty()) {
        add_line(out, "xGMI", "— (" + g.xgmi_links_absent_reason + ")");
    } else {
        add_line(out, "xGMI",
                 g.xgmi_links.empty() ? std::string("no links listed")
                                      : fmt::format("{} of {} links active", g.xgmi_links_active, g.xgmi_links.size()));
        for (const auto& l : g.xgmi_links)
            add_line(out, fmt::format("  link {}", l.link),
                     fmt::format("to {}: {}{}", format_fact("remote_pci_bus_id", l.remote_pci_bus_id),
                                 l.active ? (*l.active ? "active" : "DOWN (not trained)") : "state unread",
                                 l.bit_rate_gbps && *l.active ? fmt::format(", {} Gb/s", *l.bit_rate_gbps) : ""));
    }
    // Appended piece by piece: `"/" + std::string&&` draws a false -Wrestrict from GCC 12.
    std::string ras;
    for (const auto& b : g.ras_blocks) {
        auto n = [](const Fact<std::uint64_t>& f) { return f ? std::to_string(*f) : std::string("?"); };
        if (!ras.empty()) ras += ", ";
        ras += fmt::format("{} {}/{}", b.block, n(b.correctable), n(b.uncorrectable));
        if (b.deferred.value_or(0)) ras += fmt::format("/{} deferred", n(b.deferred));
    }
    add_line(out, "RAS (corrected/uncorrected)", ras.empty() ? std::string("no block with ECC enabled") : ras);
}

void render_links_and_processes(const InventoryGpu& g, std::string& out) {
    if (g.vendor == "AMD") {
        render_amd_links(g, out);
    } else if (!g.nvlinks_absent_reason.empty()) {
        add_line(out, "NVLink", "— (" + g.nvlinks_absent_reason + ")");
    } else {
        add_line(out, "NVLink", fmt::format("{} of {} links active", g.nvlinks_active, g.nvlinks.size()));
        for (const auto& l : g.nvlinks)
            if (l.active.value_or(false))
                add_line(out, fmt::format("  link {}", l.link),
                         fmt::format("NVLink {} to {} {}", l.version_name, l.remote_type.value_or("device"),
                                     format_fact("remote_pci_bus_id", l.remote_pci_bus_id)));
    }
    if (!g.processes_absent_reason.empty()) add_line(out, "Processes", "— (" + g.processes_absent_reason + ")");
    else if (g.processes.empty()) add_line(out, "Processes", "none");
    for (const auto& p : g.processes)
        add_line(out, fmt::format("  pid {}", p.pid),
                 fmt::format("{} {} {}", p.name.empty() ? "?" : p.name, p.type,
                             format_fact("used_memory_bytes", p.used_memory_bytes)));
}

// Appended piece by piece: `"\n" + std::string&&` draws a false -Wrestrict from GCC 12.
void render_gpu(const InventoryGpu& g, const Style& st, std::string& out) {
    out += '\n';
    out += st.bold(fmt::format("GPU {}", g.index));
    if (g.name) out += "  " + *g.name;
    if (g.lost) out += "  " + st.paint("LOST (fell off the bus)", "31");
    out += "\n";
    if (!g.vendor.empty()) add_line(out, "Vendor", g.vendor);
    for (const auto& f : g.facts) add_line(out, f.label, format_fact(f));
    render_links_and_processes(g, out);
    for (const auto& e : g.errors) add_line(out, "problem", e);
}

void render_topology(const InventoryFacts& inv, const Style& st, std::string& out) {
    out += '\n';
    out += st.bold("Topology");
    out += '\n';
    if (!inv.topology_absent_reason.empty()) add_line(out, "", "— (" + inv.topology_absent_reason + ")");
    if (inv.topology.empty()) return;
    out += "        ";
    for (std::size_t j = 0; j < inv.topology.size(); ++j) out += fmt::format("{:<6}", fmt::format("GPU{}", j));
    out += "\n";
    for (std::size_t i = 0; i < inv.topology.size(); ++i) {
        out += fmt::format("  {:<6}", fmt::format("GPU{}", i));
        for (const auto& c : inv.topology[i]) out += fmt::format("{:<6}", c);
        out += "\n";
    }
    out +=
        "  X = self, NV# = # NVLinks, PIX/PXB = PCIe switch(es), PHB = host bridge,\n"
        "  NODE = same NUMA node, SYS = across NUMA nodes\n";
    if (inv.amd_present)
        out +=
            "  XGMI = an xGMI link (AMD), XDOWN = an xGMI link that did not train,\n"
            "  PCIE n hops = joined through PCIe\n";
}

void render_software(const SoftwareFacts& sw, const Style& st, std::string& out) {
    if (sw.rows.empty() && sw.absent_reason.empty()) return;
    out += '\n';
    out += st.bold("Software") + "\n";
    if (!sw.absent_reason.empty()) add_line(out, "", "— (" + sw.absent_reason + ")");
    for (const auto& [label, value] : sw.rows) add_line(out, label, value);
    if (!sw.summary.empty()) add_line(out, "gpu.software", sw.verdict + ": " + sw.summary);
}

Json software_json(const SoftwareFacts& sw) {
    Json j;
    j["absent_reason"] = text_or_null(sw.absent_reason);
    j["verdict"] = text_or_null(sw.verdict);
    j["summary"] = text_or_null(sw.summary);
    Json rows = Json::object();
    for (const auto& [label, value] : sw.rows) rows[label] = value;
    j["versions"] = rows;
    j["findings"] = sw.findings;
    return j;
}

void render_fabric(const FabricInventory& fab, const Style& st, std::string& out) {
    if (fab.rows.empty() && fab.absent_reason.empty()) return;
    out += '\n';
    out += st.bold("RDMA fabric") + "\n";
    if (!fab.absent_reason.empty()) add_line(out, "", "— (" + fab.absent_reason + ")");
    for (const auto& [label, value] : fab.rows) add_line(out, label, value);
    if (!fab.summary.empty()) add_line(out, "host.fabric", fab.verdict + ": " + fab.summary);
    for (const auto& f : fab.findings) out += "  " + f + "\n";
}

Json fabric_json(const FabricInventory& fab) {
    Json j;
    j["absent_reason"] = text_or_null(fab.absent_reason);
    j["verdict"] = text_or_null(fab.verdict);
    j["summary"] = text_or_null(fab.summary);
    Json rows = Json::array();
    for (const auto& [label, value] : fab.rows) rows.push_back(Json{{"label", label}, {"value", value}});
    j["rows"] = rows;
    j["findings"] = fab.findings;
    return j;
}

void render_host(const MachineInfo& host, const Style& st, std::string& out) {
    out += '\n';
    out += st.bold("Host");
    out += '\n';
    auto opt = [&](const char* label, const auto& v) {
        if constexpr (std::is_same_v<std::decay_t<decltype(v)>, std::optional<std::string>>)
            add_line(out, label, v ? *v : "—");
        else add_line(out, label, v ? fmt::format("{}", *v) : "—");
    };
    opt("Hostname", host.hostname);
    opt("CPU", host.cpu_model);
    opt("Sockets", host.cpu_sockets);
    opt("Cores", host.cpu_cores);
    opt("Threads", host.cpu_threads);
    add_line(out, "Memory",
             host.memory_total_bytes
                 ? fmt::format("{:.1f} GiB", static_cast<double>(*host.memory_total_bytes) / (1ULL << 30))
                 : "—");
    opt("NUMA nodes", host.numa_nodes);
    opt("OS", host.os);
    opt("Kernel", host.kernel);
    opt("Virtualization", host.virtualization);
    opt("Container", host.container);
}

}  // namespace

Json inventory_to_json(const InventoryFacts& inv, const MachineInfo& host, const FabricInventory& fabric) {
    Json j;
    j["driver"] = driver_json(inv);
    Json gpus = Json::array();
    for (const auto& g : inv.gpus) gpus.push_back(gpu_json(g));
    j["gpus"] = gpus;
    Json topo;
    topo["matrix"] = inv.topology;
    topo["absent_reason"] = text_or_null(inv.topology_absent_reason);
    j["topology"] = topo;
    j["software"] = software_json(inv.software);
    j["fabric"] = fabric_json(fabric);
    j["host"] = to_json(host);
    j["errors"] = inv.errors;
    return j;
}

std::string render_inventory(const InventoryFacts& inv, const MachineInfo& host, const Style& st,
                             const FabricInventory& fabric) {
    std::string out;
    render_driver(inv, st, out);
    for (const auto& g : inv.gpus) render_gpu(g, st, out);
    if (!inv.gpus.empty()) render_topology(inv, st, out);
    render_software(inv.software, st, out);
    render_fabric(fabric, st, out);
    render_host(host, st, out);
    return out;
}

}  // namespace gpuvet
