// What makes a workload fit when it does not (or only on many or large cards): the levers people
// pull, in the order of their cost to the job, each re-planned on this workload with the memory
// model (never a fixed percentage), with the cards it brings into the table and its price.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "plan/memory_model.hpp"
#include "plan/rates_sources.hpp"
#include "specs/gpu_spec.hpp"

namespace gpuvet {

struct SkuRow;  // plan/recommender.hpp

// A SKU that holds the job with the lever on fewer cards than without it (or at all).
struct LeverCard {
    const GpuSpec* spec = nullptr;
    int cards = 0;
    std::optional<int> cards_before;  // absent: it did not fit within the counts tried
};

struct Lever {
    std::string key;                               // "checkpointing", "grad-accum", "zero3", "offload-optimizer", ...
    std::string what;                              // "activation checkpointing"
    std::string option;                            // what applies it on the command line: "--checkpointing"
    std::string price;                             // its cost to the job, with the figure the model has for it
    int gpus = 1;                                  // the card count the need is planned on
    double need_before_bytes = 0, need_bytes = 0;  // per GPU, margin included
    double saved_bytes() const { return need_before_bytes - need_bytes; }
    std::vector<LeverCard> brings;  // fewest cards first, then the card table's order
};

struct LeverList {
    bool shown = false;  // the job does not fit on one card of 48 GiB or less
    std::string why;     // why it is (not) shown
    int gpus = 1;        // the count the workload was planned on (--gpus, else 1)
    double need_bytes = 0;
    std::vector<Lever> levers;
    std::vector<std::string> not_applicable;  // "--offload-optimizer (saves nothing here)"
    std::optional<std::size_t> lighter;       // the first lever that fits on fewer or cheaper cards
    std::string lighter_text;                 // "--checkpointing (activation checkpointing) on 4× H100 SXM5 80GB"
};

// The largest card that still counts as a workstation card (L40S, RTX 6000 Ada: 48 GB): beyond
// it a job needs datacenter HBM parts, so the levers are worth listing. gpuvet's own choice.
inline constexpr double kLeverSmallCardGib = 48;

// What a lever must beat to be the lighter idea: the card table's best row, or, when nothing fits
// the asked count, the fewest cards that would.
struct LeverReference {
    const GpuSpec* spec = nullptr;
    int cards = 0;
};

// `rows` is the card table of the workload as given (recommend()), in its order; `counts` the
// card counts it tried.
LeverList find_levers(const ModelArch& m, const Workload& w, const std::vector<SkuRow>& rows,
                      const std::vector<int>& counts, const PriceTable* prices,
                      std::optional<LeverReference> reference);

}  // namespace gpuvet
