// The host's rules: B, the host does not feed the GPU (with the verdicts other families read,
// computed once), and H, the verdicts of a host-only run (no GPU visible, or none used).
#include <algorithm>

#include "monitor/run_rules_detail.hpp"

namespace gpuvet::run_rule {

namespace {

bool workers_saturated(const RunPoint& p) {
    const HostPoint& h = p.host;
    if (h.workers <= 0) return false;
    if (measured(h.workers_runnable_fraction) && h.workers_runnable_fraction >= kWorkersRunnable) return true;
    return measured(h.workers_cpu_cores) && h.workers_cpu_cores / h.workers >= kSaturatedCores;
}
bool host_saturated(const RunPoint& p) {
    return measured(p.host.host_busy_percent) && p.host.host_busy_percent >= kHostSaturatedPercent;
}
bool main_saturated(const RunPoint& p) {
    return measured(p.host.main_cpu_cores) && p.host.main_cpu_cores >= kSaturatedCores;
}
bool storage_waiting(const RunPoint& p) {
    return (measured(p.host.psi_io_percent) && p.host.psi_io_percent >= kPsiIoPercent) ||
           (measured(p.host.blocked) && p.host.blocked >= kBlockedProcesses);
}

bool co_occurs(double share) { return measured(share) && share > kCoOccur; }

}  // namespace

InputVerdicts input_verdicts(const RunEvidence& e, const std::vector<std::size_t>& job, double idle_share) {
    InputVerdicts v;
    if (!measured(idle_share)) return v;
    const Idle idle{job};
    const HostRunSummary& h = e.host;
    if (idle_share >= kIdleModerate && h.workers_max != 0) {
        v.cpu_share =
            e.window.weighted_share([](const RunPoint& p) { return workers_saturated(p) || host_saturated(p); }, idle);
        v.cpu_preprocessing = co_occurs(v.cpu_share);
    }
    if (idle_share < kIdleHigh) return v;
    if (h.workers_max <= 0) {
        v.main_share = e.window.weighted_share(main_saturated, idle);
        v.main_process = co_occurs(v.main_share);
    }
    v.host_share = e.window.weighted_share(host_saturated, idle);
    v.host_cpu = co_occurs(v.host_share);
    v.storage_share =
        e.window.weighted_share([](const RunPoint& p) { return storage_waiting(p) && !workers_saturated(p); }, idle);
    v.storage = co_occurs(v.storage_share);
    v.network = measured(h.net_rx_bytes_per_s.mean) && h.net_rx_bytes_per_s.mean >= kNetRxBytesPerS &&
                !(measured(h.disk_read_bytes_per_s.mean) && h.disk_read_bytes_per_s.mean >= kDiskQuietBytesPerS);
    return v;
}

Judged rule_b1(const RunEvidence& e, const SharedVerdicts& s) {
    if (!s.input.cpu_preprocessing) return std::nullopt;
    const Stat& w = e.host.workers_cpu_cores;
    Stat runnable = e.window.stat([](const RunPoint& p) { return p.host.workers_runnable_fraction; });
    // Both figures: on a contended box a saturated worker gets little CPU but is always runnable.
    std::string per = fmt(w.mean / std::max(1, e.host.workers_max), 2) + " cores each, runnable " +
                      (runnable.measured() ? pct(runnable.mean) : std::string("n/a")) + " of the time";
    RuleVerdict v{"The GPU was idle " + pct(s.idle_share) + " of the time while the " +
                      std::to_string(e.host.workers_max) + " worker process(es) were busy (" + per +
                      "; workers or host CPU saturated in " + pct(s.input.cpu_share) +
                      " of the idle time): the input pipeline does not keep up.",
                  "Add DataLoader workers if cores are free, move augmentation to the GPU (DALI, torchvision v2 "
                  "on CUDA), or pre-process the data once offline.",
                  {},
                  {}};
    if (s.idle_share < kIdleHigh) v.severity = RuleSeverity::kModerate;
    return v;
}

Judged rule_b2(const RunEvidence& e, const SharedVerdicts& s) {
    if (!s.input.main_process) return std::nullopt;
    return RuleVerdict{"The GPU was idle " + pct(s.idle_share) +
                           " of the time while the main process, with no worker processes, kept one core busy (" +
                           fmt(e.host.main_cpu_cores.mean, 2) + " cores).",
                       "Set DataLoader(num_workers=4..8, pin_memory=True, persistent_workers=True).",
                       {},
                       {}};
}

Judged rule_b3(const RunEvidence& e, const SharedVerdicts& s) {
    if (!s.input.cpu_preprocessing || e.host.cpus <= 0) return std::nullopt;
    if (e.host.workers_max >= kWorkersPerCpuMin * e.host.cpus) return std::nullopt;
    return RuleVerdict{"Only " + std::to_string(e.host.workers_max) + " workers for " + std::to_string(e.host.cpus) +
                           " CPUs, and they are saturated.",
                       "Raise num_workers towards " +
                           std::to_string(static_cast<int>(kWorkersPerCpuMin * e.host.cpus)) + " (" +
                           pct_num(kWorkersPerCpuMin) + " of the CPUs).",
                       {},
                       {}};
}

Judged rule_b4(const RunEvidence& e, const SharedVerdicts& s) {
    if (!s.input.host_cpu) return std::nullopt;
    return RuleVerdict{"All CPU cores were busy (host " + fmt(e.host.host_busy_percent.mean) + " % on " +
                           std::to_string(e.host.cpus) + " CPUs) in " + pct(s.input.host_share) +
                           " of the time the GPU was idle.",
                       "Decode and augment on the GPU (DALI, nvJPEG), or rent a host with more vCPUs per GPU.",
                       {},
                       {}};
}

Judged rule_b5(const RunEvidence& e, const SharedVerdicts& s) {
    if (!s.input.storage) return std::nullopt;
    const HostRunSummary& h = e.host;
    double hit = (measured(h.rchar_bytes_per_s.mean) && h.rchar_bytes_per_s.mean > 0)
                     ? 1 - std::min(1.0, h.disk_read_bytes_per_s.mean / h.rchar_bytes_per_s.mean)
                     : kUnmeasured;
    return RuleVerdict{"The GPU waited for the disk: idle " + pct(s.idle_share) +
                           " of the time while the job's processes were blocked on I/O (I/O pressure " +
                           fmt(h.psi_io_percent.mean) + " %, " + mbps(h.disk_read_bytes_per_s.mean) +
                           " from storage, page-cache hits " + (measured(hit) ? pct(hit) : "n/a") + ").",
                       "Copy the dataset to local NVMe or RAM (/dev/shm), use larger sequential shards (WebDataset, "
                       "TFRecord), or more reader workers.",
                       {},
                       {}};
}

Judged rule_b6(const RunEvidence& e, const SharedVerdicts& s) {
    if (!s.input.network) return std::nullopt;
    return RuleVerdict{"The GPU was idle " + pct(s.idle_share) + " of the time while the host received " +
                           mbps(e.host.net_rx_bytes_per_s.mean) +
                           " from the network and read almost nothing from local disk.",
                       "Stage the dataset on local disk before training, or cache it in RAM.",
                       {},
                       {}};
}

Judged rule_b7(const RunEvidence& e, const SharedVerdicts&) {
    const HostRunSummary& h = e.host;
    bool wants_cpu = measured(h.tree_cpu_cores.mean) && h.tree_cpu_cores.mean >= kWantsCpuCores;
    bool rq = wants_cpu && measured(h.rq_wait_fraction.mean) && h.rq_wait_fraction.mean >= kRqWaitFraction;
    bool steal = measured(h.steal_percent.mean) && h.steal_percent.mean >= kStealPercent;
    if (!rq && !steal) return std::nullopt;
    RuleVerdict v{"The job's processes waited for a CPU " +
                      (measured(h.rq_wait_fraction.mean) ? pct(h.rq_wait_fraction.mean) : std::string("n/a")) +
                      " of the time they wanted to run; the hypervisor stole " + fmt(h.steal_percent.mean, 1) +
                      " % of the CPU time.",
                  steal ? "The VM's vCPUs are oversold: ask the provider for dedicated cores or change host."
                        : "Other processes compete for the CPUs: stop them, or pin the job (taskset) to free cores.",
                  {},
                  {}};
    // Stolen time is the provider's doing; a neighbour process on the box is only worth knowing.
    if (steal) v.severity = RuleSeverity::kHigh, v.party = RuleParty::kServer;
    return v;
}

Judged rule_b8(const RunEvidence& e, const SharedVerdicts&) {
    const Stat& m = e.host.psi_memory_percent;
    if (!measured(m.mean) || m.mean < kPsiMemoryPercent) return std::nullopt;
    return RuleVerdict{"Tasks stalled on memory " + fmt(m.mean) + " % of the time (swap used " +
                           fmt(e.host.swap_used_bytes.max / 1e9, 1) + " GB).",
                       "Lower the workers' prefetch_factor or the number of workers, or use a host with more RAM.",
                       {},
                       {}};
}

// ---- H: host-only verdicts ---------------------------------------------------------------------

Judged rule_h1(const RunEvidence& e, const SharedVerdicts& s) {
    const HostRunSummary& h = e.host;
    if (!s.host_only || !measured(h.runnable.mean) || h.runnable.mean < kHostCpuBound) return std::nullopt;
    return RuleVerdict{"The job kept " + fmt(h.runnable.mean, 1) +
                           " process(es) on or waiting for a CPU on average and used " + fmt(h.tree_cpu_cores.mean, 2) +
                           " cores (main " + fmt(h.main_cpu_cores.mean, 2) + ", " + std::to_string(h.workers_max) +
                           " worker(s) " + fmt(h.workers_cpu_cores.mean, 2) + ").",
                       "The CPU is the limit of this job: more cores, or moving the work to the GPU, make it faster.",
                       {},
                       {}};
}

Judged rule_h2(const RunEvidence& e, const SharedVerdicts& s) {
    const HostRunSummary& h = e.host;
    // A process blocked in D for 30 % of the samples while the tree reads from storage: on a busy
    // box the rest of its time is spent waiting for a CPU (R), so "more D than R" would miss it.
    if (!s.host_only || !measured(h.blocked.mean) || h.blocked.mean < kHostBlocked) return std::nullopt;
    if (!measured(h.disk_read_bytes_per_s.mean) || h.disk_read_bytes_per_s.mean < kDiskQuietBytesPerS)
        return std::nullopt;
    return RuleVerdict{"The job's processes were blocked on I/O (state D) " + fmt(h.blocked.mean, 1) +
                           " on average, reading " + mbps(h.disk_read_bytes_per_s.mean) + " from storage (" +
                           mbps(h.rchar_bytes_per_s.mean) + " returned by read calls); I/O pressure " +
                           fmt(h.psi_io_percent.mean) + " %.",
                       "Storage is the limit: local NVMe, RAM (/dev/shm) or larger sequential reads help.",
                       {},
                       {}};
}

Judged rule_h3(const RunEvidence& e, const SharedVerdicts& s) {
    const HostRunSummary& h = e.host;
    if (!s.host_only || !measured(h.tree_cpu_cores.mean) || h.tree_cpu_cores.mean >= kHostIdleCores)
        return std::nullopt;
    if (measured(h.blocked.mean) && h.blocked.mean >= kHostBlocked) return std::nullopt;
    return RuleVerdict{"The job used " + fmt(h.tree_cpu_cores.mean, 3) +
                           " cores and was rarely blocked on storage: it slept or waited (a timer, a lock, the "
                           "network) most of the time.",
                       "Nothing on this machine limits it; look at what it waits for.",
                       {},
                       {}};
}

}  // namespace gpuvet::run_rule
