// The levers of a plan (plan/levers): the terminal section, its JSON member and its HTML section.
#pragma once
#include <ostream>
#include <string>

#include "plan/levers.hpp"
#include "report/json.hpp"

namespace gpuvet {

// Nothing when the list is not shown (the job fits on one small card).
void render_levers(std::ostream& o, const LeverList& l);
Json levers_to_json(const LeverList& l);
std::string levers_html(const LeverList& l);

}  // namespace gpuvet
