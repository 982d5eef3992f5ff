// The inline SVG charts of the HTML report, each a small function: bars against a spec with the
// healthy band and the floor, line series with shaded bands, a heat map. No scripts, no fonts.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.hpp"

namespace gpuvet {

// &, <, >, " and ' as entities: text and attribute values alike.
std::string escape_html(std::string_view s);

// One bar: a measured value as a share of its spec (1.0 = the datasheet figure).
struct Bar {
    std::string label;                 // "GPU 3"
    std::optional<double> share;       // measured / spec; absent: no value (the title says why)
    std::optional<double> healthy_lo;  // the band healthy hardware reaches, as shares of spec
    std::optional<double> healthy_hi;
    std::optional<double> floor_share;  // below it the check fails
    Verdict verdict = Verdict::Pass;
    std::string title;  // hover text: the value with its unit, the reference, the source
};
std::string svg_bars(const std::vector<Bar>& bars, const std::string& caption);

// One line of a time series chart; NaN values are gaps.
struct Line {
    std::string label;  // "GPU 1"
    std::vector<double> t_s, values;
};
// `time_unit` names the time axis' unit ("s"; "d" for a history over days).
std::string svg_lines(const std::vector<Line>& lines, const std::string& unit, const std::string& caption,
                      const std::string& time_unit = "s");

// A shaded interval on the time axis ("GPU 1: HW_SLOWDOWN"), in one of the chart's rows.
struct Band {
    double from_s = 0, to_s = 0;
    std::size_t row = 0;
    bool fault = true;  // red: the hardware is in trouble; amber: normal limiting (a power cap)
    std::string title;
};
// Rows of intervals over [t0_s, t1_s], one labelled row each ("GPU 0" ...).
std::string svg_bands(const std::vector<std::string>& rows, const std::vector<Band>& bands, double t0_s, double t1_s,
                      const std::string& caption);

// One part of a stacked bar ("weights", 15.0 GiB), drawn in its series colour.
struct Segment {
    std::string label;
    double value = 0;
    std::string title;  // hover text
};
// A horizontal bar of parts laid end to end, each labelled with its value and `unit` where it fits.
std::string svg_stacked_bar(const std::vector<Segment>& parts, const std::string& unit, const std::string& caption);

// A square matrix of values (row -> column); absent cells are blank. `labels` name rows and columns.
std::string svg_heatmap(const std::vector<std::vector<std::optional<double>>>& cells,
                        const std::vector<std::string>& labels, const std::string& unit, const std::string& caption);

}  // namespace gpuvet
