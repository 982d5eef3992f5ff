// The terminal view of two runs compared (monitor/run_compare): the answer first, then why, then
// the figures side by side.
#pragma once
#include <string>

#include "monitor/run_compare.hpp"
#include "report/style.hpp"

namespace gpuvet {

std::string render_run_comparison(const RunComparison& c, const Style& st);

}  // namespace gpuvet
