#include "monitor/run_summary.hpp"

#include <algorithm>
#include <numeric>
#include <sstream>

#include "core/run_fields.hpp"
#include "core/clock_reasons.hpp"

namespace gpuvet {

namespace {

bool any_gpu_busy(const RunPoint& p) {
    for (const GpuPoint& g : p.gpus)
        if (measured(g.utilization_percent) && g.utilization_percent > 0) return true;
    return false;
}

std::string seconds(double s) {
    std::ostringstream o;
    o.setf(std::ios::fixed);
    o.precision(1);
    o << s << " s";
    return o.str();
}

}  // namespace

SteadyWindow steady_window(const std::vector<RunPoint>& pts, double interval_s, std::optional<double> wall_s) {
    SteadyWindow w;
    if (pts.empty()) return w;
    auto until = [&](double t) { return wall_s ? std::min(t, std::max(*wall_s, pts.front().t_s)) : t; };
    double first = pts.front().t_s, last = until(pts.back().t_s + interval_s);
    double busy_first = -1, busy_last = -1;
    for (const RunPoint& p : pts)
        if (any_gpu_busy(p)) {
            if (busy_first < 0) busy_first = p.t_s;
            busy_last = until(p.t_s + interval_s);
        }
    if (busy_first >= 0) {
        w.gpu_bounded = true;
        first = busy_first;
        last = busy_last;
    }
    double span = std::max(0.0, last - first);
    double warm = std::min(kWarmupFraction * span, kWarmupMax_s), tail = std::min(kTailFraction * span, kTailMax_s);
    w.start_s = first + warm;
    w.end_s = std::max(w.start_s, last - tail);
    w.rule =
        std::string(w.gpu_bounded ? "from the first to the last tick with GPU work" : "the whole run (no GPU work)") +
        " (" + seconds(first) + " to " + seconds(last) + "), less a warm-up of min(10 %, 60 s) = " + seconds(warm) +
        " and a tail of min(5 %, 10 s) = " + seconds(tail);
    return w;
}

Stat weighted_stat(const std::vector<double>& values, const std::vector<double>& weights) {
    std::vector<std::pair<double, double>> vw;
    for (std::size_t i = 0; i < values.size() && i < weights.size(); ++i)
        if (measured(values[i]) && weights[i] > 0) vw.emplace_back(values[i], weights[i]);
    Stat s;
    if (vw.empty()) return s;
    std::sort(vw.begin(), vw.end());
    double total = 0, sum = 0;
    for (auto& [v, w] : vw) total += w, sum += v * w;
    s.mean = sum / total;
    s.max = vw.back().first;
    auto pct = [&](double q) {
        double acc = 0;
        for (auto& [v, w] : vw) {
            acc += w;
            if (acc >= q * total) return v;
        }
        return vw.back().first;
    };
    s.p5 = pct(0.05);
    s.p50 = pct(0.50);
    s.p95 = pct(0.95);
    return s;
}

double WindowView::total_w() const { return std::accumulate(w.begin(), w.end(), 0.0); }

Stat WindowView::stat(const std::function<double(const RunPoint&)>& f) const {
    std::vector<double> v;
    v.reserve(pts.size());
    for (const RunPoint* p : pts) v.push_back(f(*p));
    return weighted_stat(v, w);
}

double WindowView::share(const std::function<bool(const RunPoint&)>& cond,
                         const std::function<bool(const RunPoint&)>& among) const {
    double num = 0, den = 0;
    for (std::size_t i = 0; i < pts.size(); ++i) {
        if (among && !among(*pts[i])) continue;
        den += w[i];
        if (cond(*pts[i])) num += w[i];
    }
    return den > 0 ? num / den : kUnmeasured;
}

double WindowView::weighted_share(const std::function<bool(const RunPoint&)>& cond,
                                  const std::function<double(const RunPoint&)>& weight) const {
    double num = 0, den = 0;
    for (std::size_t i = 0; i < pts.size(); ++i) {
        double k = weight(*pts[i]);
        if (!measured(k) || k <= 0) continue;
        den += w[i] * k;
        if (cond(*pts[i])) num += w[i] * k;
    }
    return den > 0 ? num / den : kUnmeasured;
}

WindowView window_view(const std::vector<RunPoint>& pts, double interval_s, const SteadyWindow& win) {
    WindowView v;
    std::vector<double> spans = point_spans(pts, interval_s);
    for (std::size_t i = 0; i < pts.size(); ++i)
        if (pts[i].t_s >= win.start_s - 1e-9 && pts[i].t_s < win.end_s + 1e-9) {
            v.pts.push_back(&pts[i]);
            v.w.push_back(spans[i]);
        }
    // A run shorter than one tick: judge what there is rather than nothing.
    if (v.pts.empty())
        for (std::size_t i = 0; i < pts.size(); ++i) {
            v.pts.push_back(&pts[i]);
            v.w.push_back(spans[i]);
        }
    return v;
}

// The share of the window's measured ticks whose figure had origin `want` (unmeasured: none).
template <class Get>
double origin_share(const WindowView& v, Get g, TickOrigin GpuPoint::*field, TickOrigin want) {
    double ticks = 0, hits = 0;
    for (const RunPoint* p : v.pts) {
        const GpuPoint* x = g(*p);
        if (!x || x->*field == TickOrigin::kUnmeasured) continue;
        ++ticks;
        hits += x->*field == want;
    }
    return ticks > 0 ? hits / ticks : kUnmeasured;
}

// How the window's figures were obtained: interval means, counter differences or point reads.
template <class Get>
void summarize_origin(const WindowView& v, Get g, GpuRunSummary& s) {
    s.utilization_interval_share = origin_share(v, g, &GpuPoint::utilization_origin, TickOrigin::kIntervalMean);
    s.sm_clock_interval_share = origin_share(v, g, &GpuPoint::sm_clock_origin, TickOrigin::kIntervalMean);
    s.power_counter_share = origin_share(v, g, &GpuPoint::power_origin, TickOrigin::kCounterDifference);
    s.throttle_counter_share = origin_share(v, g, &GpuPoint::throttle_origin, TickOrigin::kCounterDifference);
    double means = 0, samples = 0;
    for (const RunPoint* p : v.pts)
        if (const GpuPoint* x = g(*p); x && x->utilization_origin == TickOrigin::kIntervalMean)
            ++means, samples += x->utilization_samples.value_or(0);
    if (means > 0) s.utilization_samples_per_tick = samples / means;
}

GpuRunSummary summarize_gpu(const std::vector<RunPoint>& all, const WindowView& v, std::size_t k,
                            const RunGpuFacts& facts) {
    GpuRunSummary s;
    s.facts = facts;
    auto g = [k](const RunPoint& p) -> const GpuPoint* { return k < p.gpus.size() ? &p.gpus[k] : nullptr; };
    auto field = [&](double GpuPoint::*m) {
        return v.stat([&, m](const RunPoint& p) { return g(p) ? g(p)->*m : kUnmeasured; });
    };
    for (const GpuSignal& f : kGpuSignals)
        if (f.window) s.*f.window = field(std::get<double GpuPoint::*>(f.point));
    s.power_limit_w = field(&GpuPoint::power_limit_w).p50;
    double first_replays = kUnmeasured, last_replays = kUnmeasured;
    for (const RunPoint& p : all) {
        const GpuPoint* x = g(p);
        if (!x) continue;
        if (measured(x->pcie_replay_count)) {
            if (!measured(first_replays)) first_replays = x->pcie_replay_count;
            last_replays = x->pcie_replay_count;
        }
        if (measured(x->utilization_percent))
            s.utilization_peak_percent = measured(s.utilization_peak_percent)
                                             ? std::max(s.utilization_peak_percent, x->utilization_percent)
                                             : x->utilization_percent;
        auto keep_max = [](std::optional<int>& most, const std::optional<int>& now) {
            if (now) most = std::max(most.value_or(*now), *now);
        };
        keep_max(s.job_processes_max, x->job_processes);
        keep_max(s.gpu_processes_max, x->gpu_processes);
        if (x->lost && !s.lost) {
            s.lost = true;
            s.lost_at_s = p.t_s;
        }
    }
    // A hardware fault counts whenever it happens, not only in the steady window.
    if (measured(first_replays) && last_replays >= first_replays) s.pcie_replays = last_replays - first_replays;
    auto known = [&](const RunPoint& p) { return g(p) && g(p)->reasons_known; };
    auto bit = [&](std::uint64_t mask) {
        return v.share([&, mask](const RunPoint& p) { return (g(p)->clock_event_reasons & mask) != 0; }, known);
    };
    // The violation counters give the share of the time itself (a dip between two ticks counts);
    // the reason bits only what each tick caught.
    Stat power_held = field(&GpuPoint::throttled_power_percent);
    Stat thermal_held = field(&GpuPoint::throttled_thermal_percent);
    s.power_cap_fraction = measured(power_held.mean) ? power_held.mean / 100 : bit(clock_reason::kSwPowerCap);
    s.thermal_fraction = measured(thermal_held.mean)
                             ? thermal_held.mean / 100
                             : bit(clock_reason::kSwThermalSlowdown | clock_reason::kHwThermalSlowdown);
    s.power_brake_fraction = bit(clock_reason::kHwPowerBrakeSlowdown);
    summarize_origin(v, g, s);
    return s;
}

HostRunSummary summarize_host(const std::vector<RunPoint>& all, const WindowView& v, int cpus) {
    HostRunSummary h;
    h.cpus = cpus;
    for (const RunPoint& p : all) {
        h.workers_max = std::max(h.workers_max, p.host.workers);
        h.named_workers_max = std::max(h.named_workers_max, p.host.named_workers);
        h.processes_max = std::max(h.processes_max, p.host.processes);
    }
    auto field = [&](double HostPoint::*m) { return v.stat([m](const RunPoint& p) { return p.host.*m; }); };
    for (const HostSignal& f : kHostSignals)
        if (f.window) h.*f.window = field(std::get<double HostPoint::*>(f.point));
    return h;
}

}  // namespace gpuvet
