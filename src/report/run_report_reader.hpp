// Reads a run report (gpuvet-run.json, report/run_json) back into a RunResult for the comparison of
// two runs: the summary, the diagnosis and the GPU/host figures, not the timeline. The file is the
// user's: anything that is not a run report is an input error naming the file and the problem.
#pragma once
#include <string>

#include "monitor/run_result.hpp"

namespace gpuvet {

RunResult read_run_report(const std::string& text, const std::string& name);

}  // namespace gpuvet
