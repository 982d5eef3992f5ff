#include "checks/host_cpu.hpp"

#include <algorithm>
#include <cmath>

#include "checks/run_facts.hpp"
#include "core/context.hpp"
#include "core/strings.hpp"
#include "host/cpu_facts.hpp"
#include "host/identity.hpp"

namespace gpuvet {

namespace {

// Seconds per core: short enough that a 128-thread box finishes in a few seconds.
double slice_for(Tier t, std::size_t ncpu) {
    double per = t == Tier::Quick ? 0.05 : t == Tier::Full ? 0.3 : 0.15;
    double budget = t == Tier::Quick ? 1.5 : t == Tier::Full ? 10 : 3;
    return std::max(0.02, std::min(per, budget / double(std::max<std::size_t>(ncpu, 1))));
}

}  // namespace

Verdict judge_steal(const std::optional<StealWindow>& w, CheckResult& r) {
    if (!w) {
        r.measurements.push_back(
            Measurement::absent("steal_pct", "Steal time", "%", "/proc/stat showed no CPU time in the window"));
        return Verdict::Pass;
    }
    Reference ref;
    ref.warn_above = kStealWarnAbove * 100;
    ref.fail_above = kStealFailAbove * 100;
    ref.source = kStealSource;
    r.measurements.push_back(Measurement::number("steal_pct", "Steal time", w->steal_fraction * 100, "%").against(ref));
    if (w->steal_fraction > kStealFailAbove) {
        r.details.push_back("the hypervisor took " + format_number(w->steal_fraction * 100) +
                            "% of the CPU time gpuvet asked for: the vCPUs are oversold; ask for dedicated cores");
        return Verdict::Fail;
    }
    if (w->steal_fraction > kStealWarnAbove) {
        r.details.push_back("steal time of " + format_number(w->steal_fraction * 100) +
                            "%: other tenants share these cores");
        return Verdict::Warn;
    }
    return Verdict::Pass;
}

Verdict judge_core_speeds(const std::vector<CoreSpeed>& speeds, CheckResult& r) {
    auto s = spread_of(speeds);
    const char* why = "no CPU could be measured";
    if (!s) {
        for (auto k : {"core_ops_per_s_min", "core_ops_per_s_median", "core_ops_per_s_max"})
            r.measurements.push_back(Measurement::absent(k, "Per-core speed", "ops/s", why));
        return Verdict::Pass;
    }
    Reference ref;
    ref.warn_below = s->median * (1 - kStragglerBelow);
    ref.source =
        "same pinned loop on every allowed CPU; a core more than 15% below the median is a straggler "
        "(run-to-run noise of a pinned loop is a few %)";
    r.measurements.push_back(Measurement::number("cores_measured", "CPUs measured", double(speeds.size()), "count"));
    r.measurements.push_back(
        Measurement::number("core_ops_per_s_min", "Per-core speed, slowest", s->min, "ops/s").against(ref));
    r.measurements.push_back(
        Measurement::number("core_ops_per_s_median", "Per-core speed, median", s->median, "ops/s"));
    r.measurements.push_back(Measurement::number("core_ops_per_s_max", "Per-core speed, fastest", s->max, "ops/s"));
    if (s->stragglers.empty()) return Verdict::Pass;
    std::string names;
    for (auto& c : s->stragglers) {
        if (!names.empty()) names += ", ";
        names +=
            "cpu" + std::to_string(c.cpu) + " (" + format_number(100 * (1 - c.ops_per_s / s->median), 2) + "% slower)";
    }
    r.details.push_back("straggler cores, more than 15% below the median: " + names);
    return Verdict::Warn;
}

Verdict hold_cores_against(double usable_cpus, int expected_cpus, CheckResult& r) {
    Reference ref;
    ref.spec = expected_cpus;
    ref.fail_below = expected_cpus;
    ref.source = "the order";
    r.measurements.push_back(
        Measurement::number("cpus_usable_vs_order", "CPUs usable vs ordered", usable_cpus, "CPUs").against(ref));
    if (usable_cpus + 1e-9 < expected_cpus) {
        r.details.push_back("only " + format_number(usable_cpus) + " CPUs are usable, " +
                            std::to_string(expected_cpus) + " were ordered");
        return Verdict::Fail;
    }
    return Verdict::Pass;
}

std::vector<CheckResult> HostCpuCheck::run(CheckContext& ctx) {
    HostFs fs(ctx.options.root);
    MachineInfo m = ctx.facts ? ctx.facts->machine() : read_machine_info(fs);
    CheckResult r;
    Verdict v = Verdict::Pass;
    auto stat_before = read_proc_stat(fs);

    if (m.cpu_model) r.measurements.push_back(Measurement::textual("cpu_model", "CPU model", *m.cpu_model));
    else r.measurements.push_back(Measurement::absent("cpu_model", "CPU model", "", "/proc/cpuinfo has no model name"));
    r.measurements.push_back(
        Measurement::maybe("cpu_sockets", "CPU sockets", m.cpu_sockets, "count", "/proc/cpuinfo has no physical id"));
    r.measurements.push_back(
        Measurement::maybe("cpu_cores", "CPU cores (physical)", m.cpu_cores, "count", "/proc/cpuinfo has no core id"));
    r.measurements.push_back(Measurement::maybe("cpu_threads", "CPU threads (online)", m.cpu_threads, "count",
                                                "cannot read the online CPU list"));
    r.measurements.push_back(
        Measurement::maybe("cpu_quota", "CPU quota (cgroup)", m.cpu_quota, "CPUs", "no cgroup CPU quota"));
    r.measurements.push_back(
        Measurement::maybe("cpuset_cpus", "CPUs allowed (cpuset)", m.cpuset_cpus, "count", "no cgroup cpuset"));

    // What this process can really use: threads, narrowed by the cpuset, then by the quota.
    std::optional<double> usable;
    if (m.cpu_threads) usable = *m.cpu_threads;
    if (m.cpuset_cpus) usable = usable ? std::min(*usable, double(*m.cpuset_cpus)) : double(*m.cpuset_cpus);
    if (m.cpu_quota) usable = usable ? std::min(*usable, *m.cpu_quota) : *m.cpu_quota;
    r.measurements.push_back(
        Measurement::maybe("cpus_usable", "CPUs usable", usable, "CPUs", "neither CPU count nor limits readable"));
    if (usable && m.cpu_threads && *usable < *m.cpu_threads)
        r.details.push_back("this process may use " + format_number(*usable) + " of the " +
                            std::to_string(*m.cpu_threads) + " CPUs (cgroup cpuset/quota)");

    auto gov = read_governors(fs);
    if (gov.empty()) {
        r.measurements.push_back(Measurement::absent("governor", "Frequency governor", "",
                                                     "no cpufreq in /sys (common in VMs: the host sets the clock)"));
    } else {
        std::string g;
        for (auto& [name, n] : gov) g += (g.empty() ? "" : ", ") + name + " (" + std::to_string(n) + " CPUs)";
        r.measurements.push_back(Measurement::textual("governor", "Frequency governor", g));
        if (!gov.count("performance") || gov.size() > 1)
            r.details.push_back("governor is not 'performance' everywhere (" + g +
                                "): clocks may ramp slowly under bursty data loading");
    }

    // Per-core speed on the CPUs this process may use; the same window measures steal.
    auto cpus = allowed_cpus();
    if (ctx.progress) ctx.progress->update("per-core speed on " + std::to_string(cpus.size()) + " CPUs");
    auto speeds = measure_core_speeds(cpus, slice_for(ctx.options.tier, cpus.size()), ctx.stop);
    ctx.throw_if_stopped();  // the cores a stop left unmeasured would be judged as missing
    v = worst(v, judge_core_speeds(speeds, r));

    auto stat_after = read_proc_stat(fs);
    std::optional<StealWindow> w;
    if (stat_before && stat_after) w = steal_between(*stat_before, *stat_after);
    if (!stat_before || !stat_after)
        r.measurements.push_back(Measurement::absent("steal_pct", "Steal time", "%", "/proc/stat unreadable"));
    else v = worst(v, judge_steal(w, r));

    r.verdict = v;
    std::string s = m.cpu_model.value_or("unknown CPU");
    if (usable) s += ", " + format_number(*usable) + " usable CPUs";
    if (w) s += ", steal " + format_number(w->steal_fraction * 100, 2) + "%";
    if (auto sp = spread_of(speeds)) s += ", " + std::to_string(sp->stragglers.size()) + " straggler cores";
    r.summary = s + ".";
    return {r};
}

}  // namespace gpuvet
