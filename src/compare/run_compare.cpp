#include "compare/run_compare.hpp"
#include "core/strings.hpp"

#include <cmath>
#include <cstdio>

namespace gpuvet {

namespace {

std::string fixed(double v, int digits = 0) { return format_fixed(v, digits); }

double gpu_mean(const RunResult& r, Stat GpuRunSummary::*m) {
    double sum = 0;
    int n = 0;
    for (const GpuRunSummary& g : r.gpus)
        if ((g.*m).measured()) sum += (g.*m).mean, ++n;
    return n ? sum / n : kUnmeasured;
}

bool has(const RunResult& r, const std::string& id) {
    if (r.diagnosis.primary && r.diagnosis.primary->id == id) return true;
    for (const RuleFinding& x : r.diagnosis.others)
        if (x.id == id) return true;
    return false;
}

std::vector<const RuleFinding*> findings(const RunResult& r) {
    std::vector<const RuleFinding*> v;
    if (r.diagnosis.primary) v.push_back(&*r.diagnosis.primary);
    for (const RuleFinding& x : r.diagnosis.others) v.push_back(&x);
    return v;
}

// Why `r`'s job is no fair trial of the machine: it did not start, failed, was killed or stopped.
std::string unfit_reason(const RunResult& r, const std::string& label) {
    if (!r.end) return label + "'s job did not start";
    if (r.end->signaled) return label + "'s job was killed by signal " + std::to_string(r.end->code);
    if (r.end->code != 0) return label + "'s job failed (exit " + std::to_string(r.end->code) + ")";
    if (r.stop_signal) return label + "'s run was stopped by signal " + std::to_string(r.stop_signal);
    return "";
}

}  // namespace

std::string job_end_words(const RunResult& r) {
    if (!r.end) return "did not start";
    return r.end->signaled ? "killed by signal " + std::to_string(r.end->code) : "exit " + std::to_string(r.end->code);
}

RunComparison compare_runs(const RunResult& a, const RunResult& b, const std::string& label_a,
                           const std::string& label_b) {
    RunComparison c;
    c.label_a = label_a;
    c.label_b = label_b;
    c.same_command = a.command == b.command;
    c.wall_a_s = a.wall_s;
    c.wall_b_s = b.wall_s;
    if (a.end) c.exit_a = a.exit_code;
    if (b.end) c.exit_b = b.exit_code;
    c.end_a = job_end_words(a);
    c.end_b = job_end_words(b);
    for (const std::string& why : {unfit_reason(a, label_a), unfit_reason(b, label_b)})
        if (!why.empty()) c.not_comparable.push_back(why + ": not comparable");
    if (c.not_comparable.empty() && measured(a.wall_s) && measured(b.wall_s) && a.wall_s > 0 && b.wall_s > 0) {
        double lo = std::min(a.wall_s, b.wall_s), hi = std::max(a.wall_s, b.wall_s);
        c.speedup = hi / lo;
        if (c.speedup - 1 > kRunSameWithin) c.faster = a.wall_s < b.wall_s ? 0 : 1;
    }
    const RunResult* runs[2] = {&a, &b};
    const std::string* labels[2] = {&c.label_a, &c.label_b};
    if (c.faster) {
        int slow = 1 - *c.faster, fast = *c.faster;
        // A limit found on the slower run and not on the faster one explains the difference best:
        // server-side first (the thing a renter can hold against a provider), then the job's.
        for (RuleParty party : {RuleParty::kServer, RuleParty::kJob})
            for (const RuleFinding* x : findings(*runs[slow]))
                if (x->party == party && !has(*runs[fast], x->id))
                    c.reasons.push_back(*labels[slow] + ": " + x->title + " (" + x->id + ") — " + x->message);
        double ua = gpu_mean(*runs[slow], &GpuRunSummary::utilization_percent),
               ub = gpu_mean(*runs[fast], &GpuRunSummary::utilization_percent);
        if (measured(ua) && measured(ub) && ub - ua >= 10)
            c.reasons.push_back("GPU utilization " + fixed(ua) + " % on " + *labels[slow] + " vs " + fixed(ub) +
                                " % on " + *labels[fast]);
        double ca = gpu_mean(*runs[slow], &GpuRunSummary::sm_clock_mhz),
               cb = gpu_mean(*runs[fast], &GpuRunSummary::sm_clock_mhz);
        if (measured(ca) && measured(cb) && cb > 0 && ca < 0.95 * cb)
            c.reasons.push_back("SM clock " + fixed(ca) + " MHz on " + *labels[slow] + " vs " + fixed(cb) + " MHz on " +
                                *labels[fast]);
        int pa = runs[slow]->host.cpus, pb = runs[fast]->host.cpus;
        if (pa > 0 && pb > 0 && pa < pb)
            c.reasons.push_back(std::to_string(pa) + " CPUs on " + *labels[slow] + " vs " + std::to_string(pb) +
                                " on " + *labels[fast]);
        if (c.reasons.empty())
            c.reasons.push_back("no rule or figure explains the difference: compare the GPU models and the data path");
    }
    if (!c.same_command) c.reasons.push_back("the two runs ran different commands: the comparison may not be fair");

    auto row = [&](std::string metric, std::string unit, double va, double vb) {
        c.rows.push_back({std::move(metric), std::move(unit), va, vb});
    };
    row("wall time", "s", a.wall_s, b.wall_s);
    row("GPUs", "count", static_cast<double>(a.gpus.size()), static_cast<double>(b.gpus.size()));
    row("GPU utilization (mean)", "%", gpu_mean(a, &GpuRunSummary::utilization_percent),
        gpu_mean(b, &GpuRunSummary::utilization_percent));
    row("SM activity (mean)", "%", gpu_mean(a, &GpuRunSummary::sm_activity_percent),
        gpu_mean(b, &GpuRunSummary::sm_activity_percent));
    row("GPU power (mean)", "W", gpu_mean(a, &GpuRunSummary::power_w), gpu_mean(b, &GpuRunSummary::power_w));
    row("SM clock (mean)", "MHz", gpu_mean(a, &GpuRunSummary::sm_clock_mhz), gpu_mean(b, &GpuRunSummary::sm_clock_mhz));
    row("job CPU (mean)", "cores", a.host.tree_cpu_cores.mean, b.host.tree_cpu_cores.mean);
    row("host CPUs", "count", a.host.cpus > 0 ? a.host.cpus : kUnmeasured, b.host.cpus > 0 ? b.host.cpus : kUnmeasured);
    row("steal (mean)", "%", a.host.steal_percent.mean, b.host.steal_percent.mean);
    row("disk read (mean)", "MB/s", a.host.disk_read_bytes_per_s.mean / 1e6, b.host.disk_read_bytes_per_s.mean / 1e6);
    return c;
}

}  // namespace gpuvet
