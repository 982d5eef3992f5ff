#include "gpu/burn_verdicts.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "gpu/bindings/nvml_api.hpp"

namespace gpuvet {

namespace {

std::string fmt(const char* f, double a) {
    char b[64];
    std::snprintf(b, sizeof b, f, a);
    return b;
}
std::string num(double v) {  // 3 significant digits, no trailing noise
    char b[32];
    std::snprintf(b, sizeof b, "%.3g", v);
    return b;
}

struct BadReason {
    unsigned long long bit;
    const char* name;
};
// Reasons that mean the board or its cooling is failing the GPU (nvml.h bit values).
constexpr BadReason kBadReasons[] = {
    {nvml::kClocksEventReasonHwSlowdown, "HW slowdown"},
    {nvml::kClocksEventReasonHwThermalSlowdown, "HW thermal slowdown"},
    {nvml::kClocksEventReasonSwThermalSlowdown, "SW thermal slowdown"},
    {nvml::kClocksEventReasonHwPowerBrakeSlowdown, "HW power brake"},
};

template <class F>
std::optional<double> max_of(const std::vector<TelemetrySample>& s, F get) {
    std::optional<double> m;
    for (const auto& x : s)
        if (auto v = get(x)) m = m ? std::max(*m, double(*v)) : double(*v);
    return m;
}
template <class F>
std::optional<double> min_of(const std::vector<TelemetrySample>& s, F get) {
    std::optional<double> m;
    for (const auto& x : s)
        if (auto v = get(x)) m = m ? std::min(*m, double(*v)) : double(*v);
    return m;
}

}  // namespace



std::vector<Finding> throttle_findings(const std::vector<TelemetrySample>& s) {
    std::vector<Finding> out;
    size_t with_reasons = 0;
    for (const auto& x : s) with_reasons += x.clock_reasons.has_value();
    for (const auto& r : kBadReasons) {
        size_t n = 0;
        double first = 0;
        std::optional<double> clock_during;
        for (const auto& x : s)
            if (x.clock_reasons && (*x.clock_reasons & r.bit)) {
                if (n++ == 0) first = x.t_s;
                if (x.sm_clock_mhz) clock_during = clock_during ? std::min(*clock_during, *x.sm_clock_mhz) : *x.sm_clock_mhz;
            }
        if (!n) continue;
        auto max_clock = max_of(s, [](const TelemetrySample& x) { return x.sm_clock_mhz; });
        std::string text = std::string(r.name) + " active in " + std::to_string(n) + " of " +
                           std::to_string(with_reasons) + " samples, first at " + fmt("%.0f s", first);
        if (clock_during && max_clock)
            text += fmt(" (SM clock down to %.0f MHz", *clock_during) + fmt(" from %.0f MHz)", *max_clock);
        out.push_back({Verdict::Fail, text});
    }
    size_t cap = 0;
    for (const auto& x : s) cap += x.clock_reasons && (*x.clock_reasons & nvml::kClocksEventReasonSwPowerCap);
    if (cap)
        out.push_back({Verdict::Pass, "SW power cap active in " + std::to_string(cap) + " of " +
                                          std::to_string(with_reasons) +
                                          " samples (normal at full load: the GPU holds its power limit)"});
    return out;
}

std::optional<Finding> temperature_finding(const std::vector<TelemetrySample>& s,
                                           std::optional<double> slowdown_c) {
    auto peak = max_of(s, [](const TelemetrySample& x) { return x.temperature_c; });
    if (!peak) return std::nullopt;
    if (!slowdown_c) return Finding{Verdict::Pass, fmt("peak %.0f °C (slowdown threshold unknown)", *peak)};
    if (*peak >= *slowdown_c - 5)
        return Finding{Verdict::Warn, fmt("peak %.0f °C", *peak) + fmt(", within 5 °C of the %.0f °C slowdown threshold", *slowdown_c)};
    return Finding{Verdict::Pass, fmt("peak %.0f °C", *peak) + fmt(", %.0f °C below the slowdown threshold", *slowdown_c - *peak)};
}

// The GPU's own memory threshold (nvml.h: "Memory Temperature at which the GPU will begin SW
// slowdown"; nvidia-smi's "Memory Max Operating Temp") is the only limit used: no FAIL, since the
// throttle itself shows up as a clock event reason.
std::optional<Finding> memory_temperature_finding(const std::vector<TelemetrySample>& s,
                                                  std::optional<double> memory_max_c) {
    auto peak = max_of(s, [](const TelemetrySample& x) { return x.memory_temperature_c; });
    if (!peak) return std::nullopt;
    if (!memory_max_c) return Finding{Verdict::Pass, fmt("memory peak %.0f °C (memory threshold unknown)", *peak)};
    if (*peak >= *memory_max_c - 5)
        return Finding{Verdict::Warn, fmt("memory peak %.0f °C", *peak) +
                                          fmt(", within 5 °C of the %.0f °C memory slowdown threshold", *memory_max_c)};
    return Finding{Verdict::Pass, fmt("memory peak %.0f °C", *peak) +
                                      fmt(", %.0f °C below the memory slowdown threshold", *memory_max_c - *peak)};
}

std::optional<Finding> power_limit_finding(const std::vector<TelemetrySample>& s,
                                           std::optional<double> default_limit_w) {
    auto lowest = min_of(s, [](const TelemetrySample& x) { return x.power_limit_w; });
    if (!lowest || !default_limit_w) return std::nullopt;
    if (*lowest < *default_limit_w - 0.5)  // NVML reports mW; ignore rounding
        return Finding{Verdict::Warn, fmt("enforced power limit %.0f W", *lowest) +
                                          fmt(" is below the default %.0f W", *default_limit_w)};
    return std::nullopt;
}

double throughput_window_s(double run_s) { return std::min(60.0, run_s / 3.0); }

std::optional<Finding> throughput_drop_finding(const std::vector<double>& t_s, const std::vector<double>& v,
                                               std::string_view unit) {
    if (t_s.size() != v.size() || v.size() < 2) return std::nullopt;
    double t0 = t_s.front(), t1 = t_s.back();
    double w = throughput_window_s(t1 - t0);
    std::vector<double> first, last;
    for (size_t i = 0; i < v.size(); ++i) {
        if (t_s[i] <= t0 + w) first.push_back(v[i]);
        if (t_s[i] >= t1 - w) last.push_back(v[i]);
    }
    auto a = mean(first), b = mean(last);
    if (!a || !b || *a <= 0) return std::nullopt;
    double drop = 1 - *b / *a;
    std::string win = w >= 60 ? "minute" : fmt("%.0f s", w);
    if (drop > 0.10)
        return Finding{Verdict::Warn, "throughput fell " + fmt("%.0f%%", drop * 100) + ": last " + win + " " +
                                          num(*b) + " " + std::string(unit) + " vs first " + win + " " +
                                          num(*a) + " " + std::string(unit)};
    return std::nullopt;
}

std::vector<std::optional<Finding>> peer_findings(const std::vector<GpuBurnOutcome>& gpus) {
    std::vector<std::optional<Finding>> out(gpus.size());
    for (size_t i = 0; i < gpus.size(); ++i) {
        const auto& g = gpus[i];
        auto mine = mean(g.batch_throughput);
        if (g.sku.empty() || !mine) continue;
        std::vector<double> peers;
        std::vector<int> ids;
        for (size_t j = 0; j < gpus.size(); ++j)
            if (j != i && gpus[j].sku == g.sku && gpus[j].load == g.load)
                if (auto m = mean(gpus[j].batch_throughput)) {
                    peers.push_back(*m);
                    ids.push_back(gpus[j].gpu);
                }
        auto med = median(peers);
        if (!med || *med <= 0) continue;
        double below = 1 - *mine / *med;
        if (below > 0.10)
            out[i] = Finding{Verdict::Fail, num(*mine) + " " + g.throughput_unit + " is " +
                                                fmt("%.0f%%", below * 100) + " below the median " + num(*med) +
                                                " " + g.throughput_unit + " of its " + std::to_string(peers.size()) +
                                                " identical peer" + (peers.size() == 1 ? "" : "s") + " (" + g.sku + ")"};
    }
    return out;
}

std::optional<Finding> correctness_finding(const GpuBurnOutcome& g) {
    if (g.mismatches == 0 && g.nans == 0) {
        if (g.results_compared == 0) return std::nullopt;
        return Finding{Verdict::Pass, std::to_string(g.results_compared) + " results matched the reference"};
    }
    return Finding{Verdict::Fail, "wrong results: " + std::to_string(g.mismatches) + " mismatched and " +
                                      std::to_string(g.nans) + " NaN values in " +
                                      std::to_string(g.results_compared) + " results checked"};
}

std::optional<Finding> ecc_finding(const std::vector<TelemetrySample>& s) {
    std::optional<std::uint64_t> first, last, cfirst, clast;
    for (const auto& x : s) {
        if (x.ecc_uncorrected) { if (!first) first = x.ecc_uncorrected; last = x.ecc_uncorrected; }
        if (x.ecc_corrected) { if (!cfirst) cfirst = x.ecc_corrected; clast = x.ecc_corrected; }
    }
    if (first && *last > *first)
        return Finding{Verdict::Fail, "new uncorrectable ECC errors: " + std::to_string(*first) + " -> " +
                                          std::to_string(*last) + " (volatile count)"};
    if (cfirst && *clast > *cfirst)
        return Finding{Verdict::Pass, "corrected ECC errors rose " + std::to_string(*cfirst) + " -> " +
                                          std::to_string(*clast) + " (corrected, no action by itself)"};
    return std::nullopt;
}

std::vector<Finding> xid_findings(const std::vector<XidEvent>& xids, int gpu) {
    std::vector<Finding> out;
    for (const auto& e : xids) {
        if (e.gpu != gpu) continue;
        bool crit = is_critical_xid(e.xid);
        out.push_back({crit ? Verdict::Fail : Verdict::Warn,
                       "Xid " + std::to_string(e.xid) + fmt(" at %.0f s", e.t_s) +
                           (crit ? " (critical: the GPU needs attention)" : " (not on the critical list)")});
    }
    return out;
}

std::vector<CheckResult> burn_verdicts(const BurnInput& in) {
    std::vector<CheckResult> out;
    auto peers = peer_findings(in.gpus);
    for (size_t i = 0; i < in.gpus.size(); ++i) {
        const auto& g = in.gpus[i];
        static const std::vector<TelemetrySample> kNone;
        const std::vector<TelemetrySample>* samples = &kNone;
        const GpuTelemetry* tel = nullptr;
        for (const auto& t : in.telemetry.gpus)
            if (t.gpu == g.gpu) { samples = &t.samples; tel = &t; }

        CheckResult r;
        r.key = "gpu.burn";
        r.title = "Sustained load (burn)";
        r.gpu = g.gpu;
        r.duration_s = g.duration_s;
        std::vector<Finding> f;
        if (!g.load_error.empty()) f.push_back({Verdict::Error, "the load could not run: " + g.load_error});
        if (g.lost || (tel && tel->lost)) f.push_back({Verdict::Fail, "the GPU was lost during the load"});
        if (auto c = correctness_finding(g)) f.push_back(*c);
        for (auto& x : xid_findings(in.telemetry.xids, g.gpu)) f.push_back(x);
        if (auto e = ecc_finding(*samples)) f.push_back(*e);
        for (auto& x : throttle_findings(*samples)) f.push_back(x);
        if (peers[i]) f.push_back(*peers[i]);
        if (auto t = temperature_finding(*samples, g.slowdown_temp_c)) f.push_back(*t);
        if (auto t = memory_temperature_finding(*samples, g.memory_max_temp_c)) f.push_back(*t);
        if (auto p = power_limit_finding(*samples, g.default_power_limit_w)) f.push_back(*p);
        if (auto d = throughput_drop_finding(g.batch_t_s, g.batch_throughput, g.throughput_unit)) f.push_back(*d);

        Verdict v = Verdict::Pass;
        for (const auto& x : f) v = worst(v, x.verdict);
        const bool measured = !g.batch_throughput.empty();
        // Nothing measured: a load that could not start is an error; one a stop came before is not.
        if (!measured && v == Verdict::Pass) v = in.interrupted ? Verdict::Skip : Verdict::Error;

        // Measurements: the figures behind the verdicts.
        auto avg = mean(g.batch_throughput);
        std::string unit = g.throughput_unit;
        std::string tkey = unit == "GB/s" ? "throughput_gbps" : "throughput_tflops";
        if (avg) r.measurements.push_back(Measurement::number(tkey, "Mean throughput (" + g.load + ")", *avg, unit).on_gpu(g.gpu));
        else r.measurements.push_back(Measurement::absent(tkey, "Mean throughput", unit, g.load_error.empty() ? "no batch completed" : g.load_error).on_gpu(g.gpu));
        auto add = [&](const char* key, const char* label, std::optional<double> v2, const char* u) {
            if (v2) r.measurements.push_back(Measurement::number(key, label, *v2, u).on_gpu(g.gpu));
        };
        add("temperature_peak_c", "Peak temperature", max_of(*samples, [](const TelemetrySample& x) { return x.temperature_c; }), "C");
        if (auto& m = r.measurements.back(); m.key == "temperature_peak_c" && g.slowdown_temp_c) {
            Reference ref;
            ref.warn_above = *g.slowdown_temp_c - 5;
            ref.fail_above = *g.slowdown_temp_c;
            ref.source = "NVML slowdown threshold of this GPU";
            m.against(ref);
        }
        if (auto peak = max_of(*samples, [](const TelemetrySample& x) { return x.memory_temperature_c; })) {
            auto m = Measurement::number("memory_temp_max_c", "Peak memory temperature", *peak, "C").on_gpu(g.gpu);
            if (g.memory_max_temp_c) {
                Reference ref;
                ref.warn_above = *g.memory_max_temp_c - 5;
                ref.source = "NVML memory slowdown threshold of this GPU";
                m.against(ref);
            }
            r.measurements.push_back(std::move(m));
        } else {
            std::string why = samples->empty() ? "no telemetry sample" : "not sampled";
            if (tel)
                for (const auto& [field, reason] : tel->absent)
                    if (field == "memory_temperature_c") why = reason;
            r.measurements.push_back(Measurement::absent("memory_temp_max_c", "Peak memory temperature", "C", why).on_gpu(g.gpu));
        }
        add("power_peak_w", "Peak power", max_of(*samples, [](const TelemetrySample& x) { return x.power_w; }), "W");
        add("power_limit_min_w", "Lowest enforced power limit", min_of(*samples, [](const TelemetrySample& x) { return x.power_limit_w; }), "W");
        add("sm_clock_min_mhz", "Lowest SM clock", min_of(*samples, [](const TelemetrySample& x) { return x.sm_clock_mhz; }), "MHz");
        add("sm_clock_max_mhz", "Highest SM clock", max_of(*samples, [](const TelemetrySample& x) { return x.sm_clock_mhz; }), "MHz");
        r.measurements.push_back(Measurement::number("mismatch_count", "Mismatched results", double(g.mismatches), "count").on_gpu(g.gpu));
        r.measurements.push_back(Measurement::number("nan_count", "NaN results", double(g.nans), "count").on_gpu(g.gpu));
        r.measurements.push_back(Measurement::number("results_checked_count", "Results checked", double(g.results_compared), "count").on_gpu(g.gpu));
        add("load_duration_s", "Load duration", g.duration_s, "s");

        // Summary: the worst finding, else a one-line healthy statement.
        const Finding* worst_f = nullptr;
        for (const auto& x : f)
            if (x.verdict == v && x.verdict != Verdict::Pass) { worst_f = &x; break; }
        if (worst_f) {
            r.summary = worst_f->text;
            size_t others = 0;
            for (const auto& x : f) others += (&x != worst_f && x.verdict != Verdict::Pass);
            if (others) r.summary += " (+" + std::to_string(others) + " more finding" + (others == 1 ? "" : "s") + ")";
        } else if (!measured) {
            r.summary = in.interrupted ? "interrupted before a batch of the load completed; no verdict"
                                       : "no batch of the load completed, so nothing was measured";
        } else {
            auto peak = max_of(*samples, [](const TelemetrySample& x) { return x.temperature_c; });
            auto mpeak = max_of(*samples, [](const TelemetrySample& x) { return x.memory_temperature_c; });
            auto pw = max_of(*samples, [](const TelemetrySample& x) { return x.power_w; });
            r.summary = fmt("%.0f s", g.duration_s) + " at " + num(*avg) + " " + unit + " (" + g.load + ")" +
                        (peak ? fmt(", peak %.0f °C", *peak) : "") +
                        (mpeak ? fmt(" (memory %.0f °C)", *mpeak) : "") + (pw ? fmt(", %.0f W", *pw) : "") +
                        ", no throttling, no errors";
        }
        if (in.interrupted) r.details.push_back(fmt("interrupted after %.0f s", g.duration_s) + fmt(" of the planned %.0f s", in.planned_s));
        r.findings.insert(r.findings.end(), f.begin(), f.end());
        for (const auto& n : g.notes) r.details.push_back("load: " + n);
        if (tel)
            for (const auto& [field, why] : tel->absent) r.details.push_back("not sampled: " + field + ": " + why);
        if (!in.telemetry.xid_absent_reason.empty()) r.details.push_back("Xid events not watched: " + in.telemetry.xid_absent_reason);
        r.verdict = v;
        out.push_back(std::move(r));
    }
    return out;
}

}  // namespace gpuvet
