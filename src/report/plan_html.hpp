// `gpuvet plan --html`: the plan as a self-contained page: the itemized memory per GPU as a stacked
// bar (margin included, in GiB) with how each item is counted, and the card table. Reads only the
// plan's results (the PlanView the terminal view reads).
#pragma once
#include <string>

#include "core/result.hpp"
#include "report/plan_view.hpp"

namespace gpuvet {

std::string render_plan_html(const Envelope& e, const PlanView& v);

}  // namespace gpuvet
