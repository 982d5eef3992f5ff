#include "report/matrix_view.hpp"

#include <algorithm>
#include <sstream>

#include "report/result_grid.hpp"
#include "report/text_layout.hpp"
#include "report/terminal_parts.hpp"

namespace gpuvet {

namespace {

constexpr std::size_t kFigureChars = 5;  // "100%", "63°C": what a cell holds beside its mark
constexpr std::size_t kMaxKeyColumn = 22;

std::string pad_to(std::string s, std::size_t cols) {
    std::size_t w = visible_width(s);
    if (w < cols) s.append(cols - w, ' ');
    return s;
}

std::string paint_mark(Verdict v, const std::string& text, const Style& st) {
    const char* sgr = v == Verdict::Pass    ? "32"
                      : v == Verdict::Warn  ? "33"
                      : v == Verdict::Fail  ? "1;31"
                      : v == Verdict::Error ? "1;35"
                                            : "2";
    return st.paint(text, sgr);
}

// How the matrix fits the width: cells with figures, or marks only, and how many GPUs per block.
struct Layout {
    std::size_t key_cols;
    std::size_t cell_cols;
    bool figures;
    std::size_t per_block;
};

Layout fit(const ResultGrid& g, int width) {
    std::size_t key_cols = 0;
    for (auto& row : g.rows) key_cols = std::max(key_cols, row.key.size());
    key_cols = std::min(key_cols, kMaxKeyColumn) + 2;
    std::size_t n = std::max<std::size_t>(g.gpus.size(), 1);
    std::size_t w = std::size_t(std::max(width, 40));
    Layout full{key_cols, 2 + kFigureChars + 1, true, n};
    if (key_cols + n * full.cell_cols <= w) return full;
    Layout marks{key_cols, 4, false, n};  // " ✓  " under "  3 "
    if (key_cols + n * marks.cell_cols <= w) return marks;
    marks.per_block = std::max<std::size_t>(1, (w - key_cols) / marks.cell_cols);
    return marks;
}

std::string cut_key(const std::string& key, std::size_t cols) {
    return key.size() <= cols ? key : key.substr(0, cols - 1) + "…";
}

void render_matrix(std::ostringstream& o, const ResultGrid& g, const Style& st) {
    if (g.rows.empty()) return;
    Layout L = fit(g, st.width);
    for (std::size_t first = 0; first < g.gpus.size(); first += L.per_block) {
        std::size_t last = std::min(g.gpus.size(), first + L.per_block);
        std::string head = pad_to("CHECK", L.key_cols);
        for (std::size_t i = first; i < last; ++i) {
            std::string label = (L.figures ? "GPU " : "") + std::to_string(g.gpus[i]);
            head += L.figures ? pad_to(label, L.cell_cols)
                              : pad_to(std::string(label.size() < 2 ? " " : "") + label, L.cell_cols);
        }
        while (!head.empty() && head.back() == ' ') head.pop_back();
        o << st.dim(head) << "\n";
        for (auto& row : g.rows) {
            std::string line = pad_to(cut_key(row.key, L.key_cols - 2), L.key_cols);
            for (std::size_t i = first; i < last; ++i) {
                auto it = row.per_gpu.find(g.gpus[i]);
                if (it == row.per_gpu.end()) {
                    line += pad_to(L.figures ? "" : " ", L.cell_cols);  // not run on this GPU
                    continue;
                }
                const CheckResult& c = *it->second;
                std::string cell = verdict_mark(c.verdict);
                if (L.figures && c.verdict != Verdict::Skip) {
                    std::string fig = short_figure(c, kFigureChars);
                    if (!fig.empty()) cell += " " + fig;
                }
                if (!L.figures) cell = " " + cell;
                line += pad_to(paint_mark(c.verdict, cell, st), L.cell_cols);
            }
            while (!line.empty() && line.back() == ' ') line.pop_back();
            o << line << "\n";
        }
        if (last < g.gpus.size()) o << "\n";
    }
    std::string legend = "✓ pass · ! warn · ✗ fail · – skip · E error";
    if (L.figures) legend += " · figure: the one nearest its floor, % of spec where there is one";
    o << st.dim(wrap("", legend, st.width, 0)) << "\n\n";
}

// A result, one line: "PASS   host.identity           summary".
void render_line(std::ostringstream& o, const CheckResult& c, const std::string& gpus, const Style& st) {
    std::string head = st.verdict(c.verdict) + "  " + pad_to(c.key, 23) + " " + pad_to(gpus, 5);
    // Narrow terminals give the summary the whole line under the key rather than a thin column.
    int indent = st.width < 80 ? 9 : 36;
    if (c.key.size() >= 23 || visible_width(gpus) > 5 || st.width < 80) {
        o << st.verdict(c.verdict) << "  " << c.key << (gpus.empty() ? "" : " GPU " + gpus) << "\n";
        head = std::string(std::size_t(indent), ' ');
    }
    o << wrap(head, c.summary, st.width, indent) << "\n";
}

bool passed(const CheckResult& c) { return c.verdict == Verdict::Pass; }

// Results that did not pass, each expanded; SKIPs of one check with the same reason are one line.
void render_not_passing(std::ostringstream& o, const Report& r, const Style& st) {
    std::vector<const CheckResult*> shown;
    for (const CheckResult& c : r.checks)
        if (!passed(c) && c.gpu) shown.push_back(&c);
    if (shown.empty()) return;
    o << st.bold("Not passing") << "\n";
    // GPUs that gave the same result (words and figures) print once, with their list.
    for (const ResultGroup& g : group_results(shown)) {
        const std::string gpus = g.gpus.size() > 1 ? gpu_ranges(g.gpus) : std::string();
        if (g.result.verdict == Verdict::Skip) render_line(o, g.result, gpus.empty() ? gpu_ranges(g.gpus) : gpus, st);
        else render_result(o, g.result, st, gpus);
    }
    o << "\n";
}

// Box-level results: one line when they passed or were skipped, expanded when they did not pass.
void render_box(std::ostringstream& o, const ResultGrid& g, const Style& st) {
    if (g.box.empty()) return;
    o << st.dim(pad_to("", 7) + pad_to("BOX AND HOST", 24) + pad_to("", 5) + "RESULT") << "\n";
    for (const CheckResult* c : g.box) {
        if (passed(*c) || c->verdict == Verdict::Skip) render_line(o, *c, "", st);
        else render_result(o, *c, st);
    }
    o << "\n";
}

}  // namespace

std::string render_compact_scorecard(const Report& r, const Style& style) {
    Style st = style;
    st.focus = true;
    std::ostringstream o;
    render_header(o, r, st, true);
    ResultGrid g = build_grid(r);
    render_matrix(o, g, st);
    render_box(o, g, st);
    render_not_passing(o, r, st);
    render_errors(o, r, st);
    render_verdict(o, r, st);
    return o.str();
}

}  // namespace gpuvet
