// The words numbers are written in, the evidence helpers the families share, and the verdicts
// computed once per diagnosis (run_rules_detail.hpp).
#include <algorithm>
#include <cmath>
#include <sstream>

#include "core/strings.hpp"
#include "monitor/run_rules_detail.hpp"
#include "specs/pcie.hpp"

namespace gpuvet {

namespace run_rule {

std::string fmt(double v, int digits) { return format_fixed_or_na(v, digits); }

std::string num(double v) {
    std::string s = fmt(v, 3);
    if (s.find('.') == std::string::npos) return s;
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
    return s;
}

std::string pct(double fraction) { return fmt(100 * fraction) + " %"; }
std::string pct_num(double fraction) { return num(100 * fraction) + " %"; }
std::string gbps(double bytes_per_s) { return fmt(bytes_per_s / 1e9, 1) + " GB/s"; }
std::string mbps(double bytes_per_s) { return fmt(bytes_per_s / 1e6, 1) + " MB/s"; }

std::string gpu_list(const std::vector<int>& gpus) {
    std::string list;
    for (int i : gpus) list += (list.empty() ? "" : ", ") + std::to_string(i);
    return list;
}

bool idle_among_busy(const RunEvidence& e, const GpuRunSummary& g) {
    if (g.lost || !measured(g.utilization_percent.mean) || g.utilization_percent.mean >= kIdleGpuMeanPercent)
        return false;
    return std::any_of(e.gpus.begin(), e.gpus.end(), [](const GpuRunSummary& o) {
        return !o.lost && measured(o.utilization_percent.p95) && o.utilization_percent.p95 > kOtherGpuBusyP95;
    });
}

double tick_busy(const RunPoint& p, const std::vector<std::size_t>& job) {
    double sum = 0;
    int n = 0;
    for (std::size_t k : job)
        if (k < p.gpus.size() && measured(p.gpus[k].utilization_percent)) sum += p.gpus[k].utilization_percent, ++n;
    return n ? sum / n : kUnmeasured;
}

double Idle::operator()(const RunPoint& p) const {
    double b = tick_busy(p, job);
    return measured(b) ? std::clamp(1 - b / 100, 0.0, 1.0) : kUnmeasured;
}

bool Idle::whole_tick(const RunPoint& p) const {
    double b = tick_busy(p, job);
    return measured(b) && b < kIdleBusyPercent;
}

double pcie_capacity(double gen, double width) {
    if (!measured(gen) || !measured(width) || gen < 1 || width < 1) return kUnmeasured;
    auto rate = pcie_gbps_per_direction(std::min(6, static_cast<int>(gen)), static_cast<int>(width));
    return rate ? *rate * 1e9 : kUnmeasured;
}

double pcie_capacity_at(const GpuPoint& g, const RunGpuFacts& f) {
    return pcie_capacity(measured(g.pcie_gen) ? g.pcie_gen : fact_or_unmeasured(f.pcie_gen_max),
                         measured(g.pcie_width) ? g.pcie_width : fact_or_unmeasured(f.pcie_width_max));
}

bool low_sm(const GpuPoint& g, double sm_threshold) {
    if (measured(g.sm_activity_percent)) return g.sm_activity_percent < sm_threshold;
    return measured(g.power_w) && measured(g.power_limit_w) && g.power_limit_w > 0 &&
           g.power_w < kLowPowerFraction * g.power_limit_w;
}

}  // namespace run_rule

using namespace run_rule;

SharedVerdicts shared_verdicts(const RunEvidence& e) {
    SharedVerdicts s;
    // The GPUs the job used: busy at some tick, or holding one of the job's processes. A GPU left
    // idle while the others worked is A4's finding, not part of the job's idle share (B rules).
    for (std::size_t k = 0; k < e.gpus.size(); ++k) {
        const GpuRunSummary& g = e.gpus[k];
        bool worked = (measured(g.utilization_peak_percent) && g.utilization_peak_percent > 0) ||
                      g.job_processes_max.value_or(0) > 0;
        if (worked && !idle_among_busy(e, g)) s.job.push_back(k);
    }
    if (!s.job.empty()) s.idle_share = e.window.stat(Idle{s.job}).mean;
    s.host_only = !e.gpus_visible || s.job.empty();
    s.input = input_verdicts(e, s.job, s.idle_share);
    return s;
}

}  // namespace gpuvet
