// The history's schema, versioned in SQLite's user_version and migrated forward one step at a
// time, each step in its own transaction: a database written by any earlier gpuvet opens, one
// written by a newer gpuvet is refused with the reason instead of being half-understood.
#pragma once
#include "history/sqlite_db.hpp"

namespace gpuvet::history {

// 1: boxes and their persistent ids, GPUs, runs, the GPUs in each run, figures.
// 2: findings of each run; indexes for trends (metric, GPU) and for a box's runs in time order.
// 3: each run's tier, burn duration, CUDA driver version and job (`gpuvet run`); each GPU's InfoROM
//    image version.
inline constexpr int kDatabaseVersion = 3;

int schema_version(Database& db);
// Brings the database to `target` (kDatabaseVersion unless a test builds an older one).
void migrate(Database& db, int target = kDatabaseVersion);

}  // namespace gpuvet::history
