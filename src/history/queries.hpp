// What the history commands read: boxes and GPUs with first/last seen and last verdict, a box's or
// a GPU's runs, a figure over time, and the snapshot of one run that `history diff` compares.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "history/comparable.hpp"
#include "history/sqlite_db.hpp"

namespace gpuvet::history {

struct BoxRow {
    std::int64_t id = 0;
    std::string name, first_seen, last_seen;
    std::optional<std::string> hostname;  // of its latest run
    std::int64_t runs = 0;
    std::string last_verdict;
    std::int64_t gpus = 0;  // in its latest run
};

struct GpuRow {
    std::int64_t id = 0;
    std::string key;
    std::optional<std::string> uuid, serial, name;
    std::string first_seen, last_seen;
    std::optional<std::string> box, slot, last_verdict;  // where it was last seen, and how it fared
};

struct FigureRow {
    std::optional<std::string> gpu;  // the GPU's key; absent for a box-level figure
    std::string metric;
    double value = 0;
    std::string unit;
    std::optional<double> spec, fail_below, fail_above;
    std::optional<int> index;  // the GPU's index in its run
};

struct RunRow {
    std::int64_t id = 0;
    std::string box, command, started_at, verdict, origin;
    std::optional<std::string> hostname, driver_version;
    int exit_code = 0;
    std::optional<std::string> tier;
    std::optional<double> burn_duration_s;
    std::optional<int> cuda_driver_version;
    std::optional<std::string> job;  // `gpuvet run`: the job's command line
    RunKind kind() const { return {command, tier, burn_duration_s}; }
};

struct SnapshotGpu {
    int index = 0;
    std::string slot;
    std::optional<std::string> key, serial, name, vbios_version, verdict;
    std::optional<std::string> inforom_version;
};

struct Snapshot {
    RunRow run;
    std::vector<SnapshotGpu> gpus;
    std::vector<FigureRow> figures;
};

struct TrendPoint {
    std::string at;   // the run's start, RFC 3339
    std::string gpu;  // the GPU's key; empty for a box-level figure
    std::optional<std::string> serial;
    double value = 0;
    std::string unit;
    std::optional<double> spec, fail_below, fail_above;
    RunKind kind;             // of the run it was measured in
    std::int64_t run_id = 0;  // that run's row; 0 for a run not recorded
};

struct FindingRow {
    std::optional<int> index;  // the GPU's index in its run
    std::string check, verdict, text;
};

// A hostname that moved to other GPUs: `before_box` had it until `until`, `after_box` since `since`.
struct HostnameChange {
    std::string hostname, before_box, until, after_box, since;
};

std::vector<BoxRow> list_boxes(Database& db);
std::vector<GpuRow> list_gpus(Database& db);

// A box by its name, a hostname it had or a GPU key/serial/UUID prefix it holds; a GPU by its
// key, UUID or serial. nullopt: no such thing in the history.
std::optional<std::int64_t> find_box(Database& db, const std::string& what);
std::optional<std::int64_t> find_gpu(Database& db, const std::string& what);

std::vector<RunRow> runs_of_box(Database& db, std::int64_t box);  // oldest first
std::vector<RunRow> runs_of_gpu(Database& db, std::int64_t gpu);
Snapshot snapshot(Database& db, std::int64_t run);

// Every value of `metric` on one GPU or on every GPU of one box (or everywhere), oldest first.
std::vector<TrendPoint> trend(Database& db, const std::string& metric, std::optional<std::int64_t> gpu,
                              std::optional<std::int64_t> box);
// The findings recorded with a run (WARN/FAIL/ERROR of its checks; `run`'s diagnosis).
std::vector<FindingRow> findings_of(Database& db, std::int64_t run);

// Every hostname that belonged, run after run, to boxes with different GPUs, in time order.
// Only runs with identified GPUs count: a host-only report names no hardware to differ.
std::vector<HostnameChange> hostname_changes(Database& db);
// The latest box other than `except` that ran under `hostname` with identified GPUs up to
// `before` (a run not yet recorded: runs in the same second count as before it), with its last
// run's start.
std::optional<std::pair<std::string, std::string>> last_box_named(Database& db, const std::string& hostname,
                                                                  const std::string& before,
                                                                  std::optional<std::int64_t> except);

// The metrics recorded, for the error that names a metric that has none.
std::vector<std::string> metrics(Database& db);

// The values of `metric` on GPU `gpu` in runs that started before `before` (RFC 3339), oldest first.
std::vector<double> earlier_values(Database& db, std::int64_t gpu, const std::string& metric,
                                   const std::string& before);

// One row per recorded figure, joined with its run, box and GPU, for `history export`.
struct ExportRow {
    std::string box, started_at, command, run_verdict;
    std::optional<std::string> hostname, gpu, serial, slot;
    FigureRow figure;
};
void for_each_figure(Database& db, const std::function<void(const ExportRow&)>& fn);

}  // namespace gpuvet::history
