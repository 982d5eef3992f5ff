// The compact scorecard: the check x GPU matrix (a verdict mark and the key figure per cell), the
// box-level results one line each, then only what did not pass, expanded with its numbers,
// references and advice. A healthy 8-GPU check fits one screen; --verbose prints the full view.
#pragma once
#include <string>

#include "core/result.hpp"
#include "report/style.hpp"

namespace gpuvet {

std::string render_compact_scorecard(const Report& r, const Style& st);

}  // namespace gpuvet
