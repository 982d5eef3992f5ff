#include "report/fleet_fabric_view.hpp"

#include <sstream>

#include "core/strings.hpp"
#include "core/text_safety.hpp"
#include "report/json.hpp"
#include "report/svg.hpp"
#include "report/text_layout.hpp"

namespace gpuvet {

namespace {

// "84.3 GB/s (expected 94, PASS from 84.6, FAIL below 63)".
std::string figure_text(const Measurement& m) {
    std::string s =
        m.label + ": " + (m.value ? format_number(*m.value, 4) + " " + m.unit : "absent (" + m.absent_reason + ")");
    if (m.reference && m.reference->spec && m.value) {
        const Reference& r = *m.reference;
        s += " (expected " + format_number(*r.spec, 4) + " " + m.unit;
        if (r.warn_below) s += ", PASS from " + format_number(*r.warn_below, 4);
        if (r.fail_below) s += ", FAIL below " + format_number(*r.fail_below, 4);
        s += "; " + std::string(to_string(grade(*m.value, r))) + ")";
    }
    return s;
}

std::string node_text(const FleetFabricNode& n) {
    std::string s = n.node + ": " + std::to_string(n.rdma_nics) + " RDMA NIC(s)" +
                    (n.nic_gbitps ? " at " + format_number(*n.nic_gbitps) + " Gbit/s" : std::string()) + ", " +
                    std::to_string(n.gpus) + " GPU(s); NCCL " +
                    (n.network.empty() ? std::string("(no log)") : "network " + n.network);
    if (!n.nccl_net.empty()) s += " (NCCL_NET=" + n.nccl_net + " asked)";
    if (n.net_channels > 0)
        s += ", " + std::to_string(n.gdr_channels) + " of " + std::to_string(n.net_channels) +
             " inter-node channels with GPUDirect RDMA";
    if (!n.nics.empty()) {
        s += ", NICs ";
        for (std::size_t i = 0; i < n.nics.size(); ++i) s += (i ? "," : "") + n.nics[i];
    }
    return s;
}

std::string row_text(const FleetFabricRow& r) {
    return format_bytes(double(r.bytes)) + ": busbw " + format_number(r.busbw_gbps, 4) + " GB/s, algbw " +
           format_number(r.algbw_gbps, 4) + " GB/s, " + std::to_string(r.wrong) + " wrong of " +
           std::to_string(r.checked) + " checked";
}

// "rail 1: mlx5_1 on n1 -> mlx5_1 on n2: 23.1 GB/s of 25 (GPU memory, 8 MiB checked, 0 wrong)".
std::string rdma_text(const FleetRdmaLink& l) {
    std::string s = "rail " + std::to_string(l.rail) + ": " + l.from_nic + " on " + l.from_node + " -> " +
                    (l.to_nic.empty() ? std::string("?") : l.to_nic) + " on " +
                    (l.to_node.empty() ? std::string("?") : l.to_node) + ": ";
    if (!l.gbps) return s + "not measured (" + l.problem + ")";
    s += format_number(*l.gbps, 4) + " GB/s";
    if (l.expected_gbps) s += " of " + format_number(*l.expected_gbps, 4) + " GB/s data rate";
    s += " (" + l.memory + " memory: " + l.memory_why;
    if (l.verified_bytes)
        s += "; " + std::to_string(l.wrong_bytes) + " of " + format_bytes(double(l.verified_bytes)) + " wrong";
    return s + ")";
}

std::string esc(const std::string& s) { return escape_html(s); }

}  // namespace

std::string fabric_terminal(const FleetFabric& f, const Style& st) {
    std::ostringstream o;
    const CheckResult& r = f.result;
    o << "\n" << st.bold("Fabric") << "  " << st.verdict(r.verdict) << "  " << r.summary << "\n";
    for (const Measurement& m : r.measurements) o << wrap("  ", figure_text(m), st.width, 4) << "\n";
    for (const Finding& x : r.findings)
        o << wrap("  " + std::string(to_string(x.verdict)) + ": ", x.text, st.width, 4) << "\n";
    if (!f.sweep.empty()) o << "  " << st.bold("Sweep, all nodes") << "\n";
    for (const FleetFabricRow& row : f.sweep) o << wrap("    ", row_text(row), st.width, 6) << "\n";
    if (!f.rdma.empty()) o << "  " << st.bold("RDMA write per NIC") << "\n";
    for (const FleetRdmaLink& l : f.rdma) o << wrap("    ", rdma_text(l), st.width, 6) << "\n";
    for (const FleetFabricNode& n : f.nodes) o << wrap("  ", node_text(n), st.width, 4) << "\n";
    for (const std::string& n : f.notes) o << wrap("  note: ", n, st.width, 4) << "\n";
    if (!f.nccl.empty()) o << st.dim("  NCCL: " + f.nccl) << "\n";
    return o.str();
}

nlohmann::ordered_json fabric_json(const FleetFabric& f) {
    Json sweep = Json::array(), nodes = Json::array(), blamed = Json::array(), figures = Json::array(),
         rdma = Json::array();
    auto opt = [](const std::optional<double>& v) { return v ? Json(*v) : Json(nullptr); };
    for (const FleetRdmaLink& l : f.rdma)
        rdma.push_back(Json{{"rail", l.rail},
                            {"from_node", l.from_node},
                            {"from_nic", l.from_nic},
                            {"to_node", l.to_node},
                            {"to_nic", l.to_nic},
                            {"gbps", opt(l.gbps)},
                            {"expected_gbps", opt(l.expected_gbps)},
                            {"memory", l.memory.empty() ? Json(nullptr) : Json(l.memory)},
                            {"memory_why", l.memory_why},
                            {"verified_bytes", l.verified_bytes},
                            {"wrong_bytes", l.wrong_bytes},
                            {"problem", l.problem.empty() ? Json(nullptr) : Json(l.problem)}});
    for (const FleetFabricRow& r : f.sweep)
        sweep.push_back(Json{{"bytes", r.bytes},
                             {"busbw_gbps", r.busbw_gbps},
                             {"algbw_gbps", r.algbw_gbps},
                             {"checked", r.checked},
                             {"wrong", r.wrong}});
    for (const FleetFabricNode& n : f.nodes)
        nodes.push_back(Json{{"node", n.node},
                             {"gpus", n.gpus},
                             {"rdma_nics", n.rdma_nics},
                             {"nic_gbitps", n.nic_gbitps ? Json(*n.nic_gbitps) : Json(nullptr)},
                             {"network", n.network.empty() ? Json(nullptr) : Json(n.network)},
                             {"nccl_net", n.nccl_net.empty() ? Json(nullptr) : Json(n.nccl_net)},
                             {"nics", n.nics},
                             {"net_channels", n.net_channels},
                             {"gdr_channels", n.gdr_channels},
                             {"hints", n.hints}});
    for (auto& [node, text] : f.blamed) blamed.push_back(Json{{"node", node}, {"finding", text}});
    for (auto& [node, v] : f.node_busbw_gbps) figures.push_back(Json{{"node", node}, {"busbw_gbps", v}});
    return Json{{"result", to_json(f.result)}, {"sweep", sweep}, {"nodes", nodes}, {"blamed", blamed},
                {"node_figures", figures},     {"rdma", rdma},   {"nccl", f.nccl}, {"notes", f.notes}};
}

std::string fabric_markdown(const FleetFabric& f) {
    std::ostringstream o;
    const CheckResult& r = f.result;
    o << "\n## Fabric: " << to_string(r.verdict) << "\n\n" << markdown_text(r.summary) << "\n\n";
    for (const Measurement& m : r.measurements) o << "- " << markdown_text(figure_text(m)) << "\n";
    if (!r.findings.empty()) o << "\n";
    for (const Finding& x : r.findings) o << "- **" << to_string(x.verdict) << "**: " << markdown_text(x.text) << "\n";
    if (!f.sweep.empty()) o << "\n| size | busbw GB/s | algbw GB/s | wrong | checked |\n|---|---|---|---|---|\n";
    for (const FleetFabricRow& row : f.sweep)
        o << "| " << format_bytes(double(row.bytes)) << " | " << format_number(row.busbw_gbps, 4) << " | "
          << format_number(row.algbw_gbps, 4) << " | " << row.wrong << " | " << row.checked << " |\n";
    o << "\n";
    if (!f.rdma.empty()) o << "RDMA write per NIC:\n\n";
    for (const FleetRdmaLink& l : f.rdma) o << "- " << markdown_text(rdma_text(l)) << "\n";
    if (!f.rdma.empty()) o << "\n";
    for (const FleetFabricNode& n : f.nodes) o << "- " << markdown_text(node_text(n)) << "\n";
    for (const std::string& n : f.notes) o << "- note: " << markdown_text(n) << "\n";
    return o.str();
}

std::string fabric_html(const FleetFabric& f) {
    const CheckResult& r = f.result;
    std::string figures, findings, sweep, nodes, rdma;
    for (const FleetRdmaLink& l : f.rdma) rdma += "<li>" + esc(rdma_text(l)) + "</li>";
    for (const Measurement& m : r.measurements) figures += "<li>" + esc(figure_text(m)) + "</li>";
    for (const Finding& x : r.findings)
        findings += "<li class=\"" + std::string(x.verdict == Verdict::Pass ? "v-pass" : "v-fail") + "\"><b>" +
                    to_string(x.verdict) + "</b>: " + esc(x.text) + "</li>";
    for (const FleetFabricRow& row : f.sweep)
        sweep += "<tr><td>" + esc(format_bytes(double(row.bytes))) + "</td><td class=\"num\">" +
                 esc(format_number(row.busbw_gbps, 4)) + "</td><td class=\"num\">" +
                 esc(format_number(row.algbw_gbps, 4)) + "</td><td class=\"num\">" + std::to_string(row.wrong) +
                 "</td><td class=\"num\">" + std::to_string(row.checked) + "</td></tr>";
    for (const FleetFabricNode& n : f.nodes) nodes += "<li>" + esc(node_text(n)) + "</li>";
    for (const std::string& n : f.notes) nodes += "<li>note: " + esc(n) + "</li>";
    return "<section id=\"fabric\"><h2>Fabric: " + std::string(to_string(r.verdict)) + "</h2><p>" + esc(r.summary) +
           "</p><ul>" + figures + "</ul><ul>" + findings + "</ul>" +
           (sweep.empty() ? std::string()
                          : "<div class=\"scroll\"><table><thead><tr><th>size</th><th>busbw GB/s</th><th>algbw "
                            "GB/s</th><th>wrong</th><th>checked</th></tr></thead><tbody>" +
                                sweep + "</tbody></table></div>") +
           (rdma.empty() ? std::string() : "<h3>RDMA write per NIC</h3><ul>" + rdma + "</ul>") + "<ul>" + nodes +
           "</ul>" + (f.nccl.empty() ? std::string() : "<p class=\"note\">NCCL: " + esc(f.nccl) + "</p>") +
           "</section>";
}

}  // namespace gpuvet
