#include "history/drift.hpp"

#include <algorithm>
#include <cmath>

#include "core/strings.hpp"

namespace gpuvet::history {

double median_of(std::vector<double> v) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    std::size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double relative_spread(const std::vector<double>& values) {
    double med = median_of(values);
    if (values.size() < 2 || med == 0) return 0;
    std::vector<double> dev;
    for (double x : values) dev.push_back(std::fabs(x - med));
    return 1.4826 * median_of(dev) / std::fabs(med);
}

double drift_margin(const std::vector<double>& earlier) { return std::max(kDriftMargin, 3 * relative_spread(earlier)); }

namespace {

std::string day(const std::string& at) { return at.substr(0, 10); }

std::string figure(double v, const std::string& unit) {
    return format_number(v, 4) + (unit.empty() || unit == "count" ? "" : " " + unit);
}

std::vector<double> values_of(const std::vector<Dated>& d) {
    std::vector<double> v;
    for (const Dated& x : d) v.push_back(x.value);
    return v;
}

void drifted(const GpuHistory& g, const FigureHistory& f, CheckResult& r) {
    if (!f.higher_is_better || int(f.earlier.size()) < kMinEarlierRuns) return;
    std::vector<double> v = values_of(f.earlier);
    double med = median_of(v), margin = drift_margin(v);
    if (med <= 0 || f.now >= med * (1 - margin)) return;
    double below = 100 * (1 - f.now / med);
    r.findings.emplace_back(Verdict::Warn, g.label + ": " + f.metric + " " + figure(f.now, f.unit) + " is " +
                                               format_number(below, 3) + "% below its own median of " +
                                               figure(med, f.unit) + " over " + std::to_string(v.size()) + " runs (" +
                                               day(f.earlier.front().at) + " to " + day(f.earlier.back().at) +
                                               "; margin " + format_number(100 * margin, 3) + "%)");
}

void counter_rose(const GpuHistory& g, const FigureHistory& f, CheckResult& r) {
    if (f.earlier.empty() || !is_counter(f.metric)) return;
    const Dated& last = f.earlier.back();
    if (f.now <= last.value) return;
    r.findings.emplace_back(Verdict::Warn, g.label + ": " + f.metric + " rose from " + format_number(last.value, 6) +
                                               " on " + day(last.at) + " to " + format_number(f.now, 6) + " now (+" +
                                               format_number(f.now - last.value, 6) + ")");
}

void thermal_rising(const GpuHistory& g, const FigureHistory& f, const std::string& now_at, CheckResult& r) {
    if (f.metric != kThermalMetric || int(f.earlier.size()) < kRisingRuns - 1) return;
    std::vector<Dated> run(f.earlier.end() - (kRisingRuns - 1), f.earlier.end());
    run.push_back({now_at, f.now});
    for (std::size_t i = 1; i < run.size(); ++i)
        if (run[i].value <= run[i - 1].value) return;
    if (run.back().value - run.front().value < kRisingMinC) return;
    std::string seq;
    for (const Dated& d : run) seq += (seq.empty() ? "" : ", ") + format_number(d.value, 4) + " C on " + day(d.at);
    r.findings.emplace_back(Verdict::Warn, g.label + ": the burn's peak temperature rose run after run: " + seq +
                                               " (+" + format_number(run.back().value - run.front().value, 3) +
                                               " C): check its fan and airflow");
}

std::string reuse_text(const HostnameReuse& h) {
    return "hostname " + h.hostname + " was " + h.box + " until " + day(h.until) +
           " with other GPUs: this is another box";
}

}  // namespace

CheckResult judge_drift(const DriftInput& in) {
    CheckResult r;
    r.key = "history.drift";
    r.title = "Drift and swaps against this box's history";
    // Informational (a PASS finding): a new box under a known name is no fault, but never silent.
    if (in.hostname_reused) r.findings.emplace_back(Verdict::Pass, reuse_text(*in.hostname_reused));
    if (!in.any_history) {
        r.verdict = Verdict::Skip;
        r.summary = "no earlier run of this box or its GPUs in the history: this run is the first reference.";
        if (in.hostname_reused) r.summary += " Note: " + reuse_text(*in.hostname_reused) + ".";
        return r;
    }
    for (const SlotChange& s : in.swaps)
        r.findings.emplace_back(Verdict::Warn, "slot " + s.slot + " (GPU " + std::to_string(s.index) + ") held " +
                                                   s.before + " on " + day(s.before_at) + " and now holds " + s.after +
                                                   ": the card was replaced");
    std::size_t compared = 0;
    for (const GpuHistory& g : in.gpus)
        for (const FigureHistory& f : g.figures) {
            compared += f.earlier.empty() ? 0 : 1;
            drifted(g, f, r);
            counter_rose(g, f, r);
            thermal_rising(g, f, in.now_at, r);
        }
    std::size_t changes = 0;
    for (const Finding& f : r.findings) changes += f.verdict == Verdict::Warn ? 1 : 0;
    r.verdict = changes == 0 ? Verdict::Pass : Verdict::Warn;
    r.summary = changes == 0
                    ? std::to_string(compared) +
                          " figures compared with their GPUs' own history of comparable runs: none drifted, "
                          "no card swapped, no error counter rose."
                    : std::to_string(changes) + " change" + (changes == 1 ? "" : "s") + " against this box's history.";
    if (compared == 0 && in.swaps.empty()) {
        r.verdict = Verdict::Skip;
        r.summary = "the history holds no earlier figure of these GPUs from a comparable run to compare with.";
    }
    if (in.hostname_reused) r.summary += " Note: " + reuse_text(*in.hostname_reused) + ".";
    return r;
}

}  // namespace gpuvet::history
