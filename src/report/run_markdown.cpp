// Markdown of a run report: the verdict with its numbers, the other findings, the job and the
// statistics over the steady window, for a ticket or chat.
#include <algorithm>
#include <sstream>

#include "core/text_safety.hpp"
#include "report/run_figures.hpp"
#include "report/run_markdown.hpp"

namespace gpuvet {

namespace {

// A table cell or list item: pipes and line breaks would end the cell or the row, raw HTML and
// control characters would reach the renderer (core/text_safety).
std::string cell(const std::string& s) { return markdown_text(s); }

// A code span shows its text literally (no HTML, no emphasis): on one line, and fenced by one
// backtick more than the longest run of backticks inside it.
std::string code_span(const std::string& s) {
    std::string text = visible_text(s, false);
    std::size_t longest = 0, run = 0;
    for (char c : text) longest = std::max(longest, run = c == '`' ? run + 1 : 0);
    std::string fence(longest + 1, '`');
    return fence + (longest ? " " + text + " " : text) + fence;
}

void finding(std::ostringstream& o, const RuleFinding& f) {
    o << "- " << cell(f.message) << "\n- **What to do:** " << cell(f.action) << "\n- *Thresholds:* " << cell(f.source)
      << "\n";
}

void diagnosis(std::ostringstream& o, const Diagnosis& d) {
    if (d.primary) {
        o << "# gpuvet run: " << cell(d.primary->title) << "\n\n**" << cell(to_string(d.primary->severity))
          << "**, rule " << cell(d.primary->id) << ", " << party_words(d.primary->party) << "\n\n";
        finding(o, *d.primary);
    } else {
        o << "# gpuvet run: no bottleneck rule fired\n";
    }
    o << "\nGPU utilization peak ≥ 90 %: ";
    if (d.seed_peak_reached)
        o << (*d.seed_peak_reached ? "reached" : "not reached") << " (" << run_figure_text(d.seed_peak_percent, 1, 0)
          << " %)\n";
    else o << "not judged (no GPU utilization was measured)\n";
    if (!d.others.empty()) {
        o << "\n## Also found\n";
        for (const RuleFinding& f : d.others) {
            o << "\n### " << cell(f.id) << " " << cell(f.title) << " (" << cell(to_string(f.severity)) << ")\n\n";
            finding(o, f);
        }
    }
}

template <class Summary>
std::string stats(const Summary& s, const RunFigure<Summary>& f) {
    const Stat& st = s.*(f.stat);
    // Appended piecewise: `" " + std::string&&` draws a false -Wrestrict from GCC 12.
    std::string out;
    for (double v : {st.mean, st.p5, st.p95})
        out.append(" ").append(run_figure_text(v, f.scale, f.decimals)).append(" |");
    return out;
}

void tables(std::ostringstream& o, const RunResult& r) {
    if (!r.gpus.empty()) {
        o << "\n## GPUs over the steady window (mean | p5 | p95)\n\n| figure |";
        for (const GpuRunSummary& g : r.gpus) {
            std::string n = std::to_string(g.facts.index);
            o << " GPU " << n << " mean | p5 | p95 |";
        }
        o << "\n|---|";
        for (std::size_t i = 0; i < r.gpus.size(); ++i) o << "--:|--:|--:|";
        o << "\n";
        for (const auto& f : run_gpu_figures()) {
            bool any = false;
            for (const GpuRunSummary& g : r.gpus) any = any || (g.*(f.stat)).measured();
            if (!any) continue;
            o << "| " << f.label << " |";
            for (const GpuRunSummary& g : r.gpus) o << stats(g, f);
            o << "\n";
        }
    }
    o << "\n## Host over the steady window\n\n| figure | mean | p5 | p95 |\n|---|--:|--:|--:|\n";
    for (const auto& f : run_host_figures())
        if ((r.host.*(f.stat)).measured()) o << "| " << f.label << " |" << stats(r.host, f) << "\n";
}

}  // namespace

std::string render_run_markdown(const Envelope& env, const RunResult& r) {
    std::ostringstream o;
    diagnosis(o, r.diagnosis);
    std::string cmd;
    for (const std::string& a : r.command) cmd += (cmd.empty() ? "" : " ") + a;
    o << "\n## The job\n\n- **Command:** " << code_span(cmd) << "\n";
    if (!r.tag.empty()) o << "- **Tag:** " << cell(r.tag) << "\n";
    if (!r.note.empty()) o << "- **Note:** " << cell(r.note) << "\n";
    o << "- **Wall time:** " << run_figure_text(r.wall_s, 1, 1) << " s · exit " << r.exit_code << "\n";
    o << "- **Steady window:** " << run_figure_text(r.window_start_s, 1, 1) << "–"
      << run_figure_text(r.window_end_s, 1, 1) << " s\n";
    if (!env.started_at.empty()) o << "- **Started:** " << env.started_at << " · gpuvet " << env.tool_version << "\n";
    tables(o, r);
    return visible_text(o.str());  // the net under every field that is not a cell
}

}  // namespace gpuvet
