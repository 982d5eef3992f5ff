// The GPU's rules: A, is the GPU used at all; C, the GPU is fed unevenly or by a slow host thread;
// D, communication between the GPUs; E, what the GPU itself is limited by.
#include <algorithm>
#include <cmath>

#include "core/units.hpp"
#include "monitor/run_rules_detail.hpp"

namespace gpuvet::run_rule {

namespace {

// Why the job's processes cannot be matched on GPU `g`, empty when they can: its process list was
// not read, or no GPU listed a process of the job although one of them worked (inside a container
// NVML lists the host's PIDs, which are not the job's).
std::string unmatched_why(const RunEvidence& e, const GpuRunSummary& g) {
    if (!g.job_processes_max) {
        std::string why = "its process list could not be read";
        if (e.absent)
            if (auto it = e.absent->find("gpu" + std::to_string(g.facts.index) + ".processes"); it != e.absent->end())
                why += ": " + it->second;
        return why;
    }
    bool any_job = std::any_of(e.gpus.begin(), e.gpus.end(),
                               [](const GpuRunSummary& o) { return o.job_processes_max.value_or(0) > 0; });
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
    if (why.empty()) return g.job_processes_max.value_or(0) > 0 ? Context::kHeld : Context::kNotHeld;
    double mem = g.memory_used_bytes.p50;
    if (!measured(mem)) {
        how = "whether the job holds a context there could not be told (" + why + ")";
        return Context::kUnknown;
    }
    how = fmt(mem / kMiB) + " MiB of its memory in use (the job's processes could not be matched: " + why + ")";
    return mem >= kContextMemoryMib * kMiB ? Context::kHeld : Context::kNotHeld;
}

double sum_measured(double a, double b) { return (measured(a) ? a : 0) + (measured(b) ? b : 0); }

}  // namespace

// ---- A: is the GPU used at all -----------------------------------------------------------------

Judged rule_a1(const RunEvidence& e, const SharedVerdicts&) {
    if (e.window_s >= kShortWindow_s) return std::nullopt;
    return RuleVerdict{"The steady-state window is " + fmt(e.window_s, 1) + " s, under " + fmt(kShortWindow_s) +
                           " s: the verdict rests on few samples.",
                       "Run 2-3 minutes of real training steps for a firm verdict.",
                       {},
                       {}};
}

Judged rule_a3(const RunEvidence& e, const SharedVerdicts& s) {
    if (!e.gpus_visible || e.gpus.empty() || !s.job.empty()) return std::nullopt;
    return RuleVerdict{"No GPU did any work during the run (utilization stayed at 0 % on all " +
                           std::to_string(e.gpus.size()) + " GPU(s)) and none held a process of the job.",
                       "Check that the job puts its model and data on the GPU (device=\"cuda\") and that "
                       "CUDA_VISIBLE_DEVICES names the GPUs.",
                       {},
                       {}};
}

// A4: GPUs idle while the others worked, told apart by whether the job holds a context there.
Judged rule_a4(const RunEvidence& e, const SharedVerdicts&) {
    if (e.gpus.size() < 2) return std::nullopt;
    std::vector<int> by_pid[2];  // [0]: no process of the job, [1]: the job's process on it
    std::vector<std::string> by_memory;
    const std::string idle_words = "stayed under " + fmt(kIdleGpuMeanPercent) + " % utilization";
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
        else if (c == Context::kNotHeld)
            by_memory.push_back(id + " " + idle_words + " with " + how + ": no context there");
        else by_memory.push_back(id + " " + idle_words + "; " + how);
    }
    if (idle == 0) return std::nullopt;
    std::size_t n = e.gpus.size();
    std::vector<std::string> parts = by_memory;
    if (!by_pid[0].empty())
        parts.insert(parts.begin(),
                     "GPU " + gpu_list(by_pid[0]) + " " + idle_words + " with no process of the job on it");
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
    return RuleVerdict{msg, action + "; or rent fewer GPUs.", {}, {}};
}

// ---- C: the GPU is fed unevenly, or by a slow host thread --------------------------------------

