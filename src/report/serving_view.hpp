// The serving capacity of a plan as the terminal and JSON show it: the budget itemized term by
// term, the KV tokens, the concurrency at --seq and its rates; and the card table's two cells.
#pragma once
#include <ostream>
#include <string>

#include "plan/serving.hpp"
#include "report/json.hpp"
#include "report/plan_view.hpp"

namespace gpuvet {

// The row the "Serving capacity" section is for: the first one at the memory section's card
// count, else the first with a capacity. Null when no row has one (training, a bare count).
const SkuRow* serving_row(const PlanView& v);
Json serving_to_json(const ServingCapacity& c);
// The section, 100 columns; nothing when no row has a capacity.
void render_serving(std::ostream& o, const PlanView& v);
// "453584" / "12.3M" and "55.4" / "<1": the card table's KV tokens and concurrency cells.
std::string kv_tokens_cell(const ServingCapacity& c);
std::string concurrency_cell(const ServingCapacity& c);

}  // namespace gpuvet
