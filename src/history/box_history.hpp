// A box's history as a report shows it beside a new run: the box's earlier runs (dates, commands,
// verdicts) and, per key figure of the new run (one with a spec, a floor or a ceiling), its values
// in earlier comparable runs of the box (comparable.hpp) followed by this run's. Also what a fleet
// run can show per node: the box a node's report belongs to and how it fared before.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "history/queries.hpp"
#include "history/run_record.hpp"

namespace gpuvet::history {

struct FigureTrend {
    std::string metric, unit;
    std::vector<TrendPoint> points;  // oldest first; the last of each GPU is this run's
};

struct BoxHistory {
    std::string box;         // its name, "box-1a2b3c4d"
    std::string matched_by;  // how this run was recognised as that box ("GPUs", ...)
    // The box's runs up to this one's start, oldest first (those in the same second too: this one,
    // recorded or not, is left out by its digest).
    std::vector<RunRow> runs;
    std::string now_at;               // this run's start
    RunKind now;                      // what this run was, for the charts' captions
    std::vector<FigureTrend> trends;  // key figures with at least one earlier comparable value
};

// nullopt: the history holds no earlier run of the box this run belongs to.
std::optional<BoxHistory> box_history(Database& db, const RunRecord& now);

}  // namespace gpuvet::history