Judged rule_c1(const RunEvidence& e, const SharedVerdicts& s) {
    if (s.job.empty() || s.input.any()) return std::nullopt;
    const Idle idle{s.job};
    int gaps = 0;
    double longest = 0, run = 0;
    for (std::size_t i = 0; i < e.window.pts.size(); ++i) {
        if (idle.whole_tick(*e.window.pts[i])) run += e.window.w[i];
        else {
            if (run >= kGap_s) ++gaps, longest = std::max(longest, run);
            run = 0;
        }
    }
    if (gaps == 0) return std::nullopt;
    return RuleVerdict{std::to_string(gaps) + " stall(s) of the GPU of " + fmt(kGap_s, 1) + " s or more, the longest " +
                           fmt(longest, 1) + " s.",
                       "Look at what the job does then: checkpoints (save asynchronously or less often), evaluation, "
                       "logging that synchronises.",
                       {},
                       {}};
}

Judged rule_c2(const RunEvidence& e, const SharedVerdicts& s) {
    if (s.job.empty() || s.input.any()) return std::nullopt;
    Stat busy = e.window.stat([&](const RunPoint& p) { return tick_busy(p, s.job); });
    if (!measured(busy.p95) || busy.p95 <= kBurstyP95 || busy.p5 >= kBurstyP5) return std::nullopt;
    return RuleVerdict{"GPU utilization swings between " + fmt(busy.p5) + " % (p5) and " + fmt(busy.p95) +
                           " % (p95) while no host cause shows.",
                       "Remove synchronisation points in the step (.item(), .cpu(), printing tensors, "
                       "torch.cuda.synchronize) and prefetch the next batch.",
                       {},
                       {}};
}

Judged rule_c3(const RunEvidence& e, const SharedVerdicts& s) {
    for (std::size_t k : s.job) {
        const GpuRunSummary& g = e.gpus[k];
        if (!measured(g.utilization_percent.mean) || g.utilization_percent.mean < kLaunchBoundBusyPercent) continue;
        bool gpm = g.sm_activity_percent.measured();
        bool low = gpm ? g.sm_activity_percent.mean < kSmIneffectivePercent
                       : measured(g.power_w.mean) && measured(g.power_limit_w) &&
                             g.power_w.mean < kLowPowerFraction * g.power_limit_w;
        if (!low) continue;
        if (g.dram_bandwidth_percent.measured() && g.dram_bandwidth_percent.mean >= kLaunchDramLow) continue;
        double cap =
            pcie_capacity(fact_or_unmeasured(g.facts.pcie_gen_max), fact_or_unmeasured(g.facts.pcie_width_max));
        double link = sum_measured(g.pcie_rx_bytes_per_s.mean, g.pcie_tx_bytes_per_s.mean);
        if (measured(cap) && link >= kLaunchPcieShare * cap) continue;  // traffic: D1/E5 territory
        if (sum_measured(g.nvlink_rx_bytes_per_s.mean, g.nvlink_tx_bytes_per_s.mean) >= kLaunchNvlinkBytesPerS)
            continue;
        std::string why = gpm ? "only " + fmt(g.sm_activity_percent.mean) + " % of the SMs are active"
                              : "it draws only " + fmt(g.power_w.mean) + " W of " + fmt(g.power_limit_w) +
                                    " W (SM activity not measured: power is the proxy)";
        return RuleVerdict{"GPU " + std::to_string(g.facts.index) + " looks busy (" + fmt(g.utilization_percent.mean) +
                               " % utilization) but " + why + ": many tiny kernels and launch overhead.",
                           "Use larger batches, torch.compile or CUDA Graphs, and fused optimizers/ops.",
                           {},
                           {}};
    }
    return std::nullopt;
}

// ---- D: communication --------------------------------------------------------------------------

