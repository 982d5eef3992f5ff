#include "report/run_html.hpp"

#include <cstdio>
#include <sstream>

#include "core/strings.hpp"
#include "report/html_sections.hpp"
#include "report/run_figures.hpp"
#include "report/svg.hpp"
#include "core/units.hpp"

namespace gpuvet {

std::string run_figure_text(double v, double scale, int decimals) {
    return measured(v) ? format_fixed(v / scale, decimals) : "—";
}

namespace {

std::string e(std::string_view s) { return escape_html(s); }

// high: the job loses most of its time (red); moderate: amber; information or nothing: green.
const char* severity_class(const RuleFinding* f) {
    if (!f) return "pass";
    if (f->severity == RuleSeverity::kHigh) return "fail";
    if (f->severity == RuleSeverity::kModerate) return "warn";
    return "pass";
}

std::string joined(const std::vector<std::string>& words) {
    std::string s;
    for (const std::string& w : words) s += (s.empty() ? "" : " ") + w;
    return s;
}

std::string finding_body(const RuleFinding& f) {
    return "<p>" + e(f.message) + "</p><p><b>What to do:</b> " + e(f.action) +
           "</p><p class=\"note\">Thresholds and source: " + e(f.source) + "</p>";
}

std::string seed_line(const Diagnosis& d) {
    std::string s = "GPU utilization peak ≥ 90 %: ";
    if (d.seed_peak_reached)
        s += std::string(*d.seed_peak_reached ? "reached" : "not reached") + " (" +
             run_figure_text(d.seed_peak_percent, 1, 0) + " %)";
    else s += "not judged (no GPU utilization was measured)";
    return "<p id=\"seed\" data-reached=\"" +
           std::string(!d.seed_peak_reached   ? "unknown"
                       : *d.seed_peak_reached ? "true"
                                              : "false") +
           "\">" + e(s) + "</p>";
}

std::string verdict(const RunResult& r) {
    const Diagnosis& d = r.diagnosis;
    const RuleFinding* p = d.primary ? &*d.primary : nullptr;
    std::string head = p ? "Verdict: " + p->title : "Verdict: no bottleneck rule fired";
    std::string out = "<header id=\"verdict\" class=\"banner " + std::string(severity_class(p)) + "\" data-verdict=\"" +
                      e(p ? p->id : "none") + "\"><h1>" + e(head) + "</h1>";
    if (p)
        out +=
            "<p>" + e(std::string(to_string(p->severity)) + ", rule " + p->id + ", " + party_words(p->party)) + "</p>";
    out += "<p>gpuvet run: <code>" + e(joined(r.command)) + "</code></p></header>";
    out += "<section id=\"diagnosis\">";
    if (p)
        out += "<article class=\"finding " + std::string(severity_class(p)) + "\" id=\"primary\"><h3>" +
               e(p->id + " " + p->title) + "</h3>" + finding_body(*p) + "</article>";
    out += seed_line(d);
    if (!d.others.empty()) {
        out += "<h2>Also found</h2>";
        for (const RuleFinding& f : d.others)
            out += "<article class=\"finding " + std::string(severity_class(&f)) + "\"><h3>" +
                   e(f.id + " " + f.title + " (" + to_string(f.severity) + ")") + "</h3>" + finding_body(f) +
                   "</article>";
    }
    for (const std::string& n : d.not_judged) out += "<p class=\"note\">Not judged: " + e(n) + "</p>";
    return out + "</section>";
}

std::string job(const RunResult& r) {
    std::vector<std::pair<std::string, std::string>> rows = {
        {"command", joined(r.command)},
        {"wall time", run_figure_text(r.wall_s, 1, 1) + " s"},
        {"exit code", std::to_string(r.exit_code)},
        {"steady window", run_figure_text(r.window_start_s, 1, 1) + "–" + run_figure_text(r.window_end_s, 1, 1) + " s" +
                              (r.window_rule.empty() ? "" : ": " + r.window_rule)}};
    if (!r.tag.empty()) rows.insert(rows.begin() + 1, {"tag", r.tag});
    if (!r.note.empty()) rows.insert(rows.begin() + 1, {"note", r.note});
    if (!r.no_gpu_reason.empty()) rows.push_back({"GPUs", "none visible (" + r.no_gpu_reason + "): host side only"});
    for (const std::string& n : r.notes) rows.push_back({"note", n});
    std::string out = "<section id=\"job\"><h2>The job</h2><div class=\"scroll\"><table>";
    for (auto& [k, v] : rows) out += "<tr><th>" + e(k) + "</th><td>" + e(v) + "</td></tr>";
    return out + "</table></div></section>";
}

template <class Summary>
std::string stat_cells(const Summary& s, const RunFigure<Summary>& f) {
    const Stat& st = s.*(f.stat);
    std::string out;
    for (double v : {st.mean, st.p5, st.p95})
        out += "<td class=\"num\">" + e(run_figure_text(v, f.scale, f.decimals)) + "</td>";
    return out;
}

std::string gpu_table(const RunResult& r) {
    if (r.gpus.empty()) return {};
    std::string head1 = "<tr><th rowspan=\"2\">figure</th>", head2 = "<tr>";
    for (const GpuRunSummary& g : r.gpus) {
        head1 += "<th colspan=\"3\">GPU " + std::to_string(g.facts.index) +
                 (g.facts.name.empty() ? "" : " <small>" + e(g.facts.name) + "</small>") + "</th>";
        head2 += "<th>mean</th><th>p5</th><th>p95</th>";
    }
    std::string rows;
    for (const auto& f : run_gpu_figures()) {
        bool any = false;
        for (const GpuRunSummary& g : r.gpus) any = any || (g.*(f.stat)).measured();
        if (!any) continue;  // a signal no GPU measured is listed under "Not measured", not as a row of dashes
        rows += "<tr><td>" + e(f.label) + "</td>";
        for (const GpuRunSummary& g : r.gpus) rows += stat_cells(g, f);
        rows += "</tr>";
    }
    return "<section id=\"gpus\"><h2>GPUs over the steady window</h2><div class=\"scroll\"><table "
           "class=\"stats\"><thead>" +
           head1 + "</tr>" + head2 + "</tr></thead><tbody>" + rows + "</tbody></table></div></section>";
}

std::string host_table(const RunResult& r) {
    std::string rows;
    for (const auto& f : run_host_figures()) {
        if (!(r.host.*(f.stat)).measured()) continue;
        rows += "<tr><td>" + e(f.label) + "</td>" + stat_cells(r.host, f) + "</tr>";
    }
    if (rows.empty()) return {};
    std::string cpus = r.host.cpus > 0 ? " <small>(" + std::to_string(r.host.cpus) + " CPUs)</small>" : "";
    return "<section id=\"host\"><h2>Host over the steady window" + cpus +
           "</h2><div class=\"scroll\"><table class=\"stats\"><thead><tr><th>figure</th><th>mean</th><th>p5</th>"
           "<th>p95</th></tr></thead><tbody>" +
           rows + "</tbody></table></div></section>";
}

std::string absent(const RunResult& r) {
    if (r.absent.empty()) return {};
    std::string out = "<section id=\"absent\"><h2>Not measured</h2><ul class=\"note\">";
    for (auto& [k, why] : r.absent) out += "<li><code>" + e(k) + "</code>: " + e(why) + "</li>";
    return out + "</ul></section>";
}

// Bytes are charted in GiB and bytes per second in MB/s, so the axis reads without counting digits.
std::vector<TimeSeries> readable(std::vector<TimeSeries> series) {
    for (TimeSeries& s : series) {
        double scale = s.unit == "B" ? kGiB : s.unit == "B/s" ? 1e6 : 1;
        if (scale == 1) continue;
        s.unit = s.unit == "B" ? "GiB" : "MB/s";
        for (double& v : s.values) v /= scale;
    }
    return series;
}

}  // namespace

std::string render_run_html(const Envelope& env, const RunResult& r, const std::vector<TimeSeries>& series) {
    std::string body = verdict(r) + job(r) + gpu_table(r) + host_table(r);
    body += html_series_timeline(readable(series), [](const std::string& key) {
        return starts_with(key, "host_") ? std::string("host") : std::string("GPUs");
    });
    body += absent(r);
    std::string head = r.diagnosis.primary ? r.diagnosis.primary->title : "no bottleneck rule fired";
    std::string when = env.started_at.empty() ? "" : " on " + env.started_at;
    return html_page("gpuvet run · " + (r.tag.empty() ? joined(r.command) : r.tag) + " · " + head, body,
                     "Written by gpuvet " + e(env.tool_version) + " from a run report" + e(when) +
                         ". Statistics are time-weighted over the steady window; GiB for memory, decimal MB/s and "
                         "GB/s for rates.");
}

}  // namespace gpuvet
