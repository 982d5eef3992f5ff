// The plan as the terminal and JSON show it: the itemized memory, the card table, the suggestion.
// Reads only the plan's results (plan/); the CLI parses the workload and prints what this returns.
#pragma once
#include <string>

#include "plan/cost_search.hpp"
#include "plan/memory_model.hpp"
#include "plan/model_arch.hpp"
#include "plan/rates_sources.hpp"
#include "plan/recommender.hpp"
#include "plan/speed_model.hpp"
#include "plan/workload.hpp"
#include "report/json.hpp"

namespace gpuvet {

struct PlanView {
    const ModelArch& model;
    const Workload& w;
    const SpeedAssumptions& a;
    const Scenario& scenario;
    const MemoryPlan& memory;   // the workload on the card count asked for (1 by default)
    const Recommendation& rec;  // every SKU, best first
    const PriceTable* prices;   // --prices, or null
    bool measured = false;      // rates came from a --measured report
    double tokens = 0;          // --tokens budget (0: none)
    bool all = false;           // --all: every SKU
    int top = 10;               // --top: rows of the card table

    // The job's size (--tokens or --steps) and, with --prices, its cheapest and fastest
    // configuration; null when not given.
    const JobBudget* budget = nullptr;
    const CostSearch* cost = nullptr;
};

// The body of the plan document (the envelope is added by the caller).
Json plan_to_json(const PlanView& v);
// The terminal view, 100 columns.
std::string render_plan(const PlanView& v);

}  // namespace gpuvet
