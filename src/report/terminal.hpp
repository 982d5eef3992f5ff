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

}  // namespace gpuvet
