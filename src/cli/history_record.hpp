// The history as check, bench, burn and run use it: --no-history and --history-db, the drift
// findings and the box's history `check` adds before it prints, and the recording after it
// printed. Recording never changes a command's verdict or exit code: a database that cannot be
// written is a warning.
#pragma once
#include <CLI/CLI.hpp>
#include <map>
#include <optional>
#include <string>

#include "core/result.hpp"
#include "history/box_history.hpp"
#include "history/run_record.hpp"

namespace gpuvet {

class RunFacts;
class DeviceBackend;
struct RunResult;

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

// The box's earlier runs and key figures for the HTML report, or nullopt when the history is off,
// holds no file yet, does not know this box, or cannot be read (the report is written without it).
std::optional<history::BoxHistory> box_history_for(const Report& r, const HistoryOptions& o,
                                                   const history::LiveIdentity& live);

// Records the finished report (after it was printed and its files written); any failure is one
// warning line on stderr. A fleet's node report records the same way, with an empty `live` (the
// node's ids travel in its report's host.identity and gpu.identity).
void record_in_history(const Report& r, const HistoryOptions& o, const history::LiveIdentity& live);
void record_in_history(const history::RunRecord& rec, const HistoryOptions& o);

// What `gpuvet run` records besides its own results: the host's and each sampled GPU's identity.
struct RunIdentity {
    std::optional<std::string> hostname, system_uuid, board_serial, slurm_node;
    std::optional<std::string> driver_version;
    std::optional<int> cuda_driver_version;
    struct Gpu {
        std::optional<std::string> uuid, serial, pci_bus_id, name, vbios_version, inforom_version;
    };
    std::map<int, Gpu> gpus;  // by GPU index
};
// nullptr: a host-only run, no GPU identity.
RunIdentity read_run_identity(const DeviceBackend* backend, const std::vector<int>& gpu_indexes);

// The history's record of a trial run. Its verdict is --judge's outcome in words: JOB_FAILED (the
// command failed or was stopped), BOTTLENECK (a bottleneck or hardware rule fired), else HEALTHY.
history::RunRecord run_record_of(const Envelope& env, const RunResult& r, const RunIdentity& id);

// `gpuvet run`: records the finished trial run (its outcome, the job's exit code, per-GPU
// utilization, power and temperature, the diagnosis' primary finding) with the box's identity,
// read from `backend` and the host after the job ended. Failures are one warning line on stderr.
void record_run_in_history(const Envelope& env, const RunResult& r, const HistoryOptions& o,
                           const DeviceBackend* backend);

}  // namespace gpuvet
