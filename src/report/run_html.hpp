// The pages of a run report (`gpuvet run --report DIR`, `gpuvet report gpuvet-run.json`): the
// self-contained HTML page (verdict, seed test, job, statistics, every series as a chart) and
// Markdown (verdict, findings, statistics). They read only the run's plain-data results.
#pragma once
#include <string>
#include <vector>

#include "core/result.hpp"
#include "core/run_result.hpp"

namespace gpuvet {

std::string render_run_html(const Envelope& e, const RunResult& r, const std::vector<TimeSeries>& series);
std::string render_run_markdown(const Envelope& e, const RunResult& r);

}  // namespace gpuvet