Judged rule_d1(const RunEvidence& e, const SharedVerdicts& s) {
    const std::vector<std::size_t>& job = s.job;
    if (job.size() < 2) return std::nullopt;
    for (std::size_t k : job)
        if (e.gpus[k].facts.nvlink_active.value_or(-1) != 0) return std::nullopt;  // NVLink present, or unknown
    double share_sum = 0, link_sum = 0;
    int n = 0;
    for (std::size_t k : job) {
        const RunGpuFacts& f = e.gpus[k].facts;
        auto comm = [&](const RunPoint& p) {
            if (k >= p.gpus.size()) return false;
            const GpuPoint& g = p.gpus[k];
            double cap = pcie_capacity_at(g, f);
            if (!measured(cap) || !measured(g.pcie_rx_bytes_per_s) || !measured(g.pcie_tx_bytes_per_s)) return false;
            return measured(g.utilization_percent) && g.utilization_percent >= kCommBusy && low_sm(g, kCommSm) &&
                   g.pcie_rx_bytes_per_s + g.pcie_tx_bytes_per_s >= kCommLinkShare * 2 * cap;
        };
        double share = e.window.share(comm);
        if (measured(share)) share_sum += share, ++n;
        link_sum += e.gpus[k].pcie_rx_bytes_per_s.mean + e.gpus[k].pcie_tx_bytes_per_s.mean;
    }
    if (n == 0 || share_sum / n < kCommTicks) return std::nullopt;
    return RuleVerdict{"The " + std::to_string(job.size()) + " GPUs have no NVLink; " + pct(share_sum / n) +
                           " of the time they were busy with little SM work while PCIe carried " +
                           gbps(link_sum / static_cast<double>(job.size())) +
                           " per GPU (both directions): gradients are exchanged over PCIe.",
                       "Use gradient accumulation or larger batches, overlap communication (DDP bucket sizes), "
                       "or rent an NVLink/SXM node for multi-GPU training.",
                       {},
                       {}};
}

