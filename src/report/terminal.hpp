// The terminal scorecard: one line per check result, the figures behind it underneath,
// aligned and readable at 100 columns.
#pragma once
#include <string>

#include "core/result.hpp"
#include "report/style.hpp"

namespace gpuvet {

std::string render_scorecard(const Report& r, const Style& style);
// What the terminal shows: the compact matrix (report/matrix_view.hpp) for a report with per-GPU
// results, unless `style.verbose` asks for the full scorecard; the scorecard otherwise.
std::string render_terminal(const Report& r, const Style& style);
// "3.01 TB/s  90% of 3.35 spec · healthy 83–93% · floor 2.51  (source)" for one measurement.
std::string render_measurement_value(const Measurement& m);
std::string render_reference(const Measurement& m);
// `prefix` then `text` word-wrapped to `width` columns, continuation lines indented by `indent`.
std::string wrap(const std::string& prefix, const std::string& text, int width, int indent);
// Columns a string takes on a terminal (UTF-8, colour escapes skipped).
std::size_t visible_width(std::string_view s);

}  // namespace gpuvet
