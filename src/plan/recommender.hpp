// For each SKU: the fewest cards that hold the plan, whether NVLink is needed, speed, time, cost;
// and, when nothing fits, what would.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "plan/levers.hpp"
#include "plan/memory_model.hpp"
#include "plan/rates_sources.hpp"
#include "plan/serving.hpp"
#include "plan/speed_model.hpp"
#include "specs/spec_db.hpp"

namespace gpuvet {

// Seed articles' table: what each scenario weighs (VRAM, compute, bandwidth) and which compute rate.
struct Scenario {
    std::string key, description;
    double w_vram = 1, w_compute = 0, w_bandwidth = 0;
    bool fp32 = false;  // compute rate is FP32 (vector), not bf16 tensor
};
const std::vector<Scenario>& scenarios();
const Scenario& find_scenario(const std::string& key);

struct SkuRow {
    const GpuSpec* spec = nullptr;
    std::optional<int> cards;        // fewest that fit (within max_cards)
    std::optional<MemoryPlan> plan;  // the plan at that count
    double usable_gib = 0;
    bool nvlink_needed = false, has_nvlink = false;
    SpeedEstimate speed;
    std::string rates_source;
    std::optional<double> cost;
    double score = 0;                        // scenario weighting, higher is better
    std::optional<ServingCapacity> serving;  // inference on a decoder: KV capacity at the row's cards
};

struct Recommendation {
    std::vector<SkuRow> rows;  // fitting first, by scenario score
    bool any_fits = false;
    std::string suggestion;  // when nothing (or not the asked SKU) fits
    LeverList levers;        // what makes it fit on fewer or cheaper cards, cheapest to the job first
};

// The rates a card is planned with: the datasheet's, replaced by what `measured` holds for its SKU.
CardRates rates_for(const GpuSpec& g, const Scenario& sc, const std::map<std::string, MeasuredRates>& measured);

// Sharded weights or tensor parallelism exchange data every layer: NVLink, not PCIe.
bool needs_nvlink(int cards, const Workload& w, int zero_stage);

Recommendation recommend(const ModelArch& m, const Workload& w, const SpecDb& db, const Scenario& sc,
                         const SpeedAssumptions& a, const std::map<std::string, MeasuredRates>& measured,
                         const PriceTable* prices, int max_cards = 64);

}  // namespace gpuvet
