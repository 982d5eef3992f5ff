#include "report/fleet_view.hpp"

#include <sstream>

#include "core/strings.hpp"
#include "report/html_style.hpp"
#include "report/json.hpp"
#include "report/svg.hpp"
#include "report/terminal.hpp"

namespace gpuvet {

namespace {

const char* kRule =
    "outlier: modified z-score 0.6745*|x - median|/MAD above 3.5 (Iglewicz-Hoaglin) and more than 5% from the median";

std::string where(const FleetOutlier& o) { return o.node + (o.gpu ? " GPU " + std::to_string(*o.gpu) : ""); }

std::string outlier_text(const FleetOutlier& o) {
    return where(o) + ": " + o.label + " " + format_number(o.value, 4) + " " + o.unit + " (" +
           (o.low ? "low" : "high") + "; median " + format_number(o.median, 4) + ")";
}

std::string metric_text(const FleetMetric& m) {
    return m.label + ": median " + format_number(m.median, 4) + " " + m.unit + ", MAD " + format_number(m.mad, 3) +
           ", range " + format_number(m.min, 4) + "-" + format_number(m.max, 4) + " over " + std::to_string(m.samples);
}

}  // namespace

std::string render_fleet_nhc(const Fleet& f) {
    std::string out;
    for (auto& n : f.nodes) out += nhc_line(f, n) + "\n";
    return out;
}

std::string render_fleet_terminal(const Fleet& f, const Style& st) {
    std::ostringstream o;
    o << st.bold("gpuvet compare --fleet") << " · " << f.nodes.size() << " nodes of " << f.gpu_model << "\n\n";
    o << render_fleet_nhc(f) << "\n" << st.bold("Metrics") << "\n";
    for (auto& m : f.metrics) o << wrap("  ", metric_text(m), st.width, 4) << "\n";
    o << "\n" << st.bold("Outliers") << (f.outliers.empty() ? ": none" : "") << "\n";
    for (auto& x : f.outliers) o << wrap("  ", outlier_text(x), st.width, 4) << "\n";
    o << st.dim(wrap("", kRule, st.width, 0)) << "\n";
    return o.str();
}

std::string render_fleet_json(const Fleet& f, const Envelope& e) {
    Json nodes = Json::array(), metrics = Json::array(), outliers = Json::array();
    for (auto& n : f.nodes)
        nodes.push_back(Json{{"name", n.name},
                             {"path", n.path},
                             {"verdict", to_string(n.verdict)},
                             {"failed", n.failed},
                             {"nhc", nhc_line(f, n)}});
    for (auto& m : f.metrics)
        metrics.push_back(Json{{"id", m.id},
                               {"label", m.label},
                               {"unit", m.unit},
                               {"samples", m.samples},
                               {"median", m.median},
                               {"mad", m.mad},
                               {"min", m.min},
                               {"max", m.max}});
    for (auto& x : f.outliers)
        outliers.push_back(Json{{"node", x.node},
                                {"gpu", x.gpu ? Json(*x.gpu) : Json(nullptr)},
                                {"metric", x.metric},
                                {"value", x.value},
                                {"median", x.median},
                                {"side", x.low ? "low" : "high"}});
    Json body{
        {"gpu_model", f.gpu_model}, {"rule", kRule}, {"nodes", nodes}, {"metrics", metrics}, {"outliers", outliers}};
    return render_document(e, body);
}

std::string render_fleet_markdown(const Fleet& f) {
    std::ostringstream o;
    o << "# gpuvet fleet: " << f.nodes.size() << " nodes of " << f.gpu_model << "\n\n```\n"
      << render_fleet_nhc(f)
      << "```\n\n## Metrics\n\n| metric | median | MAD | min | max | samples |\n|---|---|---|---|---|---|\n";
    for (auto& m : f.metrics)
        o << "| " << m.label << " (" << m.unit << ") | " << format_number(m.median, 4) << " | "
          << format_number(m.mad, 3) << " | " << format_number(m.min, 4) << " | " << format_number(m.max, 4) << " | "
          << m.samples << " |\n";
    o << "\n## Outliers\n\n";
    if (f.outliers.empty()) o << "None.\n";
    for (auto& x : f.outliers) o << "- " << outlier_text(x) << "\n";
    o << "\n_" << kRule << "_\n";
    return o.str();
}

std::string render_fleet_html(const Fleet& f) {
    std::string nodes, metrics, outliers;
    for (auto& n : f.nodes) {
        std::string line = nhc_line(f, n);
        bool ok = line.find("| Healthy") != std::string::npos;
        nodes += "<tr><td><code>" + escape_html(n.name) + "</code></td><td class=\"" + (ok ? "v-pass" : "v-fail") +
                 "\">" + escape_html(line.substr(n.name.size() + 3)) + "</td></tr>";
    }
    for (auto& m : f.metrics)
        metrics += "<tr><td>" + escape_html(m.label + " (" + m.unit + ")") + "</td><td class=\"num\">" +
                   escape_html(format_number(m.median, 4)) + "</td><td class=\"num\">" +
                   escape_html(format_number(m.mad, 3)) + "</td><td class=\"num\">" +
                   escape_html(format_number(m.min, 4) + "-" + format_number(m.max, 4)) + "</td><td class=\"num\">" +
                   std::to_string(m.samples) + "</td></tr>";
    for (auto& x : f.outliers) outliers += "<li>" + escape_html(outlier_text(x)) + "</li>";
    bool healthy = f.outliers.empty();
    for (auto& n : f.nodes) healthy = healthy && n.failed.empty();
    return "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" "
           "content=\"width=device-width, initial-scale=1\"><meta http-equiv=\"Content-Security-Policy\" "
           "content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\"><meta name=\"color-scheme\" "
           "content=\"light dark\"><title>gpuvet fleet</title><style>" +
           std::string(kHtmlStyle) + "</style></head><body><header id=\"verdict\" class=\"banner " +
           (healthy ? "pass" : "fail") + "\"><h1>" + std::to_string(f.nodes.size()) + " nodes of " +
           escape_html(f.gpu_model) +
           "</h1></header><section id=\"nodes\"><h2>Nodes</h2><div class=\"scroll\"><table>" + nodes +
           "</table></div></section><section id=\"outliers\"><h2>Outliers</h2><ul>" +
           (outliers.empty() ? "<li>none</li>" : outliers) + "</ul><p class=\"note\">" + escape_html(kRule) +
           "</p></section><section id=\"metrics\"><h2>Metrics</h2><div "
           "class=\"scroll\"><table><thead><tr><th>metric</th>"
           "<th>median</th><th>MAD</th><th>range</th><th>samples</th></tr></thead><tbody>" +
           metrics + "</tbody></table></div></section></body></html>\n";
}

}  // namespace gpuvet
