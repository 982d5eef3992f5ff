#include "gpu/burn_judge.hpp"

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

namespace {

// A counter share below this is the counter's granularity, not a slowdown (gpuvet's choice: 5 ms
// of a 1 s interval).
constexpr double kHeldPercentMin = 0.5;

// The time-weighted share of the run a violation counter says the clocks were held down, each
// sample weighing the time since the one before it, with the worst interval.
struct HeldShare {
    double mean_percent = 0, peak_percent = 0, peak_t_s = 0;
    std::size_t intervals = 0;
};
std::optional<HeldShare> held_share(const std::vector<TelemetrySample>& s,
                                    std::optional<double> TelemetrySample::*field) {
    HeldShare h;
    double weighted = 0, total = 0;
    for (std::size_t i = 1; i < s.size(); ++i) {
        const auto& v = s[i].*field;
        double dt = s[i].t_s - s[i - 1].t_s;
        if (!v || dt <= 0) continue;
        weighted += *v * dt, total += dt, ++h.intervals;
        if (*v > h.peak_percent) h.peak_percent = *v, h.peak_t_s = s[i].t_s;
    }
    if (h.intervals == 0) return std::nullopt;
    h.mean_percent = weighted / total;
    return h;
}

// "SM clock down to 1500 MHz from 1980 MHz" over the samples `during` selects (the top is the run's
// highest SM clock).
template <class F>
std::string clock_dip(const std::vector<TelemetrySample>& s, F during) {
    auto low = min_of(s, [&](const TelemetrySample& x) { return during(x) ? x.sm_clock_mhz : std::nullopt; });
    auto top = max_of(s, [](const TelemetrySample& x) { return x.sm_clock_mhz; });
    if (!low || !top) return "";
    // Held down from the first sample on: there is no higher clock of this run to name.
    if (*low >= *top) return fmt(" (SM clock %.0f MHz", *low) + " in every such sample, never higher in the run)";
    return fmt(" (SM clock down to %.0f MHz", *low) + fmt(" from %.0f MHz)", *top);
}

// One reason bit over the samples: how many caught it, the first time.
struct BitCount {
    std::size_t n = 0, of = 0;
    double first_t_s = 0;
};
BitCount count_bit(const std::vector<TelemetrySample>& s, unsigned long long bit) {
    BitCount c;
    for (const auto& x : s) {
        if (!x.clock_event_reasons) continue;
        ++c.of;
        if ((*x.clock_event_reasons & bit) && c.n++ == 0) c.first_t_s = x.t_s;
    }
    return c;
}

const char* const kPointBits = " (clock-event reason bits read at each sample: a slowdown between samples is not seen)";

// Thermal slowdown from the thermal violation counter: the share of the time, so a dip between two
// samples counts; the reason bits caught at the samples are named beside it.
std::optional<Finding> thermal_counter_finding(const std::vector<TelemetrySample>& s, const HeldShare& h) {
    BitCount sw = count_bit(s, nvml::kClocksEventReasonSwThermalSlowdown);
    BitCount hw = count_bit(s, nvml::kClocksEventReasonHwThermalSlowdown);
    if (h.peak_percent < kHeldPercentMin && sw.n == 0 && hw.n == 0) return std::nullopt;
    std::string text = fmt("thermal slowdown held the clocks down %.1f%% of the time", h.mean_percent) +
                       fmt(" (violation counter, %.0f%%", h.peak_percent) +
                       fmt(" of the interval ending at %.0f s", h.peak_t_s) + " at worst)";
    if (sw.n || hw.n)
        text += "; the reason bits caught it in " + std::to_string(std::max(sw.n, hw.n)) + " of " +
                std::to_string(std::max(sw.of, hw.of)) + " samples (" + (hw.n ? "HW" : "SW") + " thermal)";
    text += clock_dip(s, [](const TelemetrySample& x) {
        return x.throttled_thermal_percent.value_or(0) >= kHeldPercentMin ||
               (x.clock_event_reasons && (*x.clock_event_reasons & (nvml::kClocksEventReasonSwThermalSlowdown |
                                                                    nvml::kClocksEventReasonHwThermalSlowdown)));
    });
    return Finding{Verdict::Fail, text};
}

}  // namespace

