// The history's printers: the boxes and GPUs seen, a box's or a GPU's runs, a figure over time
// (a terminal chart, an HTML page with an SVG chart), a diff of two runs, and the CSV / JSON
// Lines export. They read the history's plain rows (history/queries.hpp, history/diff.hpp).
#pragma once
#include <iosfwd>
#include <string>
#include <vector>

#include "history/diff.hpp"
#include "history/queries.hpp"
#include "report/json.hpp"

namespace gpuvet {

std::string render_history_list(const std::vector<history::BoxRow>& boxes, const std::vector<history::GpuRow>& gpus);
Json history_list_json(const std::vector<history::BoxRow>& boxes, const std::vector<history::GpuRow>& gpus);

// One run with the figures that have a spec or a floor (its key figures), per GPU.
struct ShownRun {
    history::RunRow run;
    std::vector<history::FigureRow> figures;
};
std::string render_history_show(const std::string& title, const std::vector<ShownRun>& runs);
Json history_show_json(const std::string& title, const std::vector<ShownRun>& runs);

// A chart of `points` (one row per run and GPU) against the spec and the floor, `width` columns.
std::string render_trend(const std::string& metric, const std::vector<history::TrendPoint>& points, int width);
Json trend_json(const std::string& metric, const std::vector<history::TrendPoint>& points);
std::string render_trend_html(const std::string& metric, const std::vector<history::TrendPoint>& points);

std::string render_diff(const history::RunDiff& d);
Json diff_json(const history::RunDiff& d);

std::string export_csv_header();
std::string export_csv_row(const history::ExportRow& r);
std::string export_jsonl_row(const history::ExportRow& r);

}  // namespace gpuvet
