#include "report/svg.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

#include "core/strings.hpp"
#include "core/text_safety.hpp"

namespace gpuvet {

std::string escape_html(std::string_view raw) {
    // Control characters and bytes that are not UTF-8 become visible escapes first: a page is valid
    // UTF-8 and holds no NUL or ESC whatever the report said.
    std::string s = visible_text(raw);
    std::string out;
    out.reserve(s.size());
    for (char c : s) {
        switch (c) {
            case '&': out += "&amp;"; break;
            case '<': out += "&lt;"; break;
            case '>': out += "&gt;"; break;
            case '"': out += "&quot;"; break;
            case '\'': out += "&#39;"; break;
            default: out += c;
        }
    }
    return out;
}

namespace {

const char* verdict_class(Verdict v) {
    switch (v) {
        case Verdict::Pass: return "pass";
        case Verdict::Warn: return "warn";
        case Verdict::Fail: return "fail";
        case Verdict::Skip: return "skip";
        case Verdict::Error: return "error";
    }
    return "skip";
}

std::string num(double v) { return fmt::format("{:.1f}", v); }

// The eight line colours, distinguishable in light and dark mode (CSS classes s0..s7).
std::string series_class(std::size_t i) { return fmt::format("s{}", i % 8); }

}  // namespace

std::string svg_bars(const std::vector<Bar>& bars, const std::string& caption) {
    // Horizontal bars, 0 to 120% of spec; the label column on the left.
    const double left = 56, width = 300, row_h = 18, top = 14;
    const double h = top + row_h * double(bars.size()) + 18;
    double max_share = 1.2;
    for (auto& b : bars)
        if (b.share) max_share = std::max(max_share, std::min(*b.share * 1.05, 3.0));
    auto x = [&](double share) { return left + width * std::clamp(share, 0.0, max_share) / max_share; };
    std::string s = fmt::format(
        "<svg class=\"chart bars\" viewBox=\"0 0 {} {}\" role=\"img\" aria-label=\"{}\">"
        "<title>{}</title>",
        num(left + width + 50), num(h), escape_html(caption), escape_html(caption));
    // Spec line (100%) and axis labels.
    s += fmt::format("<line class=\"spec\" x1=\"{0}\" x2=\"{0}\" y1=\"{1}\" y2=\"{2}\"/>", num(x(1.0)), num(top - 4),
                     num(h - 14));
    s += fmt::format("<text class=\"axis\" x=\"{}\" y=\"{}\" text-anchor=\"middle\">spec</text>", num(x(1.0)),
                     num(top - 5));
    s += fmt::format("<text class=\"axis\" x=\"{}\" y=\"{}\" text-anchor=\"middle\">0%</text>", num(x(0)), num(h - 3));
    s += fmt::format("<text class=\"axis\" x=\"{}\" y=\"{}\" text-anchor=\"middle\">100%</text>", num(x(1.0)),
                     num(h - 3));
    for (std::size_t i = 0; i < bars.size(); ++i) {
        const Bar& b = bars[i];
        double y = top + row_h * double(i);
        s += "<g><title>" + escape_html(b.title) + "</title>";
        s += fmt::format("<text class=\"label\" x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>", num(left - 6),
                         num(y + 12), escape_html(b.label));
        if (b.healthy_lo && b.healthy_hi)
            s += fmt::format("<rect class=\"band\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"/>",
                             num(x(*b.healthy_lo)), num(y + 1), num(std::max(1.0, x(*b.healthy_hi) - x(*b.healthy_lo))),
                             num(row_h - 2));
        if (b.share) {
            s += fmt::format("<rect class=\"bar {}\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"/>",
                             verdict_class(b.verdict), num(left), num(y + 4), num(std::max(1.0, x(*b.share) - left)),
                             num(row_h - 8));
            s += fmt::format("<text class=\"value\" x=\"{}\" y=\"{}\">{}%</text>", num(x(*b.share) + 3), num(y + 12),
                             format_fixed(100 * *b.share, 0));
        } else {
            s += fmt::format("<text class=\"value\" x=\"{}\" y=\"{}\">not measured</text>", num(left + 3), num(y + 12));
        }
        if (b.floor_share)
            s += fmt::format("<line class=\"floor\" x1=\"{0}\" x2=\"{0}\" y1=\"{1}\" y2=\"{2}\"/>",
                             num(x(*b.floor_share)), num(y), num(y + row_h));
        s += "</g>";
    }
    return s + "</svg>";
}

std::string svg_lines(const std::vector<Line>& lines, const std::string& unit, const std::string& caption,
                      const std::string& time_unit) {
    const double left = 48, width = 420, top = 8, plot_h = 120;
    const double h = top + plot_h + 20;
    double t0 = 1e300, t1 = -1e300, v0 = 1e300, v1 = -1e300;
    for (auto& l : lines)
        for (std::size_t i = 0; i < l.t_s.size() && i < l.values.size(); ++i) {
            t0 = std::min(t0, l.t_s[i]);
            t1 = std::max(t1, l.t_s[i]);
            if (std::isfinite(l.values[i])) {
                v0 = std::min(v0, l.values[i]);
                v1 = std::max(v1, l.values[i]);
            }
        }
    if (t0 > t1) t0 = 0, t1 = 1;
    if (t1 - t0 <= 0) t1 = t0 + 1;
    if (v0 > v1) v0 = 0, v1 = 1;
    // The value axis starts at 0 for positive data, so a sag reads as its true size.
    if (v0 > 0) v0 = 0;
    if (v1 - v0 <= 0) v1 = v0 + 1;
    v1 += (v1 - v0) * 0.05;
    auto x = [&](double t) { return left + width * (t - t0) / (t1 - t0); };
    auto y = [&](double v) { return top + plot_h - plot_h * (v - v0) / (v1 - v0); };
    std::string s =
        fmt::format("<svg class=\"chart lines\" viewBox=\"0 0 {} {}\" role=\"img\" aria-label=\"{}\"><title>{}</title>",
                    num(left + width + 8), num(h), escape_html(caption), escape_html(caption));
    s += fmt::format("<rect class=\"plot\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"/>", num(left), num(top),
                     num(width), num(plot_h));
    for (double v : {v0, (v0 + v1) / 2, v1})
        s += fmt::format("<text class=\"axis\" x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>", num(left - 4),
                         num(y(v) + 4), escape_html(format_number(v, 3)));
    s += fmt::format("<text class=\"axis\" x=\"{}\" y=\"{}\">{} {}</text>", num(left), num(top + plot_h + 14),
                     escape_html(format_number(std::abs(t0) < 1e-3 ? 0 : t0, 3)),  // the first tick, not 9.5e-07
                     escape_html(time_unit));
    s += fmt::format("<text class=\"axis\" x=\"{}\" y=\"{}\" text-anchor=\"end\">{} {} · {}</text>", num(left + width),
                     num(top + plot_h + 14), escape_html(format_number(t1, 3)), escape_html(time_unit),
                     escape_html(unit));
    for (std::size_t k = 0; k < lines.size(); ++k) {
        const Line& l = lines[k];
        std::string d;
        bool pen_down = false;
        // At most ~600 points per line: a day-long burn stays a small file.
        std::size_t n = std::min(l.t_s.size(), l.values.size());
        std::size_t stride = std::max<std::size_t>(1, n / 600);
        for (std::size_t i = 0; i < n; i += stride) {
            if (!std::isfinite(l.values[i])) {
                pen_down = false;
                continue;
            }
            d += fmt::format("{}{},{} ", pen_down ? "L" : "M", num(x(l.t_s[i])), num(y(l.values[i])));
            pen_down = true;
        }
        if (d.empty()) continue;
        s += "<path class=\"line " + series_class(k) + "\" d=\"" + d + "\"><title>" + escape_html(l.label) +
             "</title></path>";
    }
    return s + "</svg>";
}

std::string svg_bands(const std::vector<std::string>& rows, const std::vector<Band>& bands, double t0, double t1,
                      const std::string& caption) {
    const double left = 48, width = 420, top = 4, row_h = 14;
    const double h = top + row_h * double(rows.size()) + 18;
    if (t1 - t0 <= 0) t1 = t0 + 1;
    auto x = [&](double t) { return left + width * (std::clamp(t, t0, t1) - t0) / (t1 - t0); };
    std::string s =
        fmt::format("<svg class=\"chart bands\" viewBox=\"0 0 {} {}\" role=\"img\" aria-label=\"{}\"><title>{}</title>",
                    num(left + width + 8), num(h), escape_html(caption), escape_html(caption));
    for (std::size_t i = 0; i < rows.size(); ++i) {
        double y = top + row_h * double(i);
        s += fmt::format("<rect class=\"lane\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"/>", num(left), num(y + 1),
                         num(width), num(row_h - 2));
        s += fmt::format("<text class=\"label\" x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>", num(left - 4),
                         num(y + row_h - 3), escape_html(rows[i]));
    }
    for (auto& b : bands)
        s += fmt::format(
            "<rect class=\"event {}\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"><title>{}</title></rect>",
            b.fault ? "fault" : "limit", num(x(b.from_s)), num(top + row_h * double(b.row) + 1),
            num(std::max(1.5, x(b.to_s) - x(b.from_s))), num(row_h - 2), escape_html(b.title));
    s += fmt::format("<text class=\"axis\" x=\"{}\" y=\"{}\">{} s</text>", num(left), num(h - 4),
                     escape_html(format_number(std::abs(t0) < 1e-3 ? 0 : t0, 3)));  // the first tick, not 9.5e-07
    s += fmt::format("<text class=\"axis\" x=\"{}\" y=\"{}\" text-anchor=\"end\">{} s</text>", num(left + width),
                     num(h - 4), escape_html(format_number(t1, 3)));
    return s + "</svg>";
}

std::string svg_heatmap(const std::vector<std::vector<std::optional<double>>>& cells,
                        const std::vector<std::string>& labels, const std::string& unit, const std::string& caption) {
    const double cell = 34, left = 40, top = 20;
    const double n = double(labels.size());
    double lo = 1e300, hi = -1e300;
    for (auto& row : cells)
        for (auto& c : row)
            if (c) lo = std::min(lo, *c), hi = std::max(hi, *c);
    std::string s = fmt::format(
        "<svg class=\"chart heatmap\" viewBox=\"0 0 {} {}\" role=\"img\" aria-label=\"{}\"><title>{}</title>",
        num(left + cell * n + 4), num(top + cell * n + 4), escape_html(caption), escape_html(caption));
    for (std::size_t i = 0; i < labels.size(); ++i) {
        s += fmt::format("<text class=\"axis\" x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
                         num(left + cell * (double(i) + 0.5)), num(top - 6), escape_html(labels[i]));
        s += fmt::format("<text class=\"axis\" x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>", num(left - 4),
                         num(top + cell * (double(i) + 0.5) + 4), escape_html(labels[i]));
    }
    for (std::size_t r = 0; r < cells.size(); ++r)
        for (std::size_t c = 0; c < cells[r].size(); ++c) {
            if (!cells[r][c]) continue;
            double v = *cells[r][c];
            // Lightness from the row's share of the best pair: the slow pairs are the dark ones.
            int level = hi > lo ? int(std::lround(4 * (v - lo) / (hi - lo))) : 4;
            s += fmt::format(
                "<g><title>{} → {}: {} {}</title><rect class=\"heat h{}\" x=\"{}\" y=\"{}\" width=\"{}\" "
                "height=\"{}\"/><text class=\"cell\" x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text></g>",
                escape_html(labels[r]), escape_html(labels[c]), escape_html(format_number(v, 4)), escape_html(unit),
                level, num(left + cell * double(c) + 1), num(top + cell * double(r) + 1), num(cell - 2), num(cell - 2),
                num(left + cell * (double(c) + 0.5)), num(top + cell * (double(r) + 0.5) + 4),
                escape_html(format_number(v, 3)));
        }
    return s + "</svg>";
}

std::string svg_stacked_bar(const std::vector<Segment>& parts, const std::string& unit, const std::string& caption) {
    const double left = 4, width = 712, top = 4, bar_h = 34;
    double total = 0;
    for (const Segment& p : parts) total += std::max(0.0, p.value);
    std::string s = fmt::format(
        "<svg class=\"chart stacked\" viewBox=\"0 0 {} {}\" role=\"img\" aria-label=\"{}\"><title>{}</title>",
        num(left + width + 4), num(top + bar_h + 20), escape_html(caption), escape_html(caption));
    double x = left;
    for (std::size_t k = 0; k < parts.size(); ++k) {
        double w = total > 0 ? width * std::max(0.0, parts[k].value) / total : 0;
        if (w <= 0) continue;
        s += fmt::format("<rect class=\"seg {}\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"><title>{}</title></rect>",
                         series_class(k), num(x), num(top), num(w), num(bar_h), escape_html(parts[k].title));
        // A label only where it fits: about 6 px per character at this size.
        std::string text = format_number(parts[k].value, 3);
        if (w > 6.0 * double(text.size()) + 8)
            s += fmt::format("<text class=\"seg-label\" x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
                             num(x + w / 2), num(top + bar_h / 2 + 4), escape_html(text));
        x += w;
    }
    s += fmt::format("<text class=\"axis\" x=\"{}\" y=\"{}\">0</text>", num(left), num(top + bar_h + 14));
    s += fmt::format("<text class=\"axis\" x=\"{}\" y=\"{}\" text-anchor=\"end\">{} {}</text>", num(left + width),
                     num(top + bar_h + 14), escape_html(format_number(total, 4)), escape_html(unit));
    return s + "</svg>";
}

}  // namespace gpuvet
