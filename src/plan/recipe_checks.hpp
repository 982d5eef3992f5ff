// Which recipe options a task accepts: an optimizer, loss or checkpointing option on inference,
// or two options that contradict each other, is bad input rather than something to ignore.
#pragma once
#include "plan/workload.hpp"

namespace gpuvet {

// Throws Usage naming the option and what to do instead.
void check_recipe_options(const Workload& w);

}  // namespace gpuvet