std::vector<Finding> throttle_findings(const std::vector<TelemetrySample>& s) {
    std::vector<Finding> out;
    auto thermal = held_share(s, &TelemetrySample::throttled_thermal_percent);
    if (thermal)
        if (auto f = thermal_counter_finding(s, *thermal)) out.push_back(*f);
    for (const auto& r : kBadReasons) {
        // With the thermal counter, the thermal bits are in its finding.
        bool is_thermal =
            r.bit == nvml::kClocksEventReasonSwThermalSlowdown || r.bit == nvml::kClocksEventReasonHwThermalSlowdown;
        if (thermal && is_thermal) continue;
        BitCount c = count_bit(s, r.bit);
        if (!c.n) continue;
        std::string text = std::string(r.name) + " active in " + std::to_string(c.n) + " of " + std::to_string(c.of) +
                           " samples, first at " + fmt("%.0f s", c.first_t_s) +
                           clock_dip(s,
                                     [&](const TelemetrySample& x) {
                                         return x.clock_event_reasons && (*x.clock_event_reasons & r.bit);
                                     }) +
                           kPointBits;
        out.push_back({Verdict::Fail, text});
    }
    const char* normal = " (normal at full load: the GPU holds its power limit)";
    if (auto cap = held_share(s, &TelemetrySample::throttled_power_percent)) {
        if (cap->peak_percent >= kHeldPercentMin)
            out.push_back(
                {Verdict::Pass, fmt("SW power cap held the clocks down %.1f%% of the time", cap->mean_percent) +
                                    " (violation counter)" + normal});
    } else if (BitCount c = count_bit(s, nvml::kClocksEventReasonSwPowerCap); c.n) {
        out.push_back({Verdict::Pass, "SW power cap active in " + std::to_string(c.n) + " of " + std::to_string(c.of) +
                                          " samples" + normal + kPointBits});
    }
    return out;
}

std::optional<Finding> temperature_finding(const std::vector<TelemetrySample>& s, std::optional<double> slowdown_c) {
    auto peak = max_of(s, [](const TelemetrySample& x) { return x.temperature_c; });
    if (!peak) return std::nullopt;
    if (!slowdown_c) return Finding{Verdict::Pass, fmt("peak %.0f °C (slowdown threshold unknown)", *peak)};
    if (*peak >= *slowdown_c - 5)
        return Finding{Verdict::Warn, fmt("peak %.0f °C", *peak) +
                                          fmt(", within 5 °C of the %.0f °C slowdown threshold", *slowdown_c)};
    return Finding{Verdict::Pass,
                   fmt("peak %.0f °C", *peak) + fmt(", %.0f °C below the slowdown threshold", *slowdown_c - *peak)};
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
        return Finding{Verdict::Warn, "throughput fell " + fmt("%.0f%%", drop * 100) + ": last " + win + " " + num(*b) +
                                          " " + std::string(unit) + " vs first " + win + " " + num(*a) + " " +
                                          std::string(unit)};
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
            out[i] = Finding{Verdict::Fail, num(*mine) + " " + g.throughput_unit + " is " + fmt("%.0f%%", below * 100) +
                                                " below the median " + num(*med) + " " + g.throughput_unit +
                                                " of its " + std::to_string(peers.size()) + " identical peer" +
                                                (peers.size() == 1 ? "" : "s") + " (" + g.sku + ")"};
    }
    return out;
}

std::optional<Finding> correctness_finding(const GpuBurnOutcome& g) {
    if (g.mismatches == 0 && g.nans == 0) {
        if (g.results_compared == 0) return std::nullopt;
        return Finding{Verdict::Pass, std::to_string(g.results_compared) + " results matched the reference"};
    }
    return Finding{Verdict::Fail, "wrong results: " + std::to_string(g.mismatches) + " mismatched and " +
                                      std::to_string(g.nans) + " NaN values in " + std::to_string(g.results_compared) +
                                      " results checked"};
}

