// The HTML page of a run report (`gpuvet run --report DIR`, `gpuvet report gpuvet-run.json`): self-
// contained, with the verdict, seed test, job, statistics and every series as a chart. It reads only
// the run's plain-data results (report/run_markdown.hpp is the Markdown).
#pragma once
#include <string>
#include <vector>

#include "core/result.hpp"
#include "core/run_result.hpp"

namespace gpuvet {

std::string render_run_html(const Envelope& e, const RunResult& r, const std::vector<TimeSeries>& series);

}  // namespace gpuvet
