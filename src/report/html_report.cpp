#include "report/html_report.hpp"

#include <algorithm>
#include <map>
#include <sstream>

#include "core/strings.hpp"
#include "report/history_view.hpp"
#include "report/html_sections.hpp"
#include "report/result_grid.hpp"
#include "report/result_groups.hpp"
#include "report/svg.hpp"
#include "report/wording.hpp"

namespace gpuvet {

namespace {

std::string e(std::string_view s) { return escape_html(s); }

const char* vclass(Verdict v) {
    switch (v) {
        case Verdict::Pass: return "pass";
        case Verdict::Warn: return "warn";
        case Verdict::Fail: return "fail";
        case Verdict::Skip: return "skip";
        case Verdict::Error: return "error";
    }
    return "skip";
}

const char* banner_class(RunVerdict v) {
    switch (v) {
        case RunVerdict::Go: return "pass";
        case RunVerdict::GoWithWarnings: return "warn";
        case RunVerdict::NoGo: return "fail";
        case RunVerdict::Incomplete:
        case RunVerdict::CouldNotRun: return "error";
    }
    return "error";
}

// Numbered footnotes: every source a figure on the page cites, once.
struct Sources {
    std::vector<std::string> list;
    std::string ref(const std::string& s) {
        if (s.empty()) return {};
        auto it = std::find(list.begin(), list.end(), s);
        std::size_t n = std::size_t(it - list.begin()) + 1;
        if (it == list.end()) list.push_back(s);
        return "<sup><a href=\"#src" + std::to_string(n) + "\">" + std::to_string(n) + "</a></sup>";
    }
};

std::string banner(const Report& r) {
    std::string host = r.machine.hostname.value_or("(hostname unknown)");
    return "<header id=\"verdict\" class=\"banner " + std::string(banner_class(r.verdict)) + "\" data-verdict=\"" +
           to_string(r.verdict) + "\"><h1>" + e(verdict_headline(r)) + "</h1><p>" + e(verdict_tally(r)) + " · exit " +
           std::to_string(r.exit_code) + "</p><p>gpuvet " + e(r.tool_version) + " " + e(r.command) + " on <b>" +
           e(host) + "</b>" + (r.started_at.empty() ? "" : " · " + e(r.started_at)) +
           (r.duration_s > 0 ? " · " + e(format_number(r.duration_s, 3)) + " s" : "") + "</p></header>";
}

std::string facts(const Report& r) {
    std::ostringstream host;
    const MachineInfo& m = r.machine;
    std::vector<std::pair<std::string, std::string>> rows;
    if (m.cpu_model) rows.push_back({"CPU", *m.cpu_model});
    if (m.cpu_cores || m.cpu_threads)
        rows.push_back({"Cores / threads", (m.cpu_cores ? std::to_string(*m.cpu_cores) : "—") + " / " +
                                               (m.cpu_threads ? std::to_string(*m.cpu_threads) : "—")});
    if (m.memory_total_bytes) rows.push_back({"RAM", format_bytes(double(*m.memory_total_bytes))});
    if (m.os) rows.push_back({"OS", *m.os + (m.kernel ? ", kernel " + *m.kernel : "")});
    if (m.virtualization) rows.push_back({"Virtualization", *m.virtualization});
    if (m.container) rows.push_back({"Container", *m.container});
    const DriverInfo& d = m.driver;
    if (d.driver_version) rows.push_back({"NVIDIA driver", *d.driver_version});
    else if (!d.present && !d.absent_reason.empty()) rows.push_back({"NVIDIA driver", "not found: " + d.absent_reason});
    if (d.cuda_driver_version) rows.push_back({"CUDA (driver)", cuda_version_text(*d.cuda_driver_version)});
    if (d.amd_present)
        rows.push_back({"AMD driver", d.amd_driver_version.value_or("version unknown") +
                                          (d.amd_library ? " (" + *d.amd_library + ")" : "")});
    else if (!d.present && !d.amd_absent_reason.empty())
        rows.push_back({"AMD driver", "not found: " + d.amd_absent_reason});
    std::string out = "<section id=\"facts\"><h2>Machine and driver</h2><div class=\"scroll\"><table>";
    for (auto& [k, v] : rows) out += "<tr><th>" + e(k) + "</th><td>" + e(v) + "</td></tr>";
    out += "</table></div>";
    for (auto& p : d.problems)
        out +=
            "<div class=\"finding fail\"><b>Problem:</b> " + e(p.message) + "<br><b>Fix:</b> " + e(p.advice) + "</div>";
    if (!r.gpus.empty()) {
        out +=
            "<h3>GPUs</h3><div class=\"scroll\"><table><thead><tr><th>GPU</th><th>name</th><th>memory</th>"
            "<th>PCI bus</th><th>spec</th><th>UUID</th></tr></thead><tbody>";
        for (auto& g : r.gpus)
            out += "<tr><td>" + std::to_string(g.index) + "</td><td>" + e(g.name.value_or("—")) +
                   "</td><td class=\"num\">" +
                   e(g.memory_total_bytes ? format_bytes(double(*g.memory_total_bytes)) : "—") + "</td><td><code>" +
                   e(g.pci_bus_id.value_or("—")) + "</code></td><td>" + e(g.sku.value_or("not identified")) +
                   (g.sku_match ? " <small>(" + e(*g.sku_match) + ")</small>" : "") + "</td><td><code>" +
                   e(g.uuid.value_or("—")) + "</code></td></tr>";
        out += "</tbody></table></div>";
    }
    return out + "</section>";
}

std::string matrix(const ResultGrid& g) {
    if (g.rows.empty()) return {};
    std::string out =
        "<section id=\"matrix\"><h2>Checks per GPU</h2><div class=\"scroll\"><table "
        "class=\"matrix\"><thead><tr><th>check</th>";
    for (int i : g.gpus) out += "<th>GPU " + std::to_string(i) + "</th>";
    out += "</tr></thead><tbody>";
    for (auto& row : g.rows) {
        out += "<tr><td title=\"" + e(row.title) + "\"><code>" + e(row.key) + "</code></td>";
        for (int i : g.gpus) {
            auto it = row.per_gpu.find(i);
            if (it == row.per_gpu.end()) {
                out += "<td></td>";
                continue;
            }
            const CheckResult& c = *it->second;
            const Measurement* m = key_figure(c);
            std::string title = std::string(to_string(c.verdict)) + ": " + c.summary;
            if (m) {
                title += '\n';  // appended piecewise: `"\n" + std::string&&` draws a false -Wrestrict from GCC 12
                title += figure_title(*m);
            }
            std::string cell = verdict_mark(c.verdict);
            if (c.verdict != Verdict::Skip) {
                std::string fig = short_figure(c, 8);
                if (!fig.empty()) cell.append(" ").append(fig);
            }
            out += "<td class=\"v-" + std::string(vclass(c.verdict)) + "\" title=\"" + e(title) + "\">" + e(cell) +
                   "</td>";
        }
        out += "</tr>";
    }
    out +=
        "</tbody></table></div><p class=\"note\">✓ pass · ! warn · ✗ fail · – skip · E error. The figure is the "
        "one nearest its floor, as % of spec where the datasheet gives one; hover a cell for the value, its unit, "
        "the reference and the source.</p></section>";
    return out;
}

bool explains(const CheckResult& c, const Measurement& m) {
    if (m.value && m.reference && grade(*m.value, *m.reference) != Verdict::Pass) return true;
    for (auto& f : c.findings)
        if (f.verdict != Verdict::Pass && f.measurement == m.key) return true;
    return false;
}

std::string figure_rows(const CheckResult& c, Sources& src, bool all) {
    std::string rows;
    for (auto& m : c.measurements) {
        if (!all && !explains(c, m)) continue;
        Measurement bare = m;
        std::string note;
        if (bare.reference) {
            note = src.ref(bare.reference->source);
            bare.reference->source.clear();
        }
        rows += "<tr><td>" + e(m.label) + "</td><td class=\"num\" title=\"" + e(figure_title(m)) + "\">" +
                e(render_measurement_value(m)) + "</td><td>" + e(render_reference(bare)) + note + "</td></tr>";
    }
    if (rows.empty()) return {};
    return "<div "
           "class=\"scroll\"><table><thead><tr><th>figure</th><th>measured</th><th>reference</th></tr></thead><tbody>" +
           rows + "</tbody></table></div>";
}

// A few plain lines to paste into a ticket: the box, the failed results in their own words (which
// carry the numbers), and where the evidence is.
std::string vendor_message(const Report& r) {
    std::string lines;
    std::vector<const CheckResult*> failed;
    for (auto& c : r.checks)
        if (c.verdict == Verdict::Fail || c.verdict == Verdict::Error) failed.push_back(&c);
    for (const ResultGroup& g : group_results(failed))
        lines +=
            "- " + g.result.key + (g.gpus.empty() ? "" : " " + gpus_label(g.gpus)) + ": " + g.result.summary + "\n";
    if (lines.empty()) return {};
    std::string host = r.machine.hostname.value_or("this server");
    return "<p>To paste into the ticket:</p><pre id=\"vendor-message\">" +
           e("gpuvet " + r.tool_version + " acceptance test of " + host +
             (r.started_at.empty() ? "" : " on " + r.started_at) + ": " + verdict_headline(r) + ".\n" + lines +
             "The full report (JSON and this page) is attached; each figure names its datasheet value and source.") +
           "</pre>";
}

// What failed first, each with its numbers and what to tell the vendor: the page's reason to exist.
std::string not_passing(const Report& r, Sources& src) {
    std::string out;
    std::vector<const CheckResult*> shown;
    for (auto& c : r.checks)
        if (c.verdict != Verdict::Pass && c.verdict != Verdict::Skip) shown.push_back(&c);
    for (const ResultGroup& g : group_results(shown)) {
        const CheckResult& c = g.result;
        out += "<article class=\"finding " + std::string(vclass(c.verdict)) + "\"><h3><span class=\"v-" +
               vclass(c.verdict) + "\">" + to_string(c.verdict) + "</span> <code>" + e(c.key) + "</code>" +
               (g.gpus.empty() ? "" : " " + gpus_label(g.gpus)) + " — " + e(c.title) + "</h3><p>" + e(c.summary) +
               "</p>" + figure_rows(c, src, false);
        std::string items;
        for (const Finding* f : findings_beyond_summary(c))
            if (f->verdict != Verdict::Pass)
                items += "<li><b>" + std::string(to_string(f->verdict)) + ":</b> " + e(f->text) + "</li>";
        for (auto& d : c.details)
            if (!repeats_summary(c, d)) items += "<li>" + e(d) + "</li>";
        if (!items.empty()) out += "<ul>" + items + "</ul>";
        out += "</article>";
    }
    for (auto& er : r.errors)
        out += "<article class=\"finding error\"><h3>error in <code>" + e(er.where) + "</code></h3><p>" +
               e(er.message) + "</p>" + (er.advice.empty() ? "" : "<p><b>Fix:</b> " + e(er.advice) + "</p>") +
               "</article>";
    if (r.fatal)
        out += "<article class=\"finding error\"><h3>Could not complete</h3><p>" + e(r.fatal->message) +
               "</p><p><b>Fix:</b> " + e(r.fatal->advice) + "</p></article>";
    if (out.empty())
        return "<section id=\"findings\"><h2>Not passing</h2><p>Every check that ran passed.</p></section>";
    return "<section id=\"findings\"><h2>Not passing: what to tell the vendor</h2>" + vendor_message(r) + out +
           "</section>";
}

std::string box(const ResultGrid& g) {
    if (g.box.empty()) return {};
    std::string out =
        "<section id=\"box\"><h2>Box and host checks</h2><div class=\"scroll\"><table><thead><tr>"
        "<th>result</th><th>check</th><th>summary</th></tr></thead><tbody>";
    for (const CheckResult* c : g.box)
        out += "<tr><td class=\"v-" + std::string(vclass(c->verdict)) + "\">" + to_string(c->verdict) +
               "</td><td><code>" + e(c->key) + "</code></td><td>" + e(c->summary) + "</td></tr>";
    return out + "</tbody></table></div></section>";
}

// Every result with every figure, folded: the whole report for whoever wants to check a number.
std::string all_results(const Report& r, Sources& src) {
    std::string out = "<section id=\"all\"><h2>Every result</h2>";
    for (auto& c : r.checks) {
        out += "<details><summary><span class=\"v-" + std::string(vclass(c.verdict)) + "\">" + to_string(c.verdict) +
               "</span> <code>" + e(c.key) + "</code>" + (c.gpu ? " GPU " + std::to_string(*c.gpu) : "") + " — " +
               e(c.summary) + "</summary>" + figure_rows(c, src, true) + "</details>";
    }
    return out + "</section>";
}

std::string footnotes(const Sources& src) {
    if (src.list.empty()) return {};
    std::string out = "<section id=\"sources\"><h2>Sources</h2><ol class=\"sources\">";
    for (std::size_t i = 0; i < src.list.size(); ++i)
        out += "<li id=\"src" + std::to_string(i + 1) + "\">" + e(src.list[i]) + "</li>";
    return out + "</ol></section>";
}

}  // namespace

std::string render_html(const Report& r, const history::BoxHistory* history) {
    ResultGrid g = build_grid(r);
    Sources src;
    // In sequence: the footnotes are numbered in the order the page cites them.
    std::string body = banner(r) + matrix(g);
    body += not_passing(r, src);
    body += html_spec_bars(g) + html_timeline(r) + html_p2p(r) + facts(r) + box(g) + html_host(r);
    if (history) body += html_box_history(*history);
    body += all_results(r, src);
    body += footnotes(src);
    std::string title = "gpuvet " + r.command + " · " + r.machine.hostname.value_or("") + " · " + verdict_headline(r);
    return html_page(title, body,
                     "Written by gpuvet " + e(r.tool_version) + " from a schema " + std::to_string(r.schema_version) +
                         " report. Units: decimal GB/s and TFLOPS as datasheets use them, GiB for memory sizes.");
}

}  // namespace gpuvet
