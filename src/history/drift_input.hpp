// What judge_drift() needs, read from the history for a run not yet recorded: each GPU's earlier
// values of this run's figures and the box's previous run, slot by slot.
#pragma once
#include "history/drift.hpp"
#include "history/run_record.hpp"
#include "history/sqlite_db.hpp"

namespace gpuvet::history {

DriftInput drift_input(Database& db, const RunRecord& now);

// The box this run would be recorded under (match_box over the history), if any.
std::optional<std::int64_t> box_of(Database& db, const RunRecord& run);

}  // namespace gpuvet::history
