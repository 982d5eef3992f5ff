// The rule table: one row per rule, whole (run_rules.hpp), and the diagnosis that runs it. The
// threshold and source texts are built from run_rule's constants, so docs/run.md (which a test
// holds to run_rules_markdown()) and the messages quote the same numbers.
#include <algorithm>
#include <cmath>

#include "monitor/run_rules_detail.hpp"
#include "specs/pcie.hpp"

namespace gpuvet {

using namespace run_rule;

namespace {

constexpr int kNeverPrimary = 0;  // a note on the other findings, never the verdict (A1)

// "< 10 %" style words for a share or a percent.
std::string ge(double fraction) { return ">= " + pct_num(fraction); }
std::string pc(double percent) { return num(percent) + " %"; }

std::vector<RuleDef> build() {
    using F = RuleFamily;
    using S = RuleSeverity;
    using P = RuleParty;
    const std::string co = "in > " + pct_num(kCoOccur) + " of idle time";
    const std::string idle_high = "idle " + ge(kIdleHigh);
    const std::string tb_comm = "[P] TB plugin communication > " + pct_num(kCommTicks);
    const double gen3_lane_mb_s = pcie_lane_gbps(3).value_or(kUnmeasured) * 1000;
    return {
        {"A1", F::kGpuUse, "Short run", S::kInfo, P::kInfo, kNeverPrimary, "steady-window length",
         "< " + num(kShortWindow_s) + " s", "[G] SageMaker's patience idea", rule_a1},
        {"A3", F::kGpuUse, "GPU not used", S::kHigh, P::kJob, 1, "max utilization, job processes on GPUs",
         "max == 0 on every GPU", "[P] SageMaker LowGPUUtilization 'GPU not used'", rule_a3},
        {"A4", F::kGpuUse, "Some GPUs idle", S::kHigh, P::kJob, 9,
         "per-GPU mean and p95 utilization, the job's processes per GPU (memory in use where they cannot be matched)",
         "a GPU's mean < " + pc(kIdleGpuMeanPercent) + " (with or without a context of the job; >= " +
             num(kContextMemoryMib) + " MiB in use counts as a context) while another p95 > " + pc(kOtherGpuBusyP95),
         "[G] after SageMaker per-GPU checks", rule_a4},
        {"B1", F::kInput, "Input-bound (CPU preprocessing)", S::kHigh, P::kJob, 3,
         "GPU idle share (100 - utilization), worker CPU/runnable, host busy",
         "idle " + ge(kIdleModerate) + " (moderate) / " + pct_num(kIdleHigh) +
             " (high); workers >= " + num(kSaturatedCores) + " cores each or " + ge(kWorkersRunnable) +
             " runnable, or host >= " + pc(kHostSaturatedPercent) + ", " + co,
         "[P] xprof " + pct_num(kIdleHigh) + " (high); SageMaker CPUBottleneck gpu < " + num(kIdleBusyPercent) +
             ", cpu > " + num(kHostSaturatedPercent) + ", > " + pct_num(kCoOccur) + "; [G] " + pct_num(kIdleModerate) +
             " (moderate), runnable share",
         rule_b1},
        {"B2", F::kInput, "Data loading in the main process", S::kHigh, P::kJob, 4, "idle, worker count, main CPU",
         idle_high + ", no workers, main >= " + num(kSaturatedCores) + " cores " + co,
         "[G] after the TB plugin's advice", rule_b2},
        {"B3", F::kInput, "Too few DataLoader workers", S::kModerate, P::kJob, 8, "B1, worker count, CPUs",
         "B1 and workers < " + pct_num(kWorkersPerCpuMin) + " of CPUs",
         "[P] SageMaker Dataloader min " + pct_num(kWorkersPerCpuMin), rule_b3},
        {"B4", F::kInput, "Host CPU too small", S::kHigh, P::kServer, 7, "idle, host busy",
         idle_high + " and host >= " + pc(kHostSaturatedPercent) + " " + co, "[P] SageMaker CPUBottleneck", rule_b4},
        {"B5", F::kInput, "Input-bound (storage)", S::kHigh, P::kServer, 5,
         "idle, PSI io, processes in D state, read_bytes vs rchar",
         idle_high + ", workers not saturated, PSI io >= " + pc(kPsiIoPercent) + " or >= " + num(kBlockedProcesses) +
             " processes in D, " + co,
         "[P] SageMaker IOBottleneck (iowait > " + pct_num(kCoOccur) + "), [G] PSI instead of iowait (unreliable)",
         rule_b5},
        {"B6", F::kInput, "Input from a network filesystem", S::kHigh, P::kServer, 6, "idle, net rx, disk read",
         idle_high + ", net rx >= " + num(kNetRxBytesPerS / 1e6) + " MB/s, disk read < " +
             num(kDiskQuietBytesPerS / 1e6) + " MB/s",
         "[G]", rule_b6},
        {"B7", F::kInput, "CPU contention or stolen CPU", S::kModerate, P::kInfo, 28,
         "schedstat run-queue wait, /proc/stat steal",
         "wait " + ge(kRqWaitFraction) + " of runnable time, or steal >= " + pc(kStealPercent), "[G]", rule_b7},
        {"B8", F::kInput, "Host memory pressure", S::kHigh, P::kServer, 29, "PSI memory",
         "some >= " + pc(kPsiMemoryPercent), "[G]", rule_b8},
        {"C1", F::kFeed, "Periodic GPU stalls", S::kModerate, P::kJob, 20, "runs of idle ticks",
         "a gap >= " + num(kGap_s) + " s (no B rule fired)",
         "[N] Nsight Systems 'GPU starvation' " + num(kGap_s * 1000) + " ms", rule_c1},
        {"C2", F::kFeed, "Bursty utilization", S::kModerate, P::kJob, 21, "p5/p95 utilization",
         "p95 > " + pc(kBurstyP95) + " and p5 < " + pc(kBurstyP5) + " (no B rule fired)",
         "[P] SageMaker LowGPUUtilization fluctuation", rule_c2},
        {"C3", F::kFeed, "Launch / Python-overhead bound", S::kHigh, P::kJob, 16,
         "utilization, GPM SM activity (else power), DRAM, links",
         "busy >= " + pc(kLaunchBoundBusyPercent) + ", SM < " + pc(kSmIneffectivePercent) + " (else power < " +
             pct_num(kLowPowerFraction) + " of limit), DRAM < " + pc(kLaunchDramLow) + ", little PCIe/NVLink traffic",
         "[N] DCGM: SM activity < " + num(kSmIneffectivePercent / 100) + " likely ineffective; [G] power proxy",
         rule_c3},
        {"D1", F::kCommunication, "Communication-bound over PCIe (no NVLink)", S::kHigh, P::kServer, 2,
         "NVLink links, utilization, SM (else power), PCIe rx+tx",
         ">= 2 GPUs, no active NVLink, busy >= " + pc(kCommBusy) + " with SM < " + pc(kCommSm) + " and PCIe rx+tx " +
             ge(kCommLinkShare) + " of both directions' capacity in " + ge(kCommTicks) + " of the time",
         tb_comm + "; NCCL spins few SMs (nccl#689)", rule_d1},
        {"D2", F::kCommunication, "Communication-bound: links near capacity", S::kHigh, P::kJob, 15,
         "NVLink rx/tx against the spec database's per-GPU figure, PCIe rx/tx against generation x width",
         ">= 2 GPUs, a direction " + ge(kLinkSaturated) + " of the link's capacity in " + ge(kCommTicks) +
             " of the time",
         "[G] after the research table's D2 (" + pct_num(kLinkSaturated) + "); " + tb_comm, rule_d2},
        {"D3", F::kCommunication, "Straggler: one GPU slower than its peers", S::kHigh, P::kServer, 14,
         "per-GPU mean SM clock, power and utilization, power-cap and thermal shares, against the peers' median",
         ">= 2 GPUs; SM clock <= " + pct_num(kStragglerClock) + ", or power <= " + pct_num(kStragglerPower) +
             " at utilization within " + num(kSameWorkPoints) + " points, or a power/thermal reason " +
             ge(kStragglerReason) + " of the time while the peers' median is <= " + pct_num(kPeersReasonMax),
         "[G] (synchronous training waits for the slowest rank)", rule_d3},
        {"E1", F::kGpuLimit, "Memory-bandwidth bound", S::kModerate, P::kJob, 18, "GPM DRAM bandwidth, tensor activity",
         "DRAM >= " + pc(kDramBound) + ", tensor < " + pc(kTensorLow),
         "[N] DCGM: ~" + pc(kDramPracticalPeakPercent) + " DRAM is the practical peak; [G] cut-offs", rule_e1},
        {"E2", F::kGpuLimit, "Compute-bound (healthy)", S::kInfo, P::kInfo, 22,
         "GPM SM and tensor activity (else utilization and power)",
         "SM >= " + pc(kSmBound) + " and tensor >= " + pc(kTensorUsed) + "; without GPM busy >= " + pc(kGpuBoundBusy) +
             " and power " + ge(kGpuBoundPower) + " of limit",
         "[N] DCGM: SM >= " + num(kSmBound / 100) + " necessary; [G] the power proxy", rule_e2},
        {"E3", F::kGpuLimit, "Tensor cores unused", S::kModerate, P::kJob, 19, "GPM SM and tensor activity",
         "SM >= " + pc(kSmTensorless) + ", tensor < " + pc(kTensorNone), "[G] after the TB plugin's AMP advice",
         rule_e3},
        {"E4", F::kGpuLimit, "Low occupancy", S::kInfo, P::kJob, 24, "GPM SM activity, SM occupancy, DRAM bandwidth",
         "SM >= " + pc(kOccupancySmBusy) + ", occupancy < " + pc(kOccupancyLow) + ", DRAM < " + pc(kOccupancyDramLow) +
             " (advisory)",
         "[G] cut-offs; [N] DCGM: higher occupancy does not always mean better", rule_e4},
        {"E5", F::kGpuLimit, "PCIe link below its maximum or saturated by copies", S::kHigh, P::kServer, 17,
         "current vs max gen/width; PCIe rx, tx, SM",
         "current < max under load; or rx " + ge(kCopyRxShare) + " of capacity, tx < " + pct_num(kCopyTxShareMax) +
             ", low SM in " + ge(kCommTicks) + " of the time",
         "[N] link capacity (Gen3 " + num(std::round(gen3_lane_mb_s)) + " MB/s per lane); [G] shares", rule_e5},
        {"E6", F::kGpuLimit, "GPU memory nearly full", S::kInfo, P::kInfo, kNeverPrimary, "peak memory used / total",
         "> " + pct_num(kMemoryFullFraction), "[P] TB plugin " + pct_num(kMemoryFullFraction), rule_e6},
        {"E7", F::kGpuLimit, "Under-utilized, nothing saturated", S::kModerate, P::kJob, 23,
         "p95 GPU busy, host CPU, GPU memory", "all < " + pc(kUnderP95), "[P] SageMaker BatchSize", rule_e7},
        {"F1", F::kHardware, "Throttled by the power cap", S::kHigh, P::kServer, 13,
         "power violation counter (else the sw_power_cap reason bit at each tick), SM clock / max",
         "capped " + ge(kPowerCapTicks) + " of the busy time and clock < " + pct_num(kClockFraction) +
             " of max; provider-lowered if limit < " + pct_num(kProviderLimit) + " of default",
         "[N] nvmlDeviceGetViolationStatus, nvmlClocksEventReasonSwPowerCap; [G] shares", rule_f1},
        {"F2", F::kHardware, "Thermal slowdown", S::kHigh, P::kServer, 12, "sw/hw thermal reason bits, temperature",
         "any HW thermal, or SW thermal " + ge(kThermalTicks), "[N] nvmlClocksEventReason*ThermalSlowdown; [G] share",
         rule_f2},
        {"F3", F::kHardware, "Hardware power brake", S::kHigh, P::kServer, 10, "hw_power_brake reason bit", "any tick",
         "[N] HwPowerBrakeSlowdown", rule_f3},
        {"F4", F::kHardware, "PCIe link errors", S::kHigh, P::kServer, 11,
         "PCIe replay counter (NVML), first and last sample of the run", "any increase",
         "[P] KempnerPulse WARN on rising replays; [N] a replay is a link-level resend", rule_f4},
        {"H1", F::kHostOnly, "CPU-bound", S::kInfo, P::kJob, 26, "processes in state R, tree CPU",
         "mean runnable >= " + num(kHostCpuBound), "[G] state sampling (counts waiting for a CPU on a busy box)",
         rule_h1},
        {"H2", F::kHostOnly, "Storage-bound", S::kInfo, P::kJob, 25, "processes in state D, read_bytes, PSI io",
         "mean blocked >= " + num(kHostBlocked) + " processes while reading >= " + num(kDiskQuietBytesPerS / 1e6) +
             " MB/s from storage",
         "[G]", rule_h2},
        {"H3", F::kHostOnly, "Mostly waiting", S::kInfo, P::kJob, 27, "tree CPU, state D",
         "< " + num(kHostIdleCores) + " cores and not blocked", "[G]", rule_h3},
    };
}

}  // namespace

const std::vector<RuleDef>& run_rules() {
    static const std::vector<RuleDef> t = build();
    return t;
}

const RuleDef* run_rule_of(std::string_view id) {
    for (const RuleDef& r : run_rules())
        if (r.id == id) return &r;
    return nullptr;
}

std::vector<std::string> primary_order() {
    // Host limits that starve the GPU first, then GPUs left idle, hardware limits, what limits the GPU
    // itself, and last the host-only verdicts and the contention notes (the ranks of the table).
    std::vector<const RuleDef*> ranked;
    for (const RuleDef& r : run_rules())
        if (r.rank != kNeverPrimary) ranked.push_back(&r);
    std::stable_sort(ranked.begin(), ranked.end(),
                     [](const RuleDef* a, const RuleDef* b) { return a->rank < b->rank; });
    std::vector<std::string> ids;
    for (const RuleDef* r : ranked) ids.push_back(r->id);
    return ids;
}

std::string run_rules_markdown() {
    std::string t = "| ID | title | signals | threshold | source |\n|---|---|---|---|---|\n";
    for (const RuleDef& r : run_rules())
        t += "| " + r.id + " | " + r.title + " | " + r.signals + " | " + r.threshold + " | " + r.source + " |\n";
    return t;
}

Diagnosis diagnose(const RunEvidence& e) {
    const SharedVerdicts shared = shared_verdicts(e);
    Diagnosis d;
    d.gpu_used = !shared.job.empty();
    std::vector<RuleFinding> fired;
    const RuleDef* primary = nullptr;
    for (const RuleDef& r : run_rules()) {
        std::optional<RuleVerdict> v = r.judge(e, shared);
        if (!v) continue;
        RuleFinding f;
        f.id = r.id;
        f.title = r.title;
        f.severity = v->severity.value_or(r.severity);
        f.party = v->party.value_or(r.party);
        f.message = std::move(v->message);
        f.action = std::move(v->action);
        f.source = r.source;
        fired.push_back(std::move(f));
        if (r.rank != kNeverPrimary && (!primary || r.rank < primary->rank)) primary = &r;
    }
    if (primary) {
        auto it = std::find_if(fired.begin(), fired.end(), [&](const RuleFinding& f) { return f.id == primary->id; });
        d.primary = std::move(*it);
        fired.erase(it);
    }
    d.others = std::move(fired);
    if (e.gpus_visible && !e.gpus.empty()) {
        double peak = kUnmeasured;
        for (const GpuRunSummary& g : e.gpus)
            if (measured(g.utilization_peak_percent))
                peak = measured(peak) ? std::max(peak, g.utilization_peak_percent) : g.utilization_peak_percent;
        d.seed_peak_percent = peak;
        if (measured(peak)) d.seed_peak_reached = peak >= kSeedPeakPercent;
    }
    bool gpm = false;
    for (const GpuRunSummary& g : e.gpus) gpm = gpm || g.sm_activity_percent.measured();
    if (e.gpus_visible && !gpm)
        d.not_judged.push_back(
            "C3, E1-E4 without GPM SM/tensor/DRAM activity (Hopper or newer, read by the driver): "
            "C3 and E2 use power as the proxy, E1, E3 and E4 are not judged");
    if (std::any_of(e.gpus.begin(), e.gpus.end(), [](const GpuRunSummary& g) { return g.facts.amd; }))
        d.not_judged.push_back(
            "on AMD GPUs: E1, E3 and E4 need NVIDIA's GPM (SM, tensor-pipe and DRAM activity), which AMD's driver "
            "does not report: not judged; D1 and D2 count xGMI links where NVLink is named (their capacity is not "
            "in the spec database, so D2 judges PCIe only)");
    d.not_judged.push_back("D4 (topology): outside this rule table (docs/run.md lists the rules gpuvet run judges)");
    for (const GpuRunSummary& g : e.gpus)
        if (g.facts.nvlink_active.value_or(0) > 0 && !measured(g.facts.nvlink_capacity_bytes_per_s)) {
            d.not_judged.push_back("D2 over NVLink: the spec database has no NVLink figure for this GPU (PCIe judged)");
            break;
        }
    return d;
}

}  // namespace gpuvet
