// A planned job read back from a `gpuvet plan --json` document (its `workload` object): the model,
// the workload's knobs, the speed assumptions and the scenario, so the planner runs it again on
// other rates (`gpuvet compare --workload`).
#pragma once
#include <string>
#include <string_view>

#include "plan/model_arch.hpp"
#include "plan/speed_model.hpp"
#include "plan/workload.hpp"

namespace gpuvet {

struct PlannedJob {
    ModelArch model;
    Workload w;
    SpeedAssumptions a;
    std::string scenario;
};

// Throws an Input error naming `origin`: not JSON, not a plan document, a plan without a workload
// (written by an older gpuvet), a model this build cannot rebuild (a --config plan).
PlannedJob parse_planned_job(std::string_view json_text, const std::string& origin);

}  // namespace gpuvet
