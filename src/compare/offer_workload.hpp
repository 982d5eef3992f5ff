// `gpuvet compare --workload job.json`: the planned job's time and cost on each offer, planned
// again by the planner (recommend) with the rates the offer's report measured in place of the
// datasheet's. Its printers are in report/offer_workload_view.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "plan/planned_job.hpp"
#include "plan/rates_sources.hpp"
#include "specs/spec_db.hpp"

namespace gpuvet {

struct OfferRates {
    std::string name;                             // the offer's name in the comparison
    std::map<std::string, MeasuredRates> by_sku;  // what its report measured (read_measured_report)
};

struct WorkloadOnOffer {
    std::string name, gpu;   // offer, its GPU model
    std::string absent;      // non-empty: no figure, and why (unknown SKU, nothing measured, does not fit)
    std::string rate_label;  // "BF16 dense TFLOPS per card (measured)"
    std::optional<double> rate, datasheet_rate;  // rate: absent when the report did not measure it
    bool rate_measured = false;                  // false: the time rests on the datasheet's rate
    std::optional<int> cards;
    std::optional<double> tokens_per_s, hours, cost;
};

struct WorkloadComparison {
    std::string job;  // "Llama-2-7B, QLoRA, 1e+08 tokens"
    std::string currency;
    bool training = false;
    std::vector<WorkloadOnOffer> offers;
    std::optional<std::size_t> cheapest, fastest;
};

WorkloadComparison plan_on_offers(const PlannedJob& job, const SpecDb& db, const std::vector<OfferRates>& offers,
                                  const PriceTable* prices);

}  // namespace gpuvet
