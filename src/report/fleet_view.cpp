#include "report/fleet_view.hpp"

#include <sstream>

#include "core/strings.hpp"
#include "core/text_safety.hpp"
#include "report/fleet_fabric_view.hpp"
#include "report/html_style.hpp"
#include "report/json.hpp"
#include "report/slurm_json.hpp"
#include "report/svg.hpp"
#include "report/text_layout.hpp"

namespace gpuvet {

namespace {

const char* kRule =
    "outliers: per figure, each node's worst GPU against the median of a baseline (nodes that passed, their own "
    "outliers dropped round by round); outlier when the modified z-score 0.6745*|x - median|/MAD is above 3.5 "
    "(Iglewicz-Hoaglin; MAD at least 1% of the median) and it lies more than 5% from the median (SuperBench)";

std::string gpu_word(const std::optional<int>& gpu) { return gpu ? " GPU " + std::to_string(*gpu) : ""; }

std::string where(const FleetOutlier& o) { return o.node + gpu_word(o.gpu); }

std::string percent(double fraction) {
    std::string s = format_number(fraction * 100, 3);
    return (fraction >= 0 ? "+" : "") + s + "%";
}

std::string outlier_text(const FleetOutlier& o) {
    return where(o) + ": " + o.label + " " + format_number(o.value, 4) + " " + o.unit + " (" +
           (o.low ? "low" : "high") + "; fleet median " + format_number(o.median, 4) + ", " + percent(o.gap_fraction) +
           ")";
}

std::string metric_text(const FleetMetric& m) {
    return m.label + ": median " + format_number(m.median, 4) + " " + m.unit + ", MAD " + format_number(m.mad, 3) +
           ", range " + format_number(m.min, 4) + "-" + format_number(m.max, 4) + " over " + std::to_string(m.samples) +
           " nodes (baseline " + std::to_string(m.baseline_nodes) + ")";
}

std::string figure_text(const FleetFigure& x) {
    return x.label + gpu_word(x.gpu) + " " + format_number(x.value, 4) + " " + x.unit + " (floor " +
           format_number(*x.floor, 4) + ")";
}

// "NO-GO  gpu.health GPU 1 FAIL: ...; worst: BF16 GEMM GPU 1 592 TFLOPS (floor 700)".
std::string node_text(const Fleet& f, const FleetNode& n) {
    std::string out;
    auto why = node_problems(f, n);
    for (std::size_t i = 0; i < why.size(); ++i) out += (i ? "; " : "") + why[i];
    if (n.worst_vs_floor) out += std::string(out.empty() ? "" : "; ") + "worst: " + figure_text(*n.worst_vs_floor);
    for (auto& d : n.in.drift) out += std::string(out.empty() ? "" : "; ") + "against its own history: " + d;
    return out;
}

Json figure_json(const FleetFigure& x) {
    return Json{{"metric", x.metric},
                {"gpu", x.gpu ? Json(*x.gpu) : Json(nullptr)},
                {"value", x.value},
                {"unit", x.unit},
                {"floor", x.floor ? Json(*x.floor) : Json(nullptr)}};
}

Json node_json(const Fleet& f, const FleetNode& n) {
    return Json{{"name", n.in.name},
                {"status", to_string(n.status)},
                {"verdict", n.in.problem.empty() || n.in.verdict != RunVerdict::CouldNotRun ? to_string(n.in.verdict)
                                                                                            : Json(nullptr)},
                {"problem", n.in.problem.empty() ? Json(nullptr) : Json(n.in.problem)},
                {"report", n.in.path.empty() ? Json(nullptr) : Json(n.in.path)},
                {"hostname", n.in.hostname.empty() ? Json(nullptr) : Json(n.in.hostname)},
                {"tool_version", n.in.tool_version.empty() ? Json(nullptr) : Json(n.in.tool_version)},
                {"slurm", n.in.slurm ? slurm_to_json(*n.in.slurm) : Json(nullptr)},
                {"gpus", n.in.gpu_ids},
                {"failed", n.in.failed},
                {"drift", n.in.drift},
                {"worst_vs_floor", n.worst_vs_floor ? figure_json(*n.worst_vs_floor) : Json(nullptr)},
                {"nhc", nhc_line(f, n)}};
}

}  // namespace

std::string render_fleet_nhc(const Fleet& f) {
    std::string out;
    for (auto& n : f.nodes) out += nhc_line(f, n) + "\n";
    return out;
}

std::string render_fleet_terminal(const Fleet& f, const Style& st) {
    std::ostringstream o;
    std::size_t width = 4;
    for (auto& n : f.nodes) width = std::max(width, n.in.name.size());
    o << st.bold("gpuvet fleet") << " · " << f.nodes.size() << " nodes of " << f.gpu_model << "\n\n";
    for (auto& n : f.nodes) {
        std::string status = to_string(n.status);
        Verdict v = n.status == NodeStatus::Go     ? Verdict::Pass
                    : n.status == NodeStatus::NoGo ? Verdict::Fail
                                                   : Verdict::Error;
        std::string head = n.in.name + std::string(width - n.in.name.size() + 2, ' ');
        o << wrap(head + st.paint(status, v == Verdict::Pass ? "32" : "31") + std::string(7 - status.size(), ' '),
                  node_text(f, n), st.width, int(width) + 9)
          << "\n";
    }
    o << "\n" << st.bold("Outliers") << (f.outliers.empty() ? ": none" : "") << "\n";
    for (auto& x : f.outliers) o << wrap("  ", outlier_text(x), st.width, 4) << "\n";
    o << "\n" << st.bold("Figures") << (f.metrics.empty() ? ": none measured on 3 or more nodes" : "") << "\n";
    for (auto& m : f.metrics) o << wrap("  ", metric_text(m), st.width, 4) << "\n";
    for (auto& n : f.notes) o << wrap("", n, st.width, 2) << "\n";
    o << st.dim(wrap("", kRule, st.width, 0)) << "\n";
    if (f.fabric) o << fabric_terminal(*f.fabric, st) << "\n";
    int code = fleet_exit_code(f);
    o << st.bold(code == 0   ? "Fleet: GO"
                 : code == 1 ? "Fleet: NO-GO"
                             : "Fleet: INCOMPLETE (a node did not report)")
      << "\n";
    return o.str();
}

Json fleet_to_json(const Fleet& f) {
    Json nodes = Json::array(), metrics = Json::array(), outliers = Json::array();
    for (auto& n : f.nodes) nodes.push_back(node_json(f, n));
    for (auto& m : f.metrics)
        metrics.push_back(Json{{"id", m.id},
                               {"label", m.label},
                               {"unit", m.unit},
                               {"samples", m.samples},
                               {"baseline_nodes", m.baseline_nodes},
                               {"rounds", m.rounds},
                               {"median", m.median},
                               {"mad", m.mad},
                               {"mad_used", m.mad_used},
                               {"min", m.min},
                               {"max", m.max}});
    for (auto& x : f.outliers)
        outliers.push_back(Json{{"node", x.node},
                                {"gpu", x.gpu ? Json(*x.gpu) : Json(nullptr)},
                                {"metric", x.metric},
                                {"value", x.value},
                                {"median", x.median},
                                {"gap_fraction", x.gap_fraction},
                                {"modified_z", x.modified_z},
                                {"side", x.low ? "low" : "high"}});
    int code = fleet_exit_code(f);
    return Json{{"fleet_verdict", code == 0   ? "GO"
                                  : code == 1 ? "NO-GO"
                                              : "INCOMPLETE"},
                {"exit_code", code},
                {"gpu_model", f.gpu_model},
                {"rule", kRule},
                {"nodes", nodes},
                {"metrics", metrics},
                {"outliers", outliers},
                {"notes", f.notes},
                {"fabric", f.fabric ? fabric_json(*f.fabric) : Json(nullptr)}};
}

std::string render_fleet_json(const Fleet& f, const Envelope& e) { return render_document(e, fleet_to_json(f)); }

std::string render_fleet_markdown(const Fleet& f) {
    std::ostringstream o;
    // Every text from the reports (node names, problems, labels) through markdown_text: it can
    // neither end its cell nor open raw HTML.
    o << "# gpuvet fleet: " << f.nodes.size() << " nodes of " << markdown_text(f.gpu_model)
      << "\n\n| node | status | why |\n|---|---|---|\n";
    for (auto& n : f.nodes)
        o << "| " << markdown_text(n.in.name) << " | " << to_string(n.status) << " | " << markdown_text(node_text(f, n))
          << " |\n";
    o << "\n## Outliers\n\n";
    if (f.outliers.empty()) o << "None.\n";
    for (auto& x : f.outliers) o << "- " << markdown_text(outlier_text(x)) << "\n";
    o << "\n## Figures\n\n| figure | median | MAD | min | max | nodes | baseline |\n|---|---|---|---|---|---|---|\n";
    for (auto& m : f.metrics)
        o << "| " << markdown_text(m.label + " (" + m.unit + ")") << " | " << format_number(m.median, 4) << " | "
          << format_number(m.mad, 3) << " | " << format_number(m.min, 4) << " | " << format_number(m.max, 4) << " | "
          << m.samples << " | " << m.baseline_nodes << " |\n";
    if (!f.notes.empty()) o << "\n";
    for (auto& n : f.notes) o << "- " << markdown_text(n) << "\n";
    o << "\n_" << kRule << "_\n";
    if (f.fabric) o << fabric_markdown(*f.fabric);
    return o.str();
}

std::string render_fleet_html(const Fleet& f) {
    std::string nodes, metrics, outliers;
    for (auto& n : f.nodes)
        nodes += "<tr><td style=\"white-space:nowrap\"><code>" + escape_html(n.in.name) +
                 "</code></td><td style=\"white-space:nowrap\" class=\"" +
                 (n.status == NodeStatus::Go ? "v-pass" : "v-fail") + "\">" + to_string(n.status) + "</td><td>" +
                 escape_html(node_text(f, n)) + "</td></tr>";
    for (auto& m : f.metrics)
        metrics += "<tr><td>" + escape_html(m.label + " (" + m.unit + ")") + "</td><td class=\"num\">" +
                   escape_html(format_number(m.median, 4)) + "</td><td class=\"num\">" +
                   escape_html(format_number(m.mad, 3)) + "</td><td class=\"num\">" +
                   escape_html(format_number(m.min, 4) + "-" + format_number(m.max, 4)) + "</td><td class=\"num\">" +
                   std::to_string(m.samples) + "</td></tr>";
    for (auto& x : f.outliers) outliers += "<li>" + escape_html(outlier_text(x)) + "</li>";
    for (auto& n : f.notes) outliers += "<li>" + escape_html(n) + "</li>";
    int code = fleet_exit_code(f);
    std::string banner = code == 0 ? "GO" : code == 1 ? "NO-GO" : "INCOMPLETE";
    return "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" "
           "content=\"width=device-width, initial-scale=1\"><meta http-equiv=\"Content-Security-Policy\" "
           "content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\"><meta name=\"color-scheme\" "
           "content=\"light dark\"><title>gpuvet fleet</title><style>" +
           std::string(kHtmlStyle) + "</style></head><body><header id=\"verdict\" class=\"banner " +
           (code == 0 ? "pass" : "fail") + "\"><h1>" + banner + ": " + std::to_string(f.nodes.size()) + " nodes of " +
           escape_html(f.gpu_model) +
           "</h1></header><section id=\"nodes\"><h2>Nodes</h2><div class=\"scroll\"><table><thead><tr><th>node</th>"
           "<th>status</th><th>why</th></tr></thead><tbody>" +
           nodes + "</tbody></table></div></section><section id=\"outliers\"><h2>Outliers</h2><ul>" +
           (outliers.empty() ? "<li>none</li>" : outliers) + "</ul><p class=\"note\">" + escape_html(kRule) +
           "</p></section><section id=\"metrics\"><h2>Figures</h2><div "
           "class=\"scroll\"><table><thead><tr><th>figure</th>"
           "<th>median</th><th>MAD</th><th>range</th><th>nodes</th></tr></thead><tbody>" +
           metrics + "</tbody></table></div></section>" + (f.fabric ? fabric_html(*f.fabric) : std::string()) +
           "</body></html>\n";
}

}  // namespace gpuvet
