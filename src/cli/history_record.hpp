// The history as check, bench and burn use it: --no-history and --history-db, the drift
// findings `check` adds before it prints, and the recording after it printed. Recording never
// changes a command's verdict or exit code: a database that cannot be written is a warning.
#pragma once
#include <CLI/CLI.hpp>
#include <optional>
#include <string>

#include "core/result.hpp"
#include "history/run_record.hpp"

namespace gpuvet {

class RunFacts;

struct HistoryOptions {
    bool off = false;               // --no-history
    std::optional<std::string> db;  // --history-db FILE
};

void add_history_flags(CLI::App& sub, HistoryOptions& o);

// Before the run: a database path that names a FIFO, a device or a directory is exit 2 now
// (history/store.hpp), not a warning once the work is done. Nothing when the history is off.
void require_usable_history(const HistoryOptions& o);

// The ids a report may not carry itself, from the facts this run read (GPU serials and VBIOS
// from the inventory, SMBIOS and Slurm ids from the host).
history::LiveIdentity live_identity(const RunFacts& facts);

// history.drift: this run against its GPUs' and box's history, or nullopt when the history is
// off or holds no file yet. A history that cannot be read is a SKIP naming why: the history never
// changes a verdict.
std::optional<CheckResult> history_drift(const Report& r, const HistoryOptions& o, const history::LiveIdentity& live);

// Records the finished report (after it was printed and its files written); any failure is one
// warning line on stderr.
void record_in_history(const Report& r, const HistoryOptions& o, const history::LiveIdentity& live);

}  // namespace gpuvet
