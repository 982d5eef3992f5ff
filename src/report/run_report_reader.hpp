// Reads a run report (gpuvet-run.json, report/run_json) back: the summary, the diagnosis and the
// GPU/host figures into a RunResult (for the comparison of two runs), and with the envelope and the
// timeline's `series` for the printers (`gpuvet report`). The file is the user's: anything that is
// not a run report is an input error naming the file and the problem.
#pragma once
#include <string>
#include <vector>

#include "core/result.hpp"
#include "core/run_result.hpp"

namespace gpuvet {

// A run report as the printers need it: the run leaves `timeline` empty, the series hold it.
struct RunReportDoc {
    Envelope envelope;
    RunResult run;
    std::vector<TimeSeries> series;
};

RunResult read_run_report(const std::string& text, const std::string& name);
RunReportDoc read_run_report_doc(const std::string& text, const std::string& name);

}  // namespace gpuvet
