// What a job costs: its size in tokens (--tokens, or --steps × the tokens of a step), then every
// priced SKU × card count that holds it, timed with the speed model and priced as
// price × cards × hours; the cheapest that finishes (within a deadline when given) and the fastest.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "plan/rates_sources.hpp"
#include "plan/recommender.hpp"
#include "plan/speed_model.hpp"
#include "specs/spec_db.hpp"

namespace gpuvet {

// The job's size. With --steps, a step is batch × seq tokens on each data-parallel card of the run
// the steps were counted on (--gpus ÷ --tp, 1 without --gpus), so the job is the same tokens
// whatever configuration runs it.
struct JobBudget {
    double tokens = 0;  // 0: no size given
    std::optional<std::int64_t> steps;
    std::int64_t data_parallel_cards = 1;  // the steps' run (only with steps)
    std::string how;                       // the arithmetic, for the reader
};

// Throws a usage error for --tokens with --steps, and for --steps on inference (no steps there).
JobBudget job_budget(const Workload& w, std::optional<double> tokens, std::optional<double> steps);

// One configuration: `cards` cards of one SKU running the whole job.
struct CostOption {
    const GpuSpec* spec = nullptr;
    int cards = 0;
    double tokens_per_s = 0;  // all the cards together: training, or decode for inference
    double hours = 0;
    double price_per_card_hour = 0;
    double cost = 0;  // price × cards × hours, in the price file's currency
    std::string rates_source;
    bool nvlink_missing = false;       // the plan shards across cards that only have PCIe
    std::optional<double> comm_share;  // share of a training step spent communicating
};

struct CostSearch {
    std::vector<int> counts;          // card counts tried per SKU
    std::vector<CostOption> options;  // every priced configuration that holds the job, with a speed
    std::optional<CostOption> cheapest, fastest;
    std::string cheapest_why, fastest_why;
    std::string cheapest_absent;           // why there is no cheapest (nothing finishes by the deadline...)
    std::vector<const GpuSpec*> unpriced;  // SKUs that would hold the job but have no price
    std::optional<double> deadline_hours;
};

// Card counts the search tries: the one asked for, else doubling up to a box of `per_box`, then
// whole boxes up to `max_cards`; only multiples of the tensor-parallel degree.
std::vector<int> search_card_counts(const Workload& w, int per_box, int max_cards);

// The cheapest (within the deadline) and the fastest of `options`, with why; pure.
void pick_cheapest_and_fastest(CostSearch& s);

CostSearch search_cost(const ModelArch& m, const Workload& w, const SpecDb& db, const Scenario& sc,
                       const SpeedAssumptions& a, const std::map<std::string, MeasuredRates>& measured,
                       const PriceTable& prices, std::optional<double> deadline_hours, int max_cards = 64);

}  // namespace gpuvet
