// What a trial run produced, for the printers (terminal, JSON) and the comparison of two runs:
// the job, the steady-state window, per-GPU and host summaries, the diagnosis and the timeline.
// Figures are NaN when not measured; the reason sits in `absent` or the GPU's notes.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/fact.hpp"
#include "core/run_process.hpp"
#include "core/run_timeline.hpp"

namespace gpuvet {

// Time-weighted over the steady-state window (a thinned point counts for the time it stands for).
struct Stat {
    double mean = kUnmeasured, p5 = kUnmeasured, p50 = kUnmeasured, p95 = kUnmeasured, max = kUnmeasured;
    bool measured() const { return gpuvet::measured(mean); }
};

// The fixed facts of a GPU the rules need, read once.
struct RunGpuFacts {
    int index = 0;
    std::string name;
    std::string unopened_reason;
    Fact<int> nvlink_active;  // on AMD GPUs the active xGMI links (AMD's counterpart)
    bool amd = false;         // an AMD GPU: the rules that need NVIDIA-only signals say so
    Fact<int> pcie_gen_max, pcie_width_max;
    double sm_clock_max_mhz = kUnmeasured, power_default_limit_w = kUnmeasured;
    double memory_total_bytes = kUnmeasured;
    Fact<int> temperature_slowdown_c;
    bool mig = false;
    // NVLink bytes/s per direction over the active links, from the spec database's per-GPU figure
    // (NVIDIA quotes both directions together); unmeasured when the SKU or its links are unknown.
    double nvlink_capacity_bytes_per_s = kUnmeasured;
};

struct GpuRunSummary {
    RunGpuFacts facts;
    Stat utilization_percent, sm_activity_percent, sm_occupancy_percent, tensor_activity_percent;
    Stat dram_bandwidth_percent;
    Stat memory_used_bytes, power_w, sm_clock_mhz, temperature_c;
    Stat pcie_rx_bytes_per_s, pcie_tx_bytes_per_s, nvlink_rx_bytes_per_s, nvlink_tx_bytes_per_s;
    double power_limit_w = kUnmeasured;
    double pcie_replays = kUnmeasured;              // PCIe replays counted during the run (a counter reset: unmeasured)
    double utilization_peak_percent = kUnmeasured;  // over the whole run, not only the window
    double power_cap_fraction = kUnmeasured, thermal_fraction = kUnmeasured, power_brake_fraction = kUnmeasured;
    std::optional<int> job_processes_max;
    std::optional<int> gpu_processes_max;  // every process NVML listed on the GPU, the job's or not
    bool lost = false;
    double lost_at_s = kUnmeasured;
    // How the figures were obtained, as the share of the window's ticks (the rest point reads):
    // utilization and SM clock as interval means of the driver's samples (with the samples per
    // such tick), power as the energy counter's difference, the throttled shares from the
    // violation counters (else the reason bits at each tick).
    double utilization_interval_share = kUnmeasured;
    double utilization_samples_per_tick = kUnmeasured;
    double power_counter_share = kUnmeasured, sm_clock_interval_share = kUnmeasured;
    double throttle_counter_share = kUnmeasured;
};

struct HostRunSummary {
    int cpus = 0;
    int workers_max = 0, named_workers_max = 0, processes_max = 0;
    Stat tree_cpu_cores, main_cpu_cores, workers_cpu_cores, runnable, blocked, rq_wait_fraction;
    Stat host_busy_percent, steal_percent, psi_cpu_percent, psi_io_percent, psi_memory_percent;
    Stat disk_read_bytes_per_s, rchar_bytes_per_s, disk_write_bytes_per_s, net_rx_bytes_per_s, net_tx_bytes_per_s;
    Stat memory_used_bytes, swap_used_bytes;
};

// How much a finding weighs: a limit (high, moderate) or a note (info).
enum class RuleSeverity { kInfo, kModerate, kHigh };
// Whose a finding is: the job (fix the code or its settings), the server (the machine or its
// provider), or neither (information).
enum class RuleParty { kInfo, kJob, kServer };

// The report's words: "high", "moderate", "info"; "job", "server", "info".
inline const char* to_string(RuleSeverity s) {
    switch (s) {
        case RuleSeverity::kHigh: return "high";
        case RuleSeverity::kModerate: return "moderate";
        case RuleSeverity::kInfo: break;
    }
    return "info";
}
inline const char* to_string(RuleParty p) {
    switch (p) {
        case RuleParty::kJob: return "job";
        case RuleParty::kServer: return "server";
        case RuleParty::kInfo: break;
    }
    return "info";
}
// The words a person reads: "the job", "the server", "information".
inline const char* party_words(RuleParty p) {
    switch (p) {
        case RuleParty::kJob: return "the job";
        case RuleParty::kServer: return "the server";
        case RuleParty::kInfo: break;
    }
    return "information";
}
// A saved report's word back to the enum; a word no version wrote reads as a note.
inline RuleSeverity rule_severity_of(const std::string& w) {
    return w == "high" ? RuleSeverity::kHigh : w == "moderate" ? RuleSeverity::kModerate : RuleSeverity::kInfo;
}
inline RuleParty rule_party_of(const std::string& w) {
    return w == "job" ? RuleParty::kJob : w == "server" ? RuleParty::kServer : RuleParty::kInfo;
}

// One rule that fired, in plain words with the numbers behind it.
struct RuleFinding {
    std::string id;     // "B1"
    std::string title;  // "Input-bound (CPU preprocessing)"
    RuleSeverity severity = RuleSeverity::kInfo;
    std::string message;  // what happened, with numbers
    std::string action;   // what to do
    std::string source;   // where the thresholds come from
    RuleParty party = RuleParty::kInfo;
};

struct Diagnosis {
    std::optional<RuleFinding> primary;
    std::vector<RuleFinding> others;      // also fired, in rule order
    std::vector<std::string> not_judged;  // rules that could not be evaluated, with why
    bool gpu_used = false;
    std::optional<bool> seed_peak_reached;  // GPU utilization peak >= 90 %; none without a GPU
    double seed_peak_percent = kUnmeasured;
};

struct RunResult {
    std::vector<std::string> command;
    std::string tag, note;
    std::optional<JobEnd> end;  // the main process's end; none when it never started
    int exit_code = 0;          // the child's, as a shell gives it
    int stop_signal = 0;        // SIGINT/SIGTERM gpuvet received and forwarded
    double wall_s = 0;          // start of the command to the end of its tree
    int orphans_reaped = 0;
    double interval_s = 1;
    double window_start_s = 0, window_end_s = 0;
    std::string window_rule;
    std::string no_gpu_reason;  // non-empty: no GPU was visible (the run is host-only)
    std::vector<std::string> notes;
    std::vector<GpuRunSummary> gpus;
    HostRunSummary host;
    Diagnosis diagnosis;
    std::vector<TreeProcess> processes;
    std::map<std::string, std::string> absent;  // signal -> why it was not measured
    std::optional<std::string> record_path;
    std::size_t timeline_bytes = 0, timeline_thinned = 0;
    std::vector<int> gpu_indexes;
    std::vector<RunPoint> timeline;
};

}  // namespace gpuvet
