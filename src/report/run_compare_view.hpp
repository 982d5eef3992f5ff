// The terminal view of two runs compared (monitor/run_compare): the answer first, then why, then
// the figures side by side.
#pragma once
#include <string>

#include "compare/run_compare.hpp"
#include "report/style.hpp"

namespace gpuvet {

struct Envelope;

std::string render_run_comparison(const RunComparison& c, const Style& st);
// The same as one JSON document (the envelope, both wall times, the faster run, reasons, rows; null
// where a figure was not measured).
std::string render_run_comparison_json(const RunComparison& c, const Envelope& env);

}  // namespace gpuvet
