// The history's printers: the boxes and GPUs seen, a box's or a GPU's runs, a figure over time
// (a terminal chart, an HTML page with an SVG chart), a diff of two runs, and the CSV / JSON
// Lines export. They read the history's plain rows (history/queries.hpp, history/diff.hpp).
#pragma once
#include <iosfwd>
#include <string>
#include <vector>

#include "history/box_history.hpp"
#include "history/diff.hpp"
#include "history/queries.hpp"
#include "report/json.hpp"

namespace gpuvet {

// `moves`: hostnames that moved to other GPUs, each said under the list ("hostname X was box-Y until DATE").
std::string render_history_list(const std::vector<history::BoxRow>& boxes, const std::vector<history::GpuRow>& gpus,
                                const std::vector<history::HostnameChange>& moves);
Json history_list_json(const std::vector<history::BoxRow>& boxes, const std::vector<history::GpuRow>& gpus,
                       const std::vector<history::HostnameChange>& moves);

// One run with its key figures (those with a spec, a floor or a ceiling; every figure of a
// `gpuvet run`), per GPU, and the findings it is summed up by (`run`'s diagnosis).
struct ShownRun {
    history::RunRow run;
    std::vector<history::FigureRow> figures;
    std::vector<history::FindingRow> findings;
};
std::string render_history_show(const std::string& title, const std::vector<ShownRun>& runs);
Json history_show_json(const std::string& title, const std::vector<ShownRun>& runs);

// A chart of `points` (one row per run and GPU) against the spec and the floor, `width` columns.
std::string render_trend(const std::string& metric, const std::vector<history::TrendPoint>& points, int width);
Json trend_json(const std::string& metric, const std::vector<history::TrendPoint>& points);
std::string render_trend_html(const std::string& metric, const std::vector<history::TrendPoint>& points);
// The chart of `points` as an HTML figure (SVG line per GPU, its colour key, a caption with the
// spec, floor or ceiling and `note`): the trend page's and the report's history section's.
std::string trend_chart_html(const std::string& metric, const std::vector<history::TrendPoint>& points,
                             const std::string& note);

// The report's section on the box's history: its earlier runs and a chart per key figure.
std::string html_box_history(const history::BoxHistory& h);

std::string render_diff(const history::RunDiff& d);
Json diff_json(const history::RunDiff& d);

std::string export_csv_header();
std::string export_csv_row(const history::ExportRow& r);
std::string export_jsonl_row(const history::ExportRow& r);

}  // namespace gpuvet
