// The terminal summary of `gpuvet run`: the verdict first (primary rule, its numbers and what to
// do), the seed test, the other findings, then the per-GPU and host tables over the steady window.
#pragma once
#include <string>

#include "core/run_result.hpp"
#include "report/style.hpp"

namespace gpuvet {

std::string render_run_summary(const RunResult& r, const Style& st);

}  // namespace gpuvet
