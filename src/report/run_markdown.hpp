// Markdown of a run report (`gpuvet report gpuvet-run.json --markdown`): the verdict with its
// numbers, the other findings, the job and the statistics over the steady window, for a ticket.
#pragma once
#include <string>

#include "core/result.hpp"
#include "core/run_result.hpp"

namespace gpuvet {

std::string render_run_markdown(const Envelope& e, const RunResult& r);

}  // namespace gpuvet
