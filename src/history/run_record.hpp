// What the history keeps of one report: who ran what and when, the box's persistent ids, each
// GPU with its slot and identity, every numeric figure with its reference, and the verdicts.
// Built from the results model alone, so a run recorded live and the same report imported
// later are one and the same record.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/result.hpp"
#include "history/comparable.hpp"

namespace gpuvet::history {

struct GpuRecord {
    int index = 0;
    std::string slot;  // where it sits: the PCI bus id, or "index N" when the driver gave none
    std::optional<std::string> uuid, serial, name, vbios_version, sku;
    std::optional<std::string> verdict;          // the worst verdict of its per-GPU results
    std::optional<std::string> inforom_version;  // the InfoROM image version, where the driver gave it
    // The key the history knows this GPU by: its UUID, else its serial; empty when it has neither.
    std::string key() const;
};

struct FigureRecord {
    std::optional<int> gpu;  // GPU index in this run; absent for a box-level figure
    std::string metric;      // "<check key>.<measurement key>": "gpu.memory_bandwidth.copy_gbps"
    double value = 0;
    std::string unit;
    std::optional<double> spec, fail_below, fail_above;
};

struct FindingRecord {
    std::optional<int> gpu;
    std::string check;
    std::string verdict;
    std::string text;
};

struct RunRecord {
    std::string digest;  // of the report's identity (see digest_of), never of a file name
    std::string command, started_at, finished_at, tool_version;
    std::string verdict;  // the run's: PASS, WARN, FAIL, INCOMPLETE, COULD_NOT_RUN
    int exit_code = 0;
    std::optional<std::string> hostname, system_uuid, board_serial, slurm_node;
    std::optional<std::string> driver_version;
    std::optional<int> cuda_driver_version;  // 12080 as cuDriverGetVersion gives it
    // What makes two runs comparable (drift compares like with like): the tier of a check or
    // bench (quick, standard, full), the burn's load duration in seconds when a burn ran.
    std::optional<std::string> tier;
    std::optional<double> burn_duration_s;
    std::optional<std::string> job;  // `gpuvet run`: the job's command line
    std::vector<GpuRecord> gpus;
    std::vector<FigureRecord> figures;
    std::vector<FindingRecord> findings;
};

// What the report may lack and the command that ran knows: `bench` and `burn` run neither
// host.identity nor gpu.identity, whose measurements carry these ids into saved reports.
struct LiveIdentity {
    std::optional<std::string> system_uuid, board_serial, slurm_node;
    std::map<int, std::string> serials, vbios_versions, inforom_versions;  // by GPU index
};

inline RunKind kind_of(const RunRecord& r) { return {r.command, r.tier, r.burn_duration_s}; }

// The record of a report; `live` fills what the report's own results do not say.
RunRecord record_of(const Report& r, const LiveIdentity* live = nullptr);

// A 64-bit FNV-1a digest (hex) over the command, argv, start and end times, duration, tool
// version, hostname and the GPUs' UUIDs: what a report is, whichever file holds it.
std::string digest_of(const Report& r);
std::string digest_of(const Envelope& e, const std::optional<std::string>& hostname,
                      const std::vector<std::string>& gpu_uuids);

// The tier a command ran at, from its own words (a saved report carries them): --quick, --full,
// else standard; nullopt for a command without tiers (burn, run, host).
std::optional<std::string> tier_of(const std::string& command, const std::vector<std::string>& argv);

// The burn's load duration: the longest `gpu.burn.load_duration_s` of the report, when a burn ran.
std::optional<double> burn_duration_of(const Report& r);

// The slot name of a GPU: its PCI bus id lower-cased with the domain, or "index N".
std::string slot_of(const GpuSummary& g);

}  // namespace gpuvet::history
