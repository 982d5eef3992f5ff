#include "report/markdown.hpp"

#include <sstream>

#include "core/strings.hpp"
#include "core/text_safety.hpp"
#include "report/result_grid.hpp"
#include "report/result_groups.hpp"
#include "report/terminal_parts.hpp"
#include "report/wording.hpp"

namespace gpuvet {

namespace {

// A table cell or list item: pipes and line breaks would end the cell or the row, raw HTML and
// control characters would reach the renderer (core/text_safety).
std::string cell(const std::string& s) { return markdown_text(s); }

std::string mark_cell(const CheckResult& c) {
    std::string s = verdict_mark(c.verdict);
    if (c.verdict != Verdict::Skip) {
        std::string fig = short_figure(c, 8);
        if (!fig.empty()) s += " " + fig;
    }
    // What did not pass stands out in any renderer.
    return c.verdict == Verdict::Pass || c.verdict == Verdict::Skip ? s : "**" + s + "**";
}

void heading(std::ostringstream& o, const Report& r) {
    o << "# gpuvet " << cell(r.command) << ": " << verdict_headline(r) << "\n\n";
    o << "- **Result:** " << verdict_tally(r) << " · exit " << r.exit_code << "\n";
    std::string when = r.started_at.empty() ? "" : " · " + cell(r.started_at);
    o << "- **Host:** " << cell(r.machine.hostname.value_or("(hostname unknown)")) << when << " · gpuvet "
      << cell(r.tool_version) << "\n";
    const DriverInfo& d = r.machine.driver;
    if (d.driver_version) {
        o << "- **Driver:** " << cell(*d.driver_version);
        if (d.cuda_driver_version) o << ", CUDA " << cuda_version_text(*d.cuda_driver_version);
        o << "\n";
    }
    if (d.amd_present)
        o << "- **AMD driver:** " << cell(d.amd_driver_version.value_or("version unknown"))
          << (d.amd_library ? " (" + cell(*d.amd_library) + ")" : std::string()) << "\n";
    std::ostringstream gpus;
    render_gpu_groups(gpus, r, Style{false, 1000});
    std::istringstream lines(gpus.str());
    for (std::string l; std::getline(lines, l);)
        o << "- **" << cell(trim(l.substr(0, 10))) << ":** " << cell(trim(l.substr(10))) << "\n";
    for (auto& p : d.problems) o << "- **Problem:** " << cell(p.message) << " Fix: " << cell(p.advice) << "\n";
    o << "\n";
}

void matrix(std::ostringstream& o, const ResultGrid& g) {
    if (g.rows.empty()) return;
    o << "## Checks per GPU\n\n| check |";
    for (int i : g.gpus) o << " GPU " << i << " |";
    o << "\n|---|";
    for (std::size_t i = 0; i < g.gpus.size(); ++i) o << "---|";
    o << "\n";
    for (auto& row : g.rows) {
        o << "| `" << cell(row.key) << "` |";
        for (int i : g.gpus) {
            auto it = row.per_gpu.find(i);
            o << " " << (it == row.per_gpu.end() ? "" : mark_cell(*it->second)) << " |";
        }
        o << "\n";
    }
    o << "\n✓ pass · ! warn · ✗ fail · – skip · E error; the figure is the one nearest its floor, as % of spec "
         "where the datasheet gives one.\n\n";
}

void box(std::ostringstream& o, const ResultGrid& g) {
    if (g.box.empty()) return;
    o << "## Box and host\n\n| result | check | summary |\n|---|---|---|\n";
    for (const CheckResult* c : g.box)
        o << "| " << (c->verdict == Verdict::Pass || c->verdict == Verdict::Skip ? "" : "**") << to_string(c->verdict)
          << (c->verdict == Verdict::Pass || c->verdict == Verdict::Skip ? "" : "**") << " | `" << cell(c->key)
          << "` | " << cell(c->summary) << " |\n";
    o << "\n";
}

bool explains(const CheckResult& c, const Measurement& m) {
    if (m.value && m.reference && grade(*m.value, *m.reference) != Verdict::Pass) return true;
    for (auto& f : c.findings)
        if (f.verdict != Verdict::Pass && f.measurement == m.key) return true;
    return false;
}

void not_passing(std::ostringstream& o, const Report& r) {
    bool any = false;
    std::vector<const CheckResult*> shown;
    for (auto& c : r.checks)
        if (c.verdict != Verdict::Pass && c.verdict != Verdict::Skip) shown.push_back(&c);
    for (const ResultGroup& g : group_results(shown)) {
        const CheckResult& c = g.result;
        if (!any) o << "## Not passing\n\n";
        any = true;
        o << "### " << to_string(c.verdict) << " `" << cell(c.key) << "`";
        if (!g.gpus.empty()) o << " " << gpus_label(g.gpus);
        o << "\n\n" << cell(c.summary) << "\n\n";
        bool table = false;
        for (auto& m : c.measurements) {
            if (!explains(c, m)) continue;
            if (!table) o << "| figure | measured | reference |\n|---|---|---|\n";
            table = true;
            o << "| " << cell(m.label) << " | " << cell(render_measurement_value(m)) << " | "
              << cell(render_reference(m)) << " |\n";
        }
        if (table) o << "\n";
        for (const Finding* f : findings_beyond_summary(c))
            if (f->verdict != Verdict::Pass) o << "- " << to_string(f->verdict) << ": " << cell(f->text) << "\n";
        for (auto& d : c.details)
            if (!repeats_summary(c, d)) o << "- " << cell(d) << "\n";
        o << "\n";
    }
    for (auto& e : r.errors) {
        if (!any) o << "## Not passing\n\n";
        any = true;
        o << "- error in `" << cell(e.where) << "`: " << cell(e.message)
          << (e.advice.empty() ? "" : " Fix: " + cell(e.advice)) << "\n";
    }
    if (r.fatal)
        o << "\n**Could not complete:** " << cell(r.fatal->message) << " Fix: " << cell(r.fatal->advice) << "\n";
}

}  // namespace

std::string render_markdown(const Report& r) {
    std::ostringstream o;
    heading(o, r);
    ResultGrid g = build_grid(r);
    matrix(o, g);
    box(o, g);
    not_passing(o, r);
    std::string s = visible_text(o.str());  // the net under every field that is not a cell
    while (s.size() > 1 && s[s.size() - 1] == '\n' && s[s.size() - 2] == '\n') s.pop_back();
    return s;
}

}  // namespace gpuvet