std::optional<Finding> ecc_finding(const std::vector<TelemetrySample>& s) {
    std::optional<std::uint64_t> first, last, cfirst, clast;
    for (const auto& x : s) {
        if (x.ecc_uncorrected) {
            if (!first) first = x.ecc_uncorrected;
            last = x.ecc_uncorrected;
        }
        if (x.ecc_corrected) {
            if (!cfirst) cfirst = x.ecc_corrected;
            clast = x.ecc_corrected;
        }
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

namespace {

const std::vector<TelemetrySample>& samples_of(const GpuTelemetry* tel) {
    static const std::vector<TelemetrySample> kNone;
    return tel ? tel->samples : kNone;
}

// The telemetry of one GPU; null when it was not sampled.
const GpuTelemetry* telemetry_of(const TelemetryData& t, int gpu) {
    const GpuTelemetry* found = nullptr;
    for (const auto& x : t.gpus)
        if (x.gpu == gpu) found = &x;
    return found;
}

Measurement throughput_measurement(const GpuBurnOutcome& g) {
    const std::string key = g.throughput_unit == "GB/s" ? "throughput_gbps" : "throughput_tflops";
    if (auto avg = mean(g.batch_throughput))
        return Measurement::number(key, "Mean throughput (" + g.load + ")", *avg, g.throughput_unit).on_gpu(g.gpu);
    return Measurement::absent(key, "Mean throughput", g.throughput_unit,
                               g.load_error.empty() ? "no batch completed" : g.load_error)
        .on_gpu(g.gpu);
}

std::optional<Measurement> peak_temperature_measurement(const GpuBurnOutcome& g,
                                                        const std::vector<TelemetrySample>& s) {
    auto peak = max_of(s, [](const TelemetrySample& x) { return x.temperature_c; });
    if (!peak) return std::nullopt;
    auto m = Measurement::number("temperature_peak_c", "Peak temperature", *peak, "C").on_gpu(g.gpu);
    if (g.slowdown_temp_c) {
        Reference ref;
        ref.warn_above = *g.slowdown_temp_c - 5;
        ref.fail_above = *g.slowdown_temp_c;
        ref.source = g.slowdown_source;
        m.against(ref);
    }
    return m;
}

// Present, or absent with the sampler's reason for the field.
Measurement memory_temperature_measurement(const GpuBurnOutcome& g, const GpuTelemetry* tel) {
    const auto& s = samples_of(tel);
    if (auto peak = max_of(s, [](const TelemetrySample& x) { return x.memory_temperature_c; })) {
        auto m = Measurement::number("memory_temp_max_c", "Peak memory temperature", *peak, "C").on_gpu(g.gpu);
        if (g.memory_max_temp_c) {
            Reference ref;
            ref.warn_above = *g.memory_max_temp_c - 5;
            ref.source = g.memory_max_source;
            m.against(ref);
        }
        return m;
    }
    std::string why = s.empty() ? "no telemetry sample" : "not sampled";
    if (tel)
        for (const auto& [field, reason] : tel->absent)
            if (field == "memory_temperature_c") why = reason;
    return Measurement::absent("memory_temp_max_c", "Peak memory temperature", "C", why).on_gpu(g.gpu);
}

std::vector<std::string> burn_details(const BurnInput& in, const GpuBurnOutcome& g, const GpuTelemetry* tel) {
    std::vector<std::string> d;
    if (in.interrupted)
        d.push_back(fmt("interrupted after %.0f s", g.duration_s) + fmt(" of the planned %.0f s", in.planned_s));
    for (const auto& n : g.notes) d.push_back("load: " + n);
    if (tel)
        for (const auto& [field, why] : tel->absent) d.push_back("not sampled: " + field + ": " + why);
    if (!in.telemetry.xid_absent_reason.empty())
        d.push_back("Xid events not watched: " + in.telemetry.xid_absent_reason);
    return d;
}

}  // namespace

std::vector<Finding> load_findings(const GpuBurnOutcome& g, bool telemetry_lost) {
    std::vector<Finding> f;
    if (!g.load_error.empty()) f.push_back({Verdict::Error, "the load could not run: " + g.load_error});
    if (g.lost || telemetry_lost) f.push_back({Verdict::Fail, "the GPU was lost during the load"});
    return f;
}

std::vector<Finding> gpu_findings(const GpuBurnOutcome& g, const GpuTelemetry* tel, const std::optional<Finding>& peer,
                                  const std::vector<XidEvent>& xids) {
    const auto& s = samples_of(tel);
    std::vector<Finding> f = load_findings(g, tel && tel->lost);
    auto add = [&](std::vector<Finding> more) { f.insert(f.end(), more.begin(), more.end()); };
    auto add_one = [&](const std::optional<Finding>& x) {
        if (x) f.push_back(*x);
    };
    add_one(correctness_finding(g));
    add(xid_findings(xids, g.gpu));
    add_one(ecc_finding(s));
    add(throttle_findings(s));
    add_one(peer);
    add_one(temperature_finding(s, g.slowdown_temp_c));
    add_one(memory_temperature_finding(s, g.memory_max_temp_c));
    add_one(power_limit_finding(s, g.default_power_limit_w));
    add_one(throughput_drop_finding(g.batch_t_s, g.batch_throughput, g.throughput_unit));
    return f;
}

Verdict burn_verdict(const std::vector<Finding>& f, bool measured, bool interrupted) {
    Verdict v = Verdict::Pass;
    for (const auto& x : f) v = worst(v, x.verdict);
    // Nothing measured: a load that could not start is an error; one a stop came before is not.
    if (!measured && v == Verdict::Pass) v = interrupted ? Verdict::Skip : Verdict::Error;
    return v;
}

std::vector<Measurement> burn_measurements(const GpuBurnOutcome& g, const GpuTelemetry* tel) {
    const auto& s = samples_of(tel);
    std::vector<Measurement> out{throughput_measurement(g)};
    auto add = [&](const char* key, const char* label, std::optional<double> v, const char* unit) {
        if (v) out.push_back(Measurement::number(key, label, *v, unit).on_gpu(g.gpu));
    };
    if (auto m = peak_temperature_measurement(g, s)) out.push_back(std::move(*m));
    out.push_back(memory_temperature_measurement(g, tel));
    // Power and the SM clock are each sample's mean over the time since the one before (energy
    // counter, the driver's clock samples) where the driver has them: the peak is the highest such
    // mean, not an instant.
    add("power_peak_w", "Peak power (highest interval mean)",
        max_of(s, [](const TelemetrySample& x) { return x.power_w; }), "W");
    add("power_limit_min_w", "Lowest enforced power limit",
        min_of(s, [](const TelemetrySample& x) { return x.power_limit_w; }), "W");
    add("sm_clock_min_mhz", "Lowest SM clock (lowest interval mean)",
        min_of(s, [](const TelemetrySample& x) { return x.sm_clock_mhz; }), "MHz");
    add("sm_clock_max_mhz", "Highest SM clock", max_of(s, [](const TelemetrySample& x) { return x.sm_clock_mhz; }),
        "MHz");
    auto held = [&](std::optional<double> TelemetrySample::*f) {
        auto h = held_share(s, f);
        return h ? std::optional<double>(h->mean_percent) : std::nullopt;
    };
    add("thermal_throttle_pct", "Time held down by a thermal slowdown (violation counter)",
        held(&TelemetrySample::throttled_thermal_percent), "%");
    add("power_cap_pct", "Time held down by the power cap (violation counter)",
        held(&TelemetrySample::throttled_power_percent), "%");
    add("mismatch_count", "Mismatched results", double(g.mismatches), "count");
    add("nan_count", "NaN results", double(g.nans), "count");
    add("results_checked_count", "Results checked", double(g.results_compared), "count");
    add("load_duration_s", "Load duration", g.duration_s, "s");
    return out;
}

std::string burn_summary(const std::vector<Finding>& f, Verdict v, const GpuBurnOutcome& g,
                         const std::vector<TelemetrySample>& s, bool interrupted) {
    for (const auto& worst_f : f) {
        if (worst_f.verdict != v || v == Verdict::Pass) continue;
        size_t others = 0;
        for (const auto& x : f) others += (&x != &worst_f && x.verdict != Verdict::Pass);
        if (!others) return worst_f.text;
        return worst_f.text + " (+" + std::to_string(others) + " more finding" + (others == 1 ? "" : "s") + ")";
    }
    auto avg = mean(g.batch_throughput);
    if (!avg)
        return interrupted ? "interrupted before a batch of the load completed; no verdict"
                           : "no batch of the load completed, so nothing was measured";
    auto peak = max_of(s, [](const TelemetrySample& x) { return x.temperature_c; });
    auto mpeak = max_of(s, [](const TelemetrySample& x) { return x.memory_temperature_c; });
    auto pw = max_of(s, [](const TelemetrySample& x) { return x.power_w; });
    return fmt("%.0f s", g.duration_s) + " at " + num(*avg) + " " + g.throughput_unit + " (" + g.load + ")" +
           (peak ? fmt(", peak %.0f °C", *peak) : "") + (mpeak ? fmt(" (memory %.0f °C)", *mpeak) : "") +
           (pw ? fmt(", %.0f W", *pw) : "") + ", no throttling, no errors";
}

std::vector<CheckResult> judge_burn(const BurnInput& in) {
    std::vector<CheckResult> out;
    auto peers = peer_findings(in.gpus);
    for (size_t i = 0; i < in.gpus.size(); ++i) {
        const auto& g = in.gpus[i];
        const GpuTelemetry* tel = telemetry_of(in.telemetry, g.gpu);
        CheckResult r;
        r.key = "gpu.burn";
        r.title = "Sustained load (burn)";
        r.gpu = g.gpu;
        r.duration_s = g.duration_s;
        r.findings = gpu_findings(g, tel, peers[i], in.telemetry.xids);
        r.verdict = burn_verdict(r.findings, !g.batch_throughput.empty(), in.interrupted);
        r.measurements = burn_measurements(g, tel);
        r.summary = burn_summary(r.findings, r.verdict, g, samples_of(tel), in.interrupted);
        r.details = burn_details(in, g, tel);
        out.push_back(std::move(r));
    }
    return out;
}

}  // namespace gpuvet