namespace {

// D2: a link direction near its capacity. The share of the window's ticks where rx or tx of
// NVLink (capacity from the spec database) or PCIe (from the tick's generation and width) was at
// >= kLinkSaturated of the link's capacity per direction.
struct LinkLoad {
    double share = kUnmeasured, peak_bytes_per_s = 0, capacity_bytes_per_s = kUnmeasured;
};
LinkLoad link_load(const RunEvidence& e, std::size_t k, bool nvlink) {
    const RunGpuFacts& f = e.gpus[k].facts;
    LinkLoad l;
    auto cap_at = [&](const GpuPoint& g) { return nvlink ? f.nvlink_capacity_bytes_per_s : pcie_capacity_at(g, f); };
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

}  // namespace

Judged rule_d2(const RunEvidence& e, const SharedVerdicts& s) {
    if (s.job.size() < 2) return std::nullopt;
    for (bool nvlink : {true, false})
        for (std::size_t k : s.job) {
            LinkLoad l = link_load(e, k, nvlink);
            if (!measured(l.share) || l.share < kCommTicks) continue;
            std::string link = nvlink ? "NVLink" : "PCIe";
            return RuleVerdict{"GPU " + std::to_string(e.gpus[k].facts.index) + "'s " + link + " carried up to " +
                                   gbps(l.peak_bytes_per_s) + " per direction of its " + gbps(l.capacity_bytes_per_s) +
                                   " (" + pct(l.peak_bytes_per_s / l.capacity_bytes_per_s) +
                                   "), at >= " + pct(kLinkSaturated) + " of capacity in " + pct(l.share) +
                                   " of the time: the job waits on communication.",
                               "Send less between the GPUs: bf16 gradients, larger micro-batches or gradient "
                               "accumulation, ZeRO/FSDP settings that shard less, and overlap communication with "
                               "compute (DDP bucket sizes)" +
                                   std::string(nvlink ? "." : "; on a PCIe-only box, an NVLink/SXM node."),
                               {},
                               {}};
        }
    return std::nullopt;
}

namespace {

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

}  // namespace

Judged rule_d3(const RunEvidence& e, const SharedVerdicts& s) {
    if (s.job.size() < 2) return std::nullopt;
    for (std::size_t k : s.job) {
        std::string why = straggler_evidence(e, s.job, k);
        if (why.empty()) continue;
        const GpuRunSummary& g = e.gpus[k];
        std::string limit = measured(g.power_limit_w) ? " (its power limit is " + fmt(g.power_limit_w) + " W)" : "";
        return RuleVerdict{"GPU " + std::to_string(g.facts.index) + " ran slower than the other " +
                               std::to_string(s.job.size() - 1) + ": " + why +
                               ". Synchronous training runs at the pace of the slowest GPU.",
                           "Ask the provider why that GPU is held back" + limit +
                               ": a lowered power limit (nvidia-smi -q -d POWER), a cooling problem of its slot, or "
                               "a faulty board; or leave it out of the job.",
                           {},
                           {}};
    }
    return std::nullopt;
}

// ---- E: what the GPU itself is limited by ------------------------------------------------------

Judged rule_e1(const RunEvidence& e, const SharedVerdicts& s) {
    for (std::size_t k : s.job) {
        const GpuRunSummary& g = e.gpus[k];
        if (!g.dram_bandwidth_percent.measured() || !g.tensor_activity_percent.measured()) continue;
        if (g.dram_bandwidth_percent.mean < kDramBound || g.tensor_activity_percent.mean >= kTensorLow) continue;
        return RuleVerdict{
            "GPU " + std::to_string(g.facts.index) + ": memory bandwidth at " + fmt(g.dram_bandwidth_percent.mean) +
                " % of peak (about " + num(kDramPracticalPeakPercent) +
                " % is the practical maximum) while tensor cores are at " + fmt(g.tensor_activity_percent.mean) + " %.",
            "Fuse kernels (FlashAttention, torch.compile), use bf16, larger batches.",
            {},
            {}};
    }
    return std::nullopt;
}

Judged rule_e2(const RunEvidence& e, const SharedVerdicts& s) {
    const char* action = "Good. Further speed comes from the model, precision (bf16/FP8) or a faster GPU.";
    for (std::size_t k : s.job) {
        const GpuRunSummary& g = e.gpus[k];
        if (g.sm_activity_percent.measured()) {
            if (g.sm_activity_percent.mean < kSmBound || !g.tensor_activity_percent.measured() ||
                g.tensor_activity_percent.mean < kTensorUsed)
                continue;
            return RuleVerdict{"GPU " + std::to_string(g.facts.index) +
                                   " is the limit: " + fmt(g.sm_activity_percent.mean) + " % SM activity, " +
                                   fmt(g.tensor_activity_percent.mean) + " % tensor activity.",
                               action,
                               {},
                               {}};
        }
        if (!measured(g.utilization_percent.mean) || g.utilization_percent.mean < kGpuBoundBusy) continue;
        if (!measured(g.power_w.mean) || !measured(g.power_limit_w) ||
            g.power_w.mean < kGpuBoundPower * g.power_limit_w)
            continue;
        return RuleVerdict{"GPU " + std::to_string(g.facts.index) + " is busy " + fmt(g.utilization_percent.mean) +
                               " % of the time at " + fmt(g.power_w.mean) + " W of " + fmt(g.power_limit_w) +
                               " W (SM activity not measured: time-based utilization and power only).",
                           action,
                           {},
                           {}};
    }
    return std::nullopt;
}

Judged rule_e3(const RunEvidence& e, const SharedVerdicts& s) {
    for (std::size_t k : s.job) {
        const GpuRunSummary& g = e.gpus[k];
        if (!g.sm_activity_percent.measured() || !g.tensor_activity_percent.measured()) continue;
        if (g.sm_activity_percent.mean < kSmTensorless || g.tensor_activity_percent.mean >= kTensorNone) continue;
        return RuleVerdict{"GPU " + std::to_string(g.facts.index) + ": SMs " + fmt(g.sm_activity_percent.mean) +
                               " % active but tensor cores only " + fmt(g.tensor_activity_percent.mean, 1) +
                               " %: the math runs on the ordinary CUDA cores.",
                           "Enable mixed precision (torch.autocast with bf16) or TF32 (torch.backends.cuda.matmul."
                           "allow_tf32 = True).",
                           {},
                           {}};
    }
    return std::nullopt;
}

// Advisory: DCGM's own guide warns that higher occupancy is not always faster, so this never
// outranks a limit that was measured.
Judged rule_e4(const RunEvidence& e, const SharedVerdicts& s) {
    for (std::size_t k : s.job) {
        const GpuRunSummary& g = e.gpus[k];
        if (!g.sm_activity_percent.measured() || !g.sm_occupancy_percent.measured() ||
            !g.dram_bandwidth_percent.measured())
            continue;
        if (g.sm_activity_percent.mean < kOccupancySmBusy || g.sm_occupancy_percent.mean >= kOccupancyLow ||
            g.dram_bandwidth_percent.mean >= kOccupancyDramLow)
            continue;
        return RuleVerdict{"GPU " + std::to_string(g.facts.index) + ": SMs " + fmt(g.sm_activity_percent.mean) +
                               " % active but only " + fmt(g.sm_occupancy_percent.mean) +
                               " % of the warp slots filled, DRAM at " + fmt(g.dram_bandwidth_percent.mean) +
                               " %: the kernels run few warps and wait on latency.",
                           "Larger batches or tiles, fused kernels (torch.compile) or fewer registers per thread may "
                           "help; measure, since more occupancy is not always faster.",
                           {},
                           {}};
    }
    return std::nullopt;
}

Judged rule_e5(const RunEvidence& e, const SharedVerdicts& s) {
    for (std::size_t k : s.job) {
        const GpuRunSummary& g = e.gpus[k];
        const RunGpuFacts& f = g.facts;
        // The link trained below its maximum while the GPU works: the server's (the row's severity
        // and party).
        double gen_now = kUnmeasured, width_now = kUnmeasured;
        for (const RunPoint* p : e.window.pts)
            if (k < p->gpus.size() && measured(p->gpus[k].utilization_percent) &&
                p->gpus[k].utilization_percent >= kCommBusy) {
                gen_now = p->gpus[k].pcie_gen;
                width_now = p->gpus[k].pcie_width;
            }
        if (measured(gen_now) && measured(width_now) && f.pcie_gen_max && f.pcie_width_max &&
            (gen_now < *f.pcie_gen_max || width_now < *f.pcie_width_max))
            return RuleVerdict{"GPU " + std::to_string(f.index) + " runs its PCIe link at Gen" + fmt(gen_now) + " x" +
                                   fmt(width_now) + " under load; it can do Gen" + std::to_string(*f.pcie_gen_max) +
                                   " x" + std::to_string(*f.pcie_width_max) + ".",
                               "A riser, slot or BIOS setting limits the link: report it to the provider.",
                               {},
                               {}};
        // Host-to-GPU copies fill the link: the job's, and less grave.
        auto copy = [&](const RunPoint& p) {
            if (k >= p.gpus.size()) return false;
            const GpuPoint& x = p.gpus[k];
            double cap = pcie_capacity_at(x, f);
            return measured(cap) && measured(x.pcie_rx_bytes_per_s) && measured(x.pcie_tx_bytes_per_s) &&
                   x.pcie_rx_bytes_per_s >= kCopyRxShare * cap && x.pcie_tx_bytes_per_s < kCopyTxShareMax * cap &&
                   low_sm(x, kCommSm);
        };
        double share = e.window.share(copy);
        if (!measured(share) || share < kCommTicks) continue;
        return RuleVerdict{"GPU " + std::to_string(f.index) + "'s host-to-GPU copies received " +
                               gbps(g.pcie_rx_bytes_per_s.mean) + " over PCIe with little SM work in " + pct(share) +
                               " of the time.",
                           "Use pinned memory and non_blocking copies, keep data on the GPU between steps, "
                           "send smaller dtypes (uint8 images, decode on the GPU).",
                           RuleSeverity::kModerate, RuleParty::kJob};
    }
    return std::nullopt;
}

Judged rule_e6(const RunEvidence& e, const SharedVerdicts&) {
    for (const GpuRunSummary& g : e.gpus) {
        if (!measured(g.memory_used_bytes.max) || !measured(g.facts.memory_total_bytes)) continue;
        double frac = g.memory_used_bytes.max / g.facts.memory_total_bytes;
        if (frac <= kMemoryFullFraction) continue;
        return RuleVerdict{"GPU " + std::to_string(g.facts.index) + " memory peaked at " + pct(frac) + ".",
                           "The batch cannot grow: activation checkpointing or mixed precision frees memory.",
                           {},
                           {}};
    }
    return std::nullopt;
}

Judged rule_e7(const RunEvidence& e, const SharedVerdicts& s) {
    if (s.job.empty()) return std::nullopt;
    Stat busy = e.window.stat([&](const RunPoint& p) { return tick_busy(p, s.job); });
    const Stat& host = e.host.host_busy_percent;
    if (!measured(busy.p95) || busy.p95 >= kUnderP95) return std::nullopt;
    if (measured(host.p95) && host.p95 >= kUnderP95) return std::nullopt;
    for (std::size_t k : s.job) {
        const GpuRunSummary& g = e.gpus[k];
        if (measured(g.memory_used_bytes.p95) && measured(g.facts.memory_total_bytes) &&
            g.memory_used_bytes.p95 >= kUnderP95 / 100 * g.facts.memory_total_bytes)
            return std::nullopt;
    }
    return RuleVerdict{"Neither the GPU (p95 " + fmt(busy.p95) + " %) nor the host CPU (p95 " + fmt(host.p95) +
                           " %) nor GPU memory reached " + num(kUnderP95) + " %.",
                       "Increase the batch size or the model per GPU, or use a smaller, cheaper GPU.",
                       {},
                       {}};
}

}  // namespace gpuvet::run_rule
