#include "monitor/run_rules.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "gpu/clock_reasons.hpp"
#include "specs/pcie.hpp"

namespace gpuvet {

using namespace run_rule;

namespace {

std::string fmt(double v, int digits = 0) {
    if (!measured(v)) return "n/a";
    std::ostringstream o;
    o.setf(std::ios::fixed);
    o.precision(digits);
    o << v;
    return o.str();
}
std::string pct(double fraction) { return fmt(100 * fraction) + " %"; }
std::string gbps(double bytes_per_s) { return fmt(bytes_per_s / 1e9, 1) + " GB/s"; }
std::string mbps(double bytes_per_s) { return fmt(bytes_per_s / 1e6, 1) + " MB/s"; }

RuleFinding finding(const char* id, const char* title, std::string severity, std::string party, std::string message,
                    std::string action) {
    RuleFinding f;
    f.id = id;
    f.title = title;
    f.severity = std::move(severity);
    f.party = std::move(party);
    f.message = std::move(message);
    f.action = std::move(action);
    return f;
}

// A GPU that did no work while another of the run's GPUs was busy (A4's GPUs).
bool idle_among_busy(const RunEvidence& e, const GpuRunSummary& g) {
    if (g.lost || !measured(g.utilization_percent.mean) || g.utilization_percent.mean >= kIdleGpuMeanPercent)
        return false;
    return std::any_of(e.gpus.begin(), e.gpus.end(), [](const GpuRunSummary& o) {
        return !o.lost && measured(o.utilization_percent.p95) && o.utilization_percent.p95 > kOtherGpuBusyP95;
    });
}

// GPUs the job used: busy at some tick, or holding one of the job's processes. A GPU left idle
// while the others worked is A4's finding, not part of the job's idle share (B rules).
std::vector<std::size_t> job_gpus(const RunEvidence& e) {
    std::vector<std::size_t> v;
    for (std::size_t k = 0; k < e.gpus.size(); ++k)
        if (((measured(e.gpus[k].utilization_peak_percent) && e.gpus[k].utilization_peak_percent > 0) ||
             e.gpus[k].job_processes_max > 0) &&
            !idle_among_busy(e, e.gpus[k]))
            v.push_back(k);
    return v;
}

double tick_busy(const RunPoint& p, const std::vector<std::size_t>& job) {
    double sum = 0;
    int n = 0;
    for (std::size_t k : job)
        if (k < p.gpus.size() && measured(p.gpus[k].utilization_percent)) sum += p.gpus[k].utilization_percent, ++n;
    return n ? sum / n : kUnmeasured;
}

// How idle the job's GPUs were. NVML's utilization is the share of its sample period (1/6 to 1 s)
// in which a kernel ran, so sub-second input stalls show as partial utilization, not as 0 %: the
// idle share is the time-weighted mean of (100 - busy) %, and a host cause is weighed by how idle
// each tick was. Whole idle ticks (< 10 %) are what C1's gaps count.
struct Idle {
    std::vector<std::size_t> job;
    double share = kUnmeasured;                   // mean idle fraction over the window
    double operator()(const RunPoint& p) const {  // this tick's idle fraction
        double b = tick_busy(p, job);
        return measured(b) ? std::clamp(1 - b / 100, 0.0, 1.0) : kUnmeasured;
    }
    bool whole_tick(const RunPoint& p) const {
        double b = tick_busy(p, job);
        return measured(b) && b < kIdleBusyPercent;
    }
};
Idle idle_of(const RunEvidence& e) {
    Idle i;
    i.job = job_gpus(e);
    if (!i.job.empty()) i.share = e.window.stat(i).mean;
    return i;
}

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

// PCIe bytes/s per direction for a generation and width (specs/pcie: the one table of lane rates).
double pcie_capacity(double gen, double width) {
    if (!measured(gen) || !measured(width) || gen < 1 || width < 1) return kUnmeasured;
    auto gbps = pcie_gbps_per_direction(std::min(6, static_cast<int>(gen)), static_cast<int>(width));
    return gbps ? *gbps * 1e9 : kUnmeasured;
}

// SM work low at this tick: SM activity when GPM reads it, else power below 40 % of the limit.
bool low_sm(const GpuPoint& g, double sm_threshold) {
    if (measured(g.sm_activity_percent)) return g.sm_activity_percent < sm_threshold;
    return measured(g.power_w) && measured(g.power_limit_w) && g.power_limit_w > 0 &&
           g.power_w < kLowPowerFraction * g.power_limit_w;
}

bool any_b_fired(const RunEvidence& e);

// ---- A: is the GPU used at all -------------------------------------------------------------

std::optional<RuleFinding> rule_a1(const RunEvidence& e) {
    if (e.window_s >= kShortWindow_s) return std::nullopt;
    return finding("A1", "Short run", "info", "info",
                   "The steady-state window is " + fmt(e.window_s, 1) + " s, under " + fmt(kShortWindow_s) +
                       " s: the verdict rests on few samples.",
                   "Run 2-3 minutes of real training steps for a firm verdict.");
}

std::optional<RuleFinding> rule_a3(const RunEvidence& e) {
    if (!e.gpus_visible || e.gpus.empty() || !job_gpus(e).empty()) return std::nullopt;
    return finding("A3", "GPU not used", "high", "job",
                   "No GPU did any work during the run (utilization stayed at 0 % on all " +
                       std::to_string(e.gpus.size()) + " GPU(s)) and none held a process of the job.",
                   "Check that the job puts its model and data on the GPU (device=\"cuda\") and that "
                   "CUDA_VISIBLE_DEVICES names the GPUs.");
}

std::string gpu_list(const std::vector<int>& gpus) {
    std::string list;
    for (int i : gpus) list += (list.empty() ? "" : ", ") + std::to_string(i);
    return list;
}

// Why the job's processes cannot be matched on GPU `g`, empty when they can: its process list was
// not read, or no GPU listed a process of the job although one of them worked (inside a container
// NVML lists the host's PIDs, which are not the job's).
std::string unmatched_why(const RunEvidence& e, const GpuRunSummary& g) {
    if (g.job_processes_max < 0) {
        std::string why = "its process list could not be read";
        if (e.absent)
            if (auto it = e.absent->find("gpu" + std::to_string(g.facts.index) + ".processes"); it != e.absent->end())
                why += ": " + it->second;
        return why;
    }
    bool any_job =
        std::any_of(e.gpus.begin(), e.gpus.end(), [](const GpuRunSummary& o) { return o.job_processes_max > 0; });
    bool any_work = std::any_of(e.gpus.begin(), e.gpus.end(), [](const GpuRunSummary& o) {
        return measured(o.utilization_percent.p95) && o.utilization_percent.p95 > kOtherGpuBusyP95;
    });
    if (!any_job && any_work)
        return "no GPU listed a process of the job although the others worked (inside a container NVML lists the "
               "host's process ids)";
    return {};
}

// What A4 knows of an idle GPU's context: held (a process of the job, or memory in use where the
// processes cannot be matched), not held, or unknown; with the words that say how it knows.
enum class Context { kHeld, kNotHeld, kUnknown };
Context context_on(const RunEvidence& e, const GpuRunSummary& g, std::string& how) {
    std::string why = unmatched_why(e, g);
    if (why.empty()) return g.job_processes_max > 0 ? Context::kHeld : Context::kNotHeld;
    double mem = g.memory_used_bytes.p50;
    if (!measured(mem)) {
        how = "whether the job holds a context there could not be told (" + why + ")";
        return Context::kUnknown;
    }
    how =
        fmt(mem / (1024 * 1024)) + " MiB of its memory in use (the job's processes could not be matched: " + why + ")";
    return mem >= kContextMemoryBytes ? Context::kHeld : Context::kNotHeld;
}

// A4: GPUs idle while the others worked, told apart by whether the job holds a context there.
std::optional<RuleFinding> rule_a4(const RunEvidence& e) {
    if (e.gpus.size() < 2) return std::nullopt;
    std::vector<int> by_pid[2];  // [0]: no process of the job, [1]: the job's process on it
    std::vector<std::string> by_memory;
    std::size_t idle = 0, held = 0, unheld = 0;
    for (const GpuRunSummary& g : e.gpus) {
        if (!idle_among_busy(e, g)) continue;
        ++idle;
        std::string how;
        Context c = context_on(e, g, how);
        held += c == Context::kHeld, unheld += c == Context::kNotHeld;
        std::string id = "GPU " + std::to_string(g.facts.index);
        if (how.empty()) by_pid[c == Context::kHeld].push_back(g.facts.index);
        else if (c == Context::kHeld)
            by_memory.push_back(id + " ran nothing with " + how + ": a context is held there");
        else if (c == Context::kNotHeld) by_memory.push_back(id + " stayed at 0 % with " + how + ": no context there");
        else by_memory.push_back(id + " stayed at 0 %; " + how);
    }
    if (idle == 0) return std::nullopt;
    std::size_t n = e.gpus.size();
    std::vector<std::string> parts = by_memory;
    if (!by_pid[0].empty())
        parts.insert(parts.begin(), "GPU " + gpu_list(by_pid[0]) + " stayed at 0 % with no process of the job on it");
    if (!by_pid[1].empty())
        parts.push_back("GPU " + gpu_list(by_pid[1]) + " held a context of the job but ran nothing there");
    std::string msg = "Only " + std::to_string(n - idle) + " of " + std::to_string(n) + " GPUs did work (" +
                      pct(double(idle) / double(n)) + " of the rented GPU capacity unused): ";
    for (std::size_t i = 0; i < parts.size(); ++i) msg += (i ? "; " : "") + parts[i];
    msg += ", while the others ran above " + fmt(kOtherGpuBusyP95) + " %.";
    std::string action;
    const std::size_t unknown = idle - held - unheld;
    if (unheld || unknown)
        action = "Launch one rank per GPU (torchrun --nproc-per-node=" + std::to_string(n) + ", DDP)";
    if (held || unknown)
        action += std::string(action.empty() ? ""
                              : unknown      ? "; or, if the job does hold a context there, "
                                             : "; ") +
                  "fix the device placement: each rank should use its own GPU (torch.cuda.set_device(local_rank)), "
                  "or hide the unused GPU with CUDA_VISIBLE_DEVICES";
    return finding("A4", "Some GPUs idle", "high", "job", msg, action + "; or rent fewer GPUs.");
}

// ---- B: the host does not feed the GPU ---------------------------------------------------

std::optional<RuleFinding> rule_b1(const RunEvidence& e) {
    Idle idle = idle_of(e);
    if (!measured(idle.share) || idle.share < kIdleModerate || e.host.workers_max == 0) return std::nullopt;
    double co =
        e.window.weighted_share([](const RunPoint& p) { return workers_saturated(p) || host_saturated(p); }, idle);
    if (!measured(co) || co <= kCoOccur) return std::nullopt;
    const Stat& w = e.host.workers_cpu_cores;
    Stat runnable = e.window.stat([](const RunPoint& p) { return p.host.workers_runnable_fraction; });
    // Both figures: on a contended box a saturated worker gets little CPU but is always runnable.
    std::string per = fmt(w.mean / std::max(1, e.host.workers_max), 2) + " cores each, runnable " +
                      (runnable.measured() ? pct(runnable.mean) : std::string("n/a")) + " of the time";
    return finding("B1", "Input-bound (CPU preprocessing)", idle.share >= kIdleHigh ? "high" : "moderate", "job",
                   "The GPU was idle " + pct(idle.share) + " of the time while the " +
                       std::to_string(e.host.workers_max) + " worker process(es) were busy (" + per +
                       "; workers or host CPU saturated in " + pct(co) +
                       " of the idle time): the input pipeline "
                       "does not keep up.",
                   "Add DataLoader workers if cores are free, move augmentation to the GPU (DALI, torchvision v2 "
                   "on CUDA), or pre-process the data once offline.");
}

std::optional<RuleFinding> rule_b2(const RunEvidence& e) {
    Idle idle = idle_of(e);
    if (!measured(idle.share) || idle.share < kIdleHigh || e.host.workers_max > 0) return std::nullopt;
    double co = e.window.weighted_share(main_saturated, idle);
    if (!measured(co) || co <= kCoOccur) return std::nullopt;
    return finding("B2", "Data loading in the main process", "high", "job",
                   "The GPU was idle " + pct(idle.share) +
                       " of the time while the main process, with no worker "
                       "processes, kept one core busy (" +
                       fmt(e.host.main_cpu_cores.mean, 2) + " cores).",
                   "Set DataLoader(num_workers=4..8, pin_memory=True, persistent_workers=True).");
}

std::optional<RuleFinding> rule_b3(const RunEvidence& e) {
    if (!rule_b1(e) || e.host.cpus <= 0) return std::nullopt;
    if (e.host.workers_max >= kWorkersPerCpuMin * e.host.cpus) return std::nullopt;
    return finding("B3", "Too few DataLoader workers", "moderate", "job",
                   "Only " + std::to_string(e.host.workers_max) + " workers for " + std::to_string(e.host.cpus) +
                       " CPUs, and they are saturated.",
                   "Raise num_workers towards " + std::to_string(static_cast<int>(kWorkersPerCpuMin * e.host.cpus)) +
                       " (70 % of the CPUs).");
}

std::optional<RuleFinding> rule_b4(const RunEvidence& e) {
    Idle idle = idle_of(e);
    if (!measured(idle.share) || idle.share < kIdleHigh) return std::nullopt;
    double co = e.window.weighted_share(host_saturated, idle);
    if (!measured(co) || co <= kCoOccur) return std::nullopt;
    return finding("B4", "Host CPU too small", "high", "server",
                   "All CPU cores were busy (host " + fmt(e.host.host_busy_percent.mean) + " % on " +
                       std::to_string(e.host.cpus) + " CPUs) in " + pct(co) + " of the time the GPU was idle.",
                   "Decode and augment on the GPU (DALI, nvJPEG), or rent a host with more vCPUs per GPU.");
}

std::optional<RuleFinding> rule_b5(const RunEvidence& e) {
    Idle idle = idle_of(e);
    if (!measured(idle.share) || idle.share < kIdleHigh) return std::nullopt;
    double co =
        e.window.weighted_share([](const RunPoint& p) { return storage_waiting(p) && !workers_saturated(p); }, idle);
    if (!measured(co) || co <= kCoOccur) return std::nullopt;
    const HostRunSummary& h = e.host;
    double hit = (measured(h.rchar_bytes_per_s.mean) && h.rchar_bytes_per_s.mean > 0)
                     ? 1 - std::min(1.0, h.disk_read_bytes_per_s.mean / h.rchar_bytes_per_s.mean)
                     : kUnmeasured;
    return finding("B5", "Input-bound (storage)", "high", "server",
                   "The GPU waited for the disk: idle " + pct(idle.share) +
                       " of the time while the job's processes "
                       "were blocked on I/O (I/O pressure " +
                       fmt(h.psi_io_percent.mean) + " %, " + mbps(h.disk_read_bytes_per_s.mean) +
                       " from storage, page-cache hits " + (measured(hit) ? pct(hit) : "n/a") + ").",
                   "Copy the dataset to local NVMe or RAM (/dev/shm), use larger sequential shards (WebDataset, "
                   "TFRecord), or more reader workers.");
}

std::optional<RuleFinding> rule_b6(const RunEvidence& e) {
    Idle idle = idle_of(e);
    if (!measured(idle.share) || idle.share < kIdleHigh) return std::nullopt;
    const HostRunSummary& h = e.host;
    if (!measured(h.net_rx_bytes_per_s.mean) || h.net_rx_bytes_per_s.mean < kNetRxBytesPerS) return std::nullopt;
    if (measured(h.disk_read_bytes_per_s.mean) && h.disk_read_bytes_per_s.mean >= kDiskQuietBytesPerS)
        return std::nullopt;
    return finding("B6", "Input from a network filesystem", "high", "server",
                   "The GPU was idle " + pct(idle.share) + " of the time while the host received " +
                       mbps(h.net_rx_bytes_per_s.mean) + " from the network and read almost nothing from local disk.",
                   "Stage the dataset on local disk before training, or cache it in RAM.");
}

std::optional<RuleFinding> rule_b7(const RunEvidence& e) {
    const HostRunSummary& h = e.host;
    bool wants_cpu = measured(h.tree_cpu_cores.mean) && h.tree_cpu_cores.mean >= 0.1;
    bool rq = wants_cpu && measured(h.rq_wait_fraction.mean) && h.rq_wait_fraction.mean >= kRqWaitFraction;
    bool steal = measured(h.steal_percent.mean) && h.steal_percent.mean >= kStealPercent;
    if (!rq && !steal) return std::nullopt;
    return finding("B7", "CPU contention or stolen CPU", steal ? "high" : "moderate", steal ? "server" : "info",
                   "The job's processes waited for a CPU " +
                       (measured(h.rq_wait_fraction.mean) ? pct(h.rq_wait_fraction.mean) : std::string("n/a")) +
                       " of the time they wanted to run; the hypervisor stole " + fmt(h.steal_percent.mean, 1) +
                       " % of the CPU time.",
                   steal ? "The VM's vCPUs are oversold: ask the provider for dedicated cores or change host."
                         : "Other processes compete for the CPUs: stop them, or pin the job (taskset) to free cores.");
}

std::optional<RuleFinding> rule_b8(const RunEvidence& e) {
    const Stat& m = e.host.psi_memory_percent;
    if (!measured(m.mean) || m.mean < kPsiMemoryPercent) return std::nullopt;
    return finding("B8", "Host memory pressure", "high", "server",
                   "Tasks stalled on memory " + fmt(m.mean) + " % of the time (swap used " +
                       fmt(e.host.swap_used_bytes.max / 1e9, 1) + " GB).",
                   "Lower the workers' prefetch_factor or the number of workers, or use a host with more RAM.");
}

// ---- C: the GPU is fed unevenly, or by a slow host thread -----------------------------------

std::optional<RuleFinding> rule_c1(const RunEvidence& e) {
    Idle idle = idle_of(e);
    if (idle.job.empty() || any_b_fired(e)) return std::nullopt;
    int gaps = 0;
    double longest = 0, run = 0;
    std::vector<double> spans;
    for (std::size_t i = 0; i < e.window.pts.size(); ++i) {
        if (idle.whole_tick(*e.window.pts[i])) run += e.window.w[i];
        else {
            if (run >= kGap_s) ++gaps, longest = std::max(longest, run);
            run = 0;
        }
    }
    if (gaps == 0) return std::nullopt;
    return finding("C1", "Periodic GPU stalls", "moderate", "job",
                   std::to_string(gaps) + " stall(s) of the GPU of " + fmt(kGap_s, 1) + " s or more, the longest " +
                       fmt(longest, 1) + " s.",
                   "Look at what the job does then: checkpoints (save asynchronously or less often), evaluation, "
                   "logging that synchronises.");
}

std::optional<RuleFinding> rule_c2(const RunEvidence& e) {
    Idle idle = idle_of(e);
    if (idle.job.empty() || any_b_fired(e)) return std::nullopt;
    Stat busy = e.window.stat([&](const RunPoint& p) { return tick_busy(p, idle.job); });
    if (!measured(busy.p95) || busy.p95 <= kBurstyP95 || busy.p5 >= kBurstyP5) return std::nullopt;
    return finding("C2", "Bursty utilization", "moderate", "job",
                   "GPU utilization swings between " + fmt(busy.p5) + " % (p5) and " + fmt(busy.p95) +
                       " % (p95) while no host cause shows.",
                   "Remove synchronisation points in the step (.item(), .cpu(), printing tensors, "
                   "torch.cuda.synchronize) and prefetch the next batch.");
}

std::optional<RuleFinding> rule_c3(const RunEvidence& e) {
    for (std::size_t k : job_gpus(e)) {
        const GpuRunSummary& g = e.gpus[k];
        if (!measured(g.utilization_percent.mean) || g.utilization_percent.mean < kBusyPercent) continue;
        bool gpm = g.sm_activity_percent.measured();
        bool low = gpm ? g.sm_activity_percent.mean < kSmIneffective
                       : measured(g.power_w.mean) && measured(g.power_limit_w) &&
                             g.power_w.mean < kLowPowerFraction * g.power_limit_w;
        if (!low) continue;
        if (g.dram_bandwidth_percent.measured() && g.dram_bandwidth_percent.mean >= 30) continue;
        double cap = pcie_capacity(g.facts.pcie_gen_max, g.facts.pcie_width_max);
        double link = (measured(g.pcie_rx_bytes_per_s.mean) ? g.pcie_rx_bytes_per_s.mean : 0) +
                      (measured(g.pcie_tx_bytes_per_s.mean) ? g.pcie_tx_bytes_per_s.mean : 0);
        if (measured(cap) && link >= 0.2 * cap) continue;  // traffic: D1/E5 territory
        double nvl = (measured(g.nvlink_rx_bytes_per_s.mean) ? g.nvlink_rx_bytes_per_s.mean : 0) +
                     (measured(g.nvlink_tx_bytes_per_s.mean) ? g.nvlink_tx_bytes_per_s.mean : 0);
        if (nvl >= 1e9) continue;
        std::string why = gpm ? "only " + fmt(g.sm_activity_percent.mean) + " % of the SMs are active"
                              : "it draws only " + fmt(g.power_w.mean) + " W of " + fmt(g.power_limit_w) +
                                    " W (SM activity not measured: power is the proxy)";
        return finding("C3", "Launch / Python-overhead bound", "high", "job",
                       "GPU " + std::to_string(g.facts.index) + " looks busy (" + fmt(g.utilization_percent.mean) +
                           " % utilization) but " + why + ": many tiny kernels and launch overhead.",
                       "Use larger batches, torch.compile or CUDA Graphs, and fused optimizers/ops.");
    }
    return std::nullopt;
}

// ---- D: communication --------------------------------------------------------------------

std::optional<RuleFinding> rule_d1(const RunEvidence& e) {
    std::vector<std::size_t> job = job_gpus(e);
    if (job.size() < 2) return std::nullopt;
    for (std::size_t k : job)
        if (e.gpus[k].facts.nvlink_active != 0) return std::nullopt;  // NVLink present, or unknown
    double share_sum = 0, link_sum = 0;
    int n = 0;
    for (std::size_t k : job) {
        const RunGpuFacts& f = e.gpus[k].facts;
        auto comm = [&](const RunPoint& p) {
            if (k >= p.gpus.size()) return false;
            const GpuPoint& g = p.gpus[k];
            double cap = pcie_capacity(measured(g.pcie_gen) ? g.pcie_gen : f.pcie_gen_max,
                                       measured(g.pcie_width) ? g.pcie_width : f.pcie_width_max);
            if (!measured(cap) || !measured(g.pcie_rx_bytes_per_s) || !measured(g.pcie_tx_bytes_per_s)) return false;
            return measured(g.utilization_percent) && g.utilization_percent >= kCommBusy && low_sm(g, kCommSm) &&
                   g.pcie_rx_bytes_per_s + g.pcie_tx_bytes_per_s >= kCommLinkShare * 2 * cap;
        };
        double s = e.window.share(comm);
        if (measured(s)) share_sum += s, ++n;
        link_sum += e.gpus[k].pcie_rx_bytes_per_s.mean + e.gpus[k].pcie_tx_bytes_per_s.mean;
    }
    if (n == 0 || share_sum / n < kCommTicks) return std::nullopt;
    return finding("D1", "Communication-bound over PCIe (no NVLink)", "high", "server",
                   "The " + std::to_string(job.size()) + " GPUs have no NVLink; " + pct(share_sum / n) +
                       " of the time they were busy with little SM work while PCIe carried " +
                       gbps(link_sum / static_cast<double>(job.size())) +
                       " per GPU (both directions): gradients "
                       "are exchanged over PCIe.",
                   "Use gradient accumulation or larger batches, overlap communication (DDP bucket sizes), "
                   "or rent an NVLink/SXM node for multi-GPU training.");
}

// D2: a link direction near its capacity. The share of the window's ticks where rx or tx of
// NVLink (capacity from the spec database) or PCIe (from the tick's generation and width) was at
// >= 70 % of the link's capacity per direction.
struct LinkLoad {
    double share = kUnmeasured, peak_bytes_per_s = 0, capacity_bytes_per_s = kUnmeasured;
};
LinkLoad link_load(const RunEvidence& e, std::size_t k, bool nvlink) {
    const RunGpuFacts& f = e.gpus[k].facts;
    LinkLoad l;
    auto cap_at = [&](const GpuPoint& g) {
        if (nvlink) return f.nvlink_capacity_bytes_per_s;
        return pcie_capacity(measured(g.pcie_gen) ? g.pcie_gen : f.pcie_gen_max,
                             measured(g.pcie_width) ? g.pcie_width : f.pcie_width_max);
    };
    auto rate = [nvlink](const GpuPoint& g) {
        double rx = nvlink ? g.nvlink_rx_bytes_per_s : g.pcie_rx_bytes_per_s;
        double tx = nvlink ? g.nvlink_tx_bytes_per_s : g.pcie_tx_bytes_per_s;
        return measured(rx) && measured(tx) ? std::max(rx, tx) : kUnmeasured;
    };
    auto known = [&](const RunPoint& p) {
        return k < p.gpus.size() && measured(cap_at(p.gpus[k])) && measured(rate(p.gpus[k]));
    };
    l.share =
        e.window.share([&](const RunPoint& p) { return rate(p.gpus[k]) >= kLinkSaturated * cap_at(p.gpus[k]); }, known);
    for (const RunPoint* p : e.window.pts)
        if (known(*p) && rate(p->gpus[k]) > l.peak_bytes_per_s)
            l.peak_bytes_per_s = rate(p->gpus[k]), l.capacity_bytes_per_s = cap_at(p->gpus[k]);
    return l;
}

std::optional<RuleFinding> rule_d2(const RunEvidence& e) {
    std::vector<std::size_t> job = job_gpus(e);
    if (job.size() < 2) return std::nullopt;
    for (bool nvlink : {true, false})
        for (std::size_t k : job) {
            LinkLoad l = link_load(e, k, nvlink);
            if (!measured(l.share) || l.share < kCommTicks) continue;
            std::string link = nvlink ? "NVLink" : "PCIe";
            return finding("D2", "Communication-bound: links near capacity", "high", "job",
                           "GPU " + std::to_string(e.gpus[k].facts.index) + "'s " + link + " carried up to " +
                               gbps(l.peak_bytes_per_s) + " per direction of its " + gbps(l.capacity_bytes_per_s) +
                               " (" + pct(l.peak_bytes_per_s / l.capacity_bytes_per_s) +
                               "), at >= " + pct(kLinkSaturated) + " of capacity in " + pct(l.share) +
                               " of the time: the job waits on communication.",
                           "Send less between the GPUs: bf16 gradients, larger micro-batches or gradient "
                           "accumulation, ZeRO/FSDP settings that shard less, and overlap communication with "
                           "compute (DDP bucket sizes)" +
                               std::string(nvlink ? "." : "; on a PCIe-only box, an NVLink/SXM node."));
        }
    return std::nullopt;
}

double median_of(std::vector<double> v) {
    std::erase_if(v, [](double x) { return !measured(x); });
    if (v.empty()) return kUnmeasured;
    std::sort(v.begin(), v.end());
    return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

// The peers' median of a figure of the job's GPUs other than k.
double peers_median(const RunEvidence& e, const std::vector<std::size_t>& job, std::size_t k,
                    double (*get)(const GpuRunSummary&)) {
    std::vector<double> v;
    for (std::size_t j : job)
        if (j != k) v.push_back(get(e.gpus[j]));
    return median_of(v);
}

// Why GPU k is slower than its peers, or "" when it is not.
std::string straggler_evidence(const RunEvidence& e, const std::vector<std::size_t>& job, std::size_t k) {
    const GpuRunSummary& g = e.gpus[k];
    auto clock = [](const GpuRunSummary& x) { return x.sm_clock_mhz.mean; };
    auto power = [](const GpuRunSummary& x) { return x.power_w.mean; };
    auto util = [](const GpuRunSummary& x) { return x.utilization_percent.mean; };
    auto held = [](const GpuRunSummary& x) {
        double p = measured(x.power_cap_fraction) ? x.power_cap_fraction : 0;
        double t = measured(x.thermal_fraction) ? x.thermal_fraction : 0;
        return std::max(p, t);
    };
    double c = peers_median(e, job, k, clock), w = peers_median(e, job, k, power), u = peers_median(e, job, k, util);
    double r = peers_median(e, job, k, held);
    std::string why;
    if (measured(c) && measured(clock(g)) && clock(g) <= kStragglerClock * c)
        why += "SM clock " + fmt(clock(g)) + " MHz against " + fmt(c) + " MHz on the others (" + pct(1 - clock(g) / c) +
               " lower)";
    bool same_work = measured(u) && measured(util(g)) && std::abs(util(g) - u) <= kSameWorkPoints;
    if (same_work && measured(w) && measured(power(g)) && power(g) <= kStragglerPower * w)
        why += std::string(why.empty() ? "" : ", ") + "power " + fmt(power(g)) + " W against " + fmt(w) +
               " W at the same utilization";
    if (held(g) >= kStragglerReason && measured(r) && r <= kPeersReasonMax) {
        bool thermal = measured(g.thermal_fraction) && g.thermal_fraction >= kStragglerReason;
        why += std::string(why.empty() ? "" : ", ") + (thermal ? "thermally slowed " : "power-capped ") + pct(held(g)) +
               " of the time, the others " + pct(r);
    }
    return why;
}

std::optional<RuleFinding> rule_d3(const RunEvidence& e) {
    std::vector<std::size_t> job = job_gpus(e);
    if (job.size() < 2) return std::nullopt;
    for (std::size_t k : job) {
        std::string why = straggler_evidence(e, job, k);
        if (why.empty()) continue;
        const GpuRunSummary& g = e.gpus[k];
        std::string limit = measured(g.power_limit_w) ? " (its power limit is " + fmt(g.power_limit_w) + " W)" : "";
        return finding("D3", "Straggler: one GPU slower than its peers", "high", "server",
                       "GPU " + std::to_string(g.facts.index) + " ran slower than the other " +
                           std::to_string(job.size() - 1) + ": " + why +
                           ". Synchronous training runs at the pace of the slowest GPU.",
                       "Ask the provider why that GPU is held back" + limit +
                           ": a lowered power limit (nvidia-smi -q -d POWER), a cooling problem of its slot, or "
                           "a faulty board; or leave it out of the job.");
    }
    return std::nullopt;
}

// ---- E: what the GPU itself is limited by ------------------------------------------------

std::optional<RuleFinding> rule_e1(const RunEvidence& e) {
    for (std::size_t k : job_gpus(e)) {
        const GpuRunSummary& g = e.gpus[k];
        if (!g.dram_bandwidth_percent.measured() || !g.tensor_activity_percent.measured()) continue;
        if (g.dram_bandwidth_percent.mean < kDramBound || g.tensor_activity_percent.mean >= kTensorLow) continue;
        return finding("E1", "Memory-bandwidth bound", "moderate", "job",
                       "GPU " + std::to_string(g.facts.index) + ": memory bandwidth at " +
                           fmt(g.dram_bandwidth_percent.mean) +
                           " % of peak (about 80 % is the practical maximum) "
                           "while tensor cores are at " +
                           fmt(g.tensor_activity_percent.mean) + " %.",
                       "Fuse kernels (FlashAttention, torch.compile), use bf16, larger batches.");
    }
    return std::nullopt;
}

std::optional<RuleFinding> rule_e2(const RunEvidence& e) {
    for (std::size_t k : job_gpus(e)) {
        const GpuRunSummary& g = e.gpus[k];
        if (g.sm_activity_percent.measured()) {
            if (g.sm_activity_percent.mean < kSmBound || !g.tensor_activity_percent.measured() ||
                g.tensor_activity_percent.mean < kTensorUsed)
                continue;
            return finding("E2", "Compute-bound (healthy)", "info", "info",
                           "GPU " + std::to_string(g.facts.index) +
                               " is the limit: " + fmt(g.sm_activity_percent.mean) + " % SM activity, " +
                               fmt(g.tensor_activity_percent.mean) + " % tensor activity.",
                           "Good. Further speed comes from the model, precision (bf16/FP8) or a faster GPU.");
        }
        if (!measured(g.utilization_percent.mean) || g.utilization_percent.mean < kGpuBoundBusy) continue;
        if (!measured(g.power_w.mean) || !measured(g.power_limit_w) ||
            g.power_w.mean < kGpuBoundPower * g.power_limit_w)
            continue;
        return finding("E2", "Compute-bound (healthy)", "info", "info",
                       "GPU " + std::to_string(g.facts.index) + " is busy " + fmt(g.utilization_percent.mean) +
                           " % of the time at " + fmt(g.power_w.mean) + " W of " + fmt(g.power_limit_w) +
                           " W (SM activity not measured: time-based utilization and power only).",
                       "Good. Further speed comes from the model, precision (bf16/FP8) or a faster GPU.");
    }
    return std::nullopt;
}

std::optional<RuleFinding> rule_e3(const RunEvidence& e) {
    for (std::size_t k : job_gpus(e)) {
        const GpuRunSummary& g = e.gpus[k];
        if (!g.sm_activity_percent.measured() || !g.tensor_activity_percent.measured()) continue;
        if (g.sm_activity_percent.mean < kSmTensorless || g.tensor_activity_percent.mean >= kTensorNone) continue;
        return finding("E3", "Tensor cores unused", "moderate", "job",
                       "GPU " + std::to_string(g.facts.index) + ": SMs " + fmt(g.sm_activity_percent.mean) +
                           " % active but tensor cores only " + fmt(g.tensor_activity_percent.mean, 1) +
                           " %: the math runs on the ordinary CUDA cores.",
                       "Enable mixed precision (torch.autocast with bf16) or TF32 (torch.backends.cuda.matmul."
                       "allow_tf32 = True).");
    }
    return std::nullopt;
}

// Advisory: DCGM's own guide warns that higher occupancy is not always faster, so this never
// outranks a limit that was measured.
std::optional<RuleFinding> rule_e4(const RunEvidence& e) {
    for (std::size_t k : job_gpus(e)) {
        const GpuRunSummary& g = e.gpus[k];
        if (!g.sm_activity_percent.measured() || !g.sm_occupancy_percent.measured() ||
            !g.dram_bandwidth_percent.measured())
            continue;
        if (g.sm_activity_percent.mean < kOccupancySmBusy || g.sm_occupancy_percent.mean >= kOccupancyLow ||
            g.dram_bandwidth_percent.mean >= kOccupancyDramLow)
            continue;
        return finding("E4", "Low occupancy", "info", "job",
                       "GPU " + std::to_string(g.facts.index) + ": SMs " + fmt(g.sm_activity_percent.mean) +
                           " % active but only " + fmt(g.sm_occupancy_percent.mean) + " % of the warp slots filled, " +
                           "DRAM at " + fmt(g.dram_bandwidth_percent.mean) +
                           " %: the kernels run few warps and wait on latency.",
                       "Larger batches or tiles, fused kernels (torch.compile) or fewer registers per thread may "
                       "help; measure, since more occupancy is not always faster.");
    }
    return std::nullopt;
}

std::optional<RuleFinding> rule_e5(const RunEvidence& e) {
    for (std::size_t k : job_gpus(e)) {
        const GpuRunSummary& g = e.gpus[k];
        const RunGpuFacts& f = g.facts;
        // The link trained below its maximum while the GPU works.
        double gen_now = kUnmeasured, width_now = kUnmeasured;
        for (const RunPoint* p : e.window.pts)
            if (k < p->gpus.size() && measured(p->gpus[k].utilization_percent) &&
                p->gpus[k].utilization_percent >= kCommBusy) {
                gen_now = p->gpus[k].pcie_gen;
                width_now = p->gpus[k].pcie_width;
            }
        if (measured(gen_now) && measured(width_now) && f.pcie_gen_max > 0 && f.pcie_width_max > 0 &&
            (gen_now < f.pcie_gen_max || width_now < f.pcie_width_max))
            return finding("E5", "PCIe link below its maximum", "high", "server",
                           "GPU " + std::to_string(f.index) + " runs its PCIe link at Gen" + fmt(gen_now) + " x" +
                               fmt(width_now) + " under load; it can do Gen" + std::to_string(f.pcie_gen_max) + " x" +
                               std::to_string(f.pcie_width_max) + ".",
                           "A riser, slot or BIOS setting limits the link: report it to the provider.");
        auto copy = [&](const RunPoint& p) {
            if (k >= p.gpus.size()) return false;
            const GpuPoint& x = p.gpus[k];
            double cap = pcie_capacity(measured(x.pcie_gen) ? x.pcie_gen : f.pcie_gen_max,
                                       measured(x.pcie_width) ? x.pcie_width : f.pcie_width_max);
            return measured(cap) && measured(x.pcie_rx_bytes_per_s) && measured(x.pcie_tx_bytes_per_s) &&
                   x.pcie_rx_bytes_per_s >= kCopyRxShare * cap && x.pcie_tx_bytes_per_s < kCopyTxShareMax * cap &&
                   low_sm(x, kCommSm);
        };
        double s = e.window.share(copy);
        if (!measured(s) || s < kCommTicks) continue;
        return finding("E5", "Host-to-GPU copies saturate PCIe", "moderate", "job",
                       "GPU " + std::to_string(f.index) + " received " + gbps(g.pcie_rx_bytes_per_s.mean) +
                           " over PCIe with little SM work in " + pct(s) + " of the time.",
                       "Use pinned memory and non_blocking copies, keep data on the GPU between steps, "
                       "send smaller dtypes (uint8 images, decode on the GPU).");
    }
    return std::nullopt;
}

std::optional<RuleFinding> rule_e6(const RunEvidence& e) {
    for (const GpuRunSummary& g : e.gpus) {
        if (!measured(g.memory_used_bytes.max) || !measured(g.facts.memory_total_bytes)) continue;
        double frac = g.memory_used_bytes.max / g.facts.memory_total_bytes;
        if (frac <= kMemoryFull) continue;
        return finding("E6", "GPU memory nearly full", "info", "info",
                       "GPU " + std::to_string(g.facts.index) + " memory peaked at " + pct(frac) + ".",
                       "The batch cannot grow: activation checkpointing or mixed precision frees memory.");
    }
    return std::nullopt;
}

std::optional<RuleFinding> rule_e7(const RunEvidence& e) {
    std::vector<std::size_t> job = job_gpus(e);
    if (job.empty()) return std::nullopt;
    Stat busy = e.window.stat([&](const RunPoint& p) { return tick_busy(p, job); });
    const Stat& host = e.host.host_busy_percent;
    if (!measured(busy.p95) || busy.p95 >= kUnderP95) return std::nullopt;
    if (measured(host.p95) && host.p95 >= kUnderP95) return std::nullopt;
    for (std::size_t k : job) {
        const GpuRunSummary& g = e.gpus[k];
        if (measured(g.memory_used_bytes.p95) && measured(g.facts.memory_total_bytes) &&
            g.memory_used_bytes.p95 >= kUnderP95 / 100 * g.facts.memory_total_bytes)
            return std::nullopt;
    }
    return finding("E7", "Under-utilized, nothing saturated", "moderate", "job",
                   "Neither the GPU (p95 " + fmt(busy.p95) + " %) nor the host CPU (p95 " + fmt(host.p95) +
                       " %) nor GPU memory reached 70 %.",
                   "Increase the batch size or the model per GPU, or use a smaller, cheaper GPU.");
}

// ---- F: hardware or provider limits ------------------------------------------------------

// The share of GPU k's busy time the power cap held its clocks down: the power violation
// counter's share of each busy tick where the driver has it (a cap between ticks counts), else
// the share of busy ticks whose reason bits caught the cap at the instant of the read.
struct CapShare {
    double share = kUnmeasured;
    bool counter = false;
};
CapShare power_cap_share(const RunEvidence& e, std::size_t k) {
    auto busy = [k](const RunPoint& p) {
        return k < p.gpus.size() && measured(p.gpus[k].utilization_percent) &&
               p.gpus[k].utilization_percent >= kCommBusy;
    };
    double held = 0, time = 0;
    for (std::size_t i = 0; i < e.window.pts.size(); ++i) {
        const RunPoint& p = *e.window.pts[i];
        if (busy(p) && measured(p.gpus[k].throttled_power_percent))
            held += e.window.w[i] * p.gpus[k].throttled_power_percent / 100, time += e.window.w[i];
    }
    if (time > 0) return {held / time, true};
    double bits = e.window.share(
        [k](const RunPoint& p) { return (p.gpus[k].clock_event_reasons & clock_reason::kSwPowerCap) != 0; },
        [&](const RunPoint& p) { return busy(p) && p.gpus[k].reasons_known; });
    return {bits, false};
}

std::optional<RuleFinding> rule_f1(const RunEvidence& e) {
    for (std::size_t k : job_gpus(e)) {
        const GpuRunSummary& g = e.gpus[k];
        CapShare capped = power_cap_share(e, k);
        if (!measured(capped.share) || capped.share < kPowerCapTicks) continue;
        double clk = measured(g.facts.sm_clock_max_mhz) && g.facts.sm_clock_max_mhz > 0
                         ? g.sm_clock_mhz.mean / g.facts.sm_clock_max_mhz
                         : kUnmeasured;
        if (measured(clk) && clk >= kClockFraction) continue;
        std::string limit = fmt(g.power_limit_w) + " W";
        bool lowered = measured(g.power_limit_w) && measured(g.facts.power_default_limit_w) &&
                       g.power_limit_w < kProviderLimit * g.facts.power_default_limit_w;
        if (lowered) limit += " (default " + fmt(g.facts.power_default_limit_w) + " W: lowered by the provider)";
        std::string how = capped.counter ? " (power violation counter)"
                                         : " (the sw_power_cap reason bit at each tick: a point read, which misses "
                                           "a cap between ticks)";
        return finding("F1", "Throttled by the power cap", "high", "server",
                       "GPU " + std::to_string(g.facts.index) + " hit its power cap in " + pct(capped.share) +
                           " of the busy time" + how + ": at the " + limit + " limit the SM clock averaged " +
                           fmt(g.sm_clock_mhz.mean) + " MHz of " + fmt(g.facts.sm_clock_max_mhz) + " MHz.",
                       lowered ? "Ask the provider to restore the default power limit (nvidia-smi -pl)."
                               : "The GPU runs at its rated power: expected under heavy load; compare with "
                                 "`gpuvet burn` on the same card.");
    }
    return std::nullopt;
}

std::optional<RuleFinding> rule_f2(const RunEvidence& e) {
    for (const GpuRunSummary& g : e.gpus) {
        std::size_t k = &g - &e.gpus[0];
        double hw = e.window.share(
            [k](const RunPoint& p) { return (p.gpus[k].clock_event_reasons & clock_reason::kHwThermalSlowdown) != 0; },
            [k](const RunPoint& p) { return k < p.gpus.size() && p.gpus[k].reasons_known; });
        if (!measured(g.thermal_fraction)) continue;
        if (!(measured(hw) && hw > 0) && g.thermal_fraction < kThermalTicks) continue;
        std::string slow = g.facts.temperature_slowdown_c > 0
                               ? " (slowdown at " + std::to_string(g.facts.temperature_slowdown_c) + " °C)"
                               : "";
        return finding("F2", "Thermal slowdown", "high", "server",
                       "GPU " + std::to_string(g.facts.index) + " slowed its clocks for heat in " +
                           pct(g.thermal_fraction) + " of the time, at up to " + fmt(g.temperature_c.max) + " °C" +
                           slow + "; SM clock averaged " + fmt(g.sm_clock_mhz.mean) + " MHz.",
                       "A cooling or airflow problem of the server: report it to the provider.");
    }
    return std::nullopt;
}

std::optional<RuleFinding> rule_f3(const RunEvidence& e) {
    for (const GpuRunSummary& g : e.gpus) {
        if (!measured(g.power_brake_fraction) || g.power_brake_fraction <= 0) continue;
        return finding("F3", "Hardware power brake", "high", "server",
                       "GPU " + std::to_string(g.facts.index) + " had its external power brake asserted in " +
                           pct(g.power_brake_fraction) + " of the time.",
                       "A power-supply or chassis problem of the server: report it to the provider.");
    }
    return std::nullopt;
}

std::optional<RuleFinding> rule_f4(const RunEvidence& e) {
    for (const GpuRunSummary& g : e.gpus) {
        if (!measured(g.pcie_replays) || g.pcie_replays <= 0) continue;
        return finding("F4", "PCIe link errors", "high", "server",
                       "GPU " + std::to_string(g.facts.index) + " counted " + fmt(g.pcie_replays) +
                           " PCIe replay(s) during the run: packets were resent because they arrived corrupted.",
                       "The link's signal quality is bad (riser, slot, cable or retimer): report it to the provider "
                       "with 'nvidia-smi -q -d PCIE' (Replays Since Reset).");
    }
    return std::nullopt;
}

// ---- H: host-only verdicts (no GPU visible, or the GPUs unused) -----------------------------

bool host_only(const RunEvidence& e) { return !e.gpus_visible || job_gpus(e).empty(); }

std::optional<RuleFinding> rule_h1(const RunEvidence& e) {
    const HostRunSummary& h = e.host;
    if (!host_only(e) || !measured(h.runnable.mean) || h.runnable.mean < kHostCpuBound) return std::nullopt;
    return finding("H1", "CPU-bound", "info", "job",
                   "The job kept " + fmt(h.runnable.mean, 1) +
                       " process(es) on or waiting for a CPU on average and used " + fmt(h.tree_cpu_cores.mean, 2) +
                       " cores (main " + fmt(h.main_cpu_cores.mean, 2) + ", " + std::to_string(h.workers_max) +
                       " worker(s) " + fmt(h.workers_cpu_cores.mean, 2) + ").",
                   "The CPU is the limit of this job: more cores, or moving the work to the GPU, make it faster.");
}

std::optional<RuleFinding> rule_h2(const RunEvidence& e) {
    const HostRunSummary& h = e.host;
    // A process blocked in D for 30 % of the samples while the tree reads from storage: on a busy
    // box the rest of its time is spent waiting for a CPU (R), so "more D than R" would miss it.
    if (!host_only(e) || !measured(h.blocked.mean) || h.blocked.mean < kHostBlocked) return std::nullopt;
    if (!measured(h.disk_read_bytes_per_s.mean) || h.disk_read_bytes_per_s.mean < kDiskQuietBytesPerS)
        return std::nullopt;
    return finding("H2", "Storage-bound", "info", "job",
                   "The job's processes were blocked on I/O (state D) " + fmt(h.blocked.mean, 1) +
                       " on average, reading " + mbps(h.disk_read_bytes_per_s.mean) + " from storage (" +
                       mbps(h.rchar_bytes_per_s.mean) + " returned by read calls); I/O pressure " +
                       fmt(h.psi_io_percent.mean) + " %.",
                   "Storage is the limit: local NVMe, RAM (/dev/shm) or larger sequential reads help.");
}

std::optional<RuleFinding> rule_h3(const RunEvidence& e) {
    const HostRunSummary& h = e.host;
    if (!host_only(e) || !measured(h.tree_cpu_cores.mean) || h.tree_cpu_cores.mean >= kHostIdleCores)
        return std::nullopt;
    if (measured(h.blocked.mean) && h.blocked.mean >= kHostBlocked) return std::nullopt;
    return finding("H3", "Mostly waiting", "info", "job",
                   "The job used " + fmt(h.tree_cpu_cores.mean, 3) +
                       " cores and was rarely blocked on storage: "
                       "it slept or waited (a timer, a lock, the network) most of the time.",
                   "Nothing on this machine limits it; look at what it waits for.");
}

const std::vector<RuleDef>& table() {
    static const std::vector<RuleDef> t = {
        {"A1", "Short run", "steady-window length", "< 60 s", "[G] SageMaker's patience idea", rule_a1},
        {"A3", "GPU not used", "max utilization, job processes on GPUs", "max == 0 on every GPU",
         "[P] SageMaker LowGPUUtilization 'GPU not used'", rule_a3},
        {"A4", "Some GPUs idle",
         "per-GPU mean and p95 utilization, the job's processes per GPU (memory in use where they cannot be matched)",
         "a GPU's mean < 2 % (with or without a context of the job; >= 128 MiB in use counts as a context) while "
         "another p95 > 50 %",
         "[G] after SageMaker per-GPU checks", rule_a4},
        {"B1", "Input-bound (CPU preprocessing)", "GPU idle share (100 - utilization), worker CPU/runnable, host busy",
         "idle >= 10 % (moderate) / 20 % (high); workers >= 0.9 cores each or >= 75 % runnable, or host >= 90 %, "
         "in > 50 % of idle time",
         "[P] xprof 20 % (high); SageMaker CPUBottleneck gpu < 10, cpu > 90, > 50 %; [G] 10 % (moderate), runnable "
         "share",
         rule_b1},
        {"B2", "Data loading in the main process", "idle, worker count, main CPU",
         "idle >= 20 %, no workers, main >= 0.9 cores in > 50 % of idle time", "[G] after the TB plugin's advice",
         rule_b2},
        {"B3", "Too few DataLoader workers", "B1, worker count, CPUs", "B1 and workers < 70 % of CPUs",
         "[P] SageMaker Dataloader min 70 %", rule_b3},
        {"B4", "Host CPU too small", "idle, host busy", "idle >= 20 % and host >= 90 % in > 50 % of idle time",
         "[P] SageMaker CPUBottleneck", rule_b4},
        {"B5", "Input-bound (storage)", "idle, PSI io, processes in D state, read_bytes vs rchar",
         "idle >= 20 %, workers not saturated, PSI io >= 20 % or >= 0.5 processes in D, in > 50 % of idle time",
         "[P] SageMaker IOBottleneck (iowait > 50 %), [G] PSI instead of iowait (unreliable)", rule_b5},
        {"B6", "Input from a network filesystem", "idle, net rx, disk read",
         "idle >= 20 %, net rx >= 100 MB/s, disk read < 1 MB/s", "[G]", rule_b6},
        {"B7", "CPU contention or stolen CPU", "schedstat run-queue wait, /proc/stat steal",
         "wait >= 20 % of runnable time, or steal >= 5 %", "[G]", rule_b7},
        {"B8", "Host memory pressure", "PSI memory", "some >= 10 %", "[G]", rule_b8},
        {"C1", "Periodic GPU stalls", "runs of idle ticks", "a gap >= 0.5 s (no B rule fired)",
         "[N] Nsight Systems 'GPU starvation' 500 ms", rule_c1},
        {"C2", "Bursty utilization", "p5/p95 utilization", "p95 > 70 % and p5 < 10 % (no B rule fired)",
         "[P] SageMaker LowGPUUtilization fluctuation", rule_c2},
        {"C3", "Launch / Python-overhead bound", "utilization, GPM SM activity (else power), DRAM, links",
         "busy >= 80 %, SM < 50 % (else power < 40 % of limit), DRAM < 30 %, little PCIe/NVLink traffic",
         "[N] DCGM: SM activity < 0.5 likely ineffective; [G] power proxy", rule_c3},
        {"D1", "Communication-bound over PCIe (no NVLink)", "NVLink links, utilization, SM (else power), PCIe rx+tx",
         ">= 2 GPUs, no active NVLink, busy >= 50 % with SM < 30 % and PCIe rx+tx >= 50 % of both directions' "
         "capacity in >= 10 % of the time",
         "[P] TB plugin communication > 10 %; NCCL spins few SMs (nccl#689)", rule_d1},
        {"D2", "Communication-bound: links near capacity",
         "NVLink rx/tx against the spec database's per-GPU figure, PCIe rx/tx against generation x width",
         ">= 2 GPUs, a direction >= 70 % of the link's capacity in >= 10 % of the time",
         "[G] after the research table's D2 (70 %); [P] TB plugin communication > 10 %", rule_d2},
        {"D3", "Straggler: one GPU slower than its peers",
         "per-GPU mean SM clock, power and utilization, power-cap and thermal shares, against the peers' median",
         ">= 2 GPUs; SM clock <= 90 %, or power <= 80 % at utilization within 10 points, or a power/thermal "
         "reason >= 20 % of the time while the peers' median is <= 5 %",
         "[G] (synchronous training waits for the slowest rank)", rule_d3},
        {"E1", "Memory-bandwidth bound", "GPM DRAM bandwidth, tensor activity", "DRAM >= 60 %, tensor < 20 %",
         "[N] DCGM: ~80 % DRAM is the practical peak; [G] cut-offs", rule_e1},
        {"E2", "Compute-bound (healthy)", "GPM SM and tensor activity (else utilization and power)",
         "SM >= 80 % and tensor >= 30 %; without GPM busy >= 90 % and power >= 60 % of limit",
         "[N] DCGM: SM >= 0.8 necessary; [G] the power proxy", rule_e2},
        {"E3", "Tensor cores unused", "GPM SM and tensor activity", "SM >= 50 %, tensor < 5 %",
         "[G] after the TB plugin's AMP advice", rule_e3},
        {"E4", "Low occupancy", "GPM SM activity, SM occupancy, DRAM bandwidth",
         "SM >= 80 %, occupancy < 20 %, DRAM < 30 % (advisory)",
         "[G] cut-offs; [N] DCGM: higher occupancy does not always mean better", rule_e4},
        {"E5", "PCIe link below maximum / copies saturate PCIe", "current vs max gen/width; PCIe rx, tx, SM",
         "current < max under load; or rx >= 60 % of capacity, tx < 20 %, low SM in >= 10 % of the time",
         "[N] link capacity (Gen3 985 MB/s per lane); [G] shares", rule_e5},
        {"E6", "GPU memory nearly full", "peak memory used / total", "> 90 %", "[P] TB plugin 90 %", rule_e6},
        {"E7", "Under-utilized, nothing saturated", "p95 GPU busy, host CPU, GPU memory", "all < 70 %",
         "[P] SageMaker BatchSize", rule_e7},
        {"F1", "Throttled by the power cap",
         "power violation counter (else the sw_power_cap reason bit at each tick), SM clock / max",
         "capped >= 20 % of the busy time and clock < 90 % of max; provider-lowered if limit < 95 % of default",
         "[N] nvmlDeviceGetViolationStatus, nvmlClocksEventReasonSwPowerCap; [G] shares", rule_f1},
        {"F2", "Thermal slowdown", "sw/hw thermal reason bits, temperature", "any HW thermal, or SW thermal >= 5 %",
         "[N] nvmlClocksEventReason*ThermalSlowdown; [G] share", rule_f2},
        {"F3", "Hardware power brake", "hw_power_brake reason bit", "any tick", "[N] HwPowerBrakeSlowdown", rule_f3},
        {"F4", "PCIe link errors", "PCIe replay counter (NVML), first and last sample of the run", "any increase",
         "[P] KempnerPulse WARN on rising replays; [N] a replay is a link-level resend", rule_f4},
        {"H1", "CPU-bound (host-only run)", "processes in state R, tree CPU", "mean runnable >= 0.8",
         "[G] state sampling (counts waiting for a CPU on a busy box)", rule_h1},
        {"H2", "Storage-bound (host-only run)", "processes in state D, read_bytes, PSI io",
         "mean blocked >= 0.3 processes while reading >= 1 MB/s from storage", "[G]", rule_h2},
        {"H3", "Mostly waiting (host-only run)", "tree CPU, state D", "< 0.05 cores and not blocked", "[G]", rule_h3},
    };
    return t;
}

bool any_b_fired(const RunEvidence& e) {
    for (auto* r : {rule_b1, rule_b2, rule_b4, rule_b5, rule_b6})
        if (r(e)) return true;
    return false;
}

}  // namespace

const std::vector<RuleDef>& run_rules() { return table(); }

const std::vector<std::string>& primary_order() {
    // Host limits that starve the GPU first, then GPUs left idle, hardware limits, what limits the GPU
    // itself, and last the host-only verdicts and the contention notes.
    static const std::vector<std::string> o = {"A3", "D1", "B1", "B2", "B5", "B6", "B4", "B3", "A4", "F3",
                                               "F4", "F2", "F1", "D3", "D2", "C3", "E5", "E1", "E3", "C1",
                                               "C2", "E2", "E7", "E4", "H2", "H1", "H3", "B7", "B8"};
    return o;
}

Diagnosis diagnose(const RunEvidence& e) {
    Diagnosis d;
    d.gpu_used = !job_gpus(e).empty();
    std::vector<RuleFinding> fired;
    for (const RuleDef& r : run_rules())
        if (auto f = r.judge(e)) {
            f->source = r.source;
            fired.push_back(*f);
        }
    for (const std::string& id : primary_order()) {
        auto it = std::find_if(fired.begin(), fired.end(), [&](const RuleFinding& f) { return f.id == id; });
        if (it != fired.end()) {
            d.primary = *it;
            fired.erase(it);
            break;
        }
    }
    d.others = fired;
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
        if (g.facts.nvlink_active > 0 && !measured(g.facts.nvlink_capacity_bytes_per_s)) {
            d.not_judged.push_back("D2 over NVLink: the spec database has no NVLink figure for this GPU (PCIe judged)");
            break;
        }
    return d;
}

}  // namespace gpuvet
