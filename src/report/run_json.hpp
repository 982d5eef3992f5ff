// The run report (`gpuvet run --report DIR` -> gpuvet-run.json): the envelope every document
// has, then the run (command, exit, window, per-GPU and host summaries, diagnosis, processes)
// and the timeline as `series` in the report's TimeSeries shape, so the HTML report charts it.
#pragma once
#include <string>

#include "core/result.hpp"
#include "core/run_result.hpp"
#include "report/json.hpp"

namespace gpuvet {

// The series the timeline becomes (one per signal and GPU).
std::vector<TimeSeries> run_series(const RunResult& r);
Json run_body(const RunResult& r);
// The whole document, envelope first.
std::string render_run_json(const Envelope& e, const RunResult& r);

}  // namespace gpuvet
