// The cost part of the plan: the job's size, the cheapest configuration that finishes it and the
// fastest one (terminal lines and JSON members), or the hint that says what would give them.
#pragma once
#include <ostream>

#include "report/json.hpp"
#include "report/plan_view.hpp"

namespace gpuvet {

void render_cost(std::ostream& o, const PlanView& v);
// Adds `job`, `cheapest`, `fastest` and `cost_search` to the plan document's body.
void add_cost_json(Json& body, const PlanView& v);

}  // namespace gpuvet
