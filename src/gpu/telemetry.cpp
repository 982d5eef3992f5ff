#include "gpu/telemetry.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"

namespace gpuvet {

namespace {

// Azure's critical Xid list (REFERENCES.md): each means the GPU needs attention.
constexpr std::uint64_t kCriticalXids[] = {48, 56, 57, 58, 62, 63, 64, 65, 68, 69, 73, 74, 79, 80, 81, 92, 119, 120};

void note_absent(GpuTelemetry& g, const std::string& field, const std::string& why) {
    for (const auto& [f, _] : g.absent)
        if (f == field) return;
    g.absent.emplace_back(field, why);
}

// The telemetry series read from each sample, and the sample's readings they need.
constexpr unsigned kTelemetryReadings =
    kReadUtilization | kReadPower | kReadClocks | kReadThermal | kReadEcc | kReadPcieLink;

// Copies one fact into its sample field, or notes why the field is missing.
template <class Out, class T>
void take(GpuTelemetry& g, const char* field, std::optional<Out>& out, const Fact<T>& f) {
    if (f) out = static_cast<Out>(*f);
    else note_absent(g, field, f.absent_reason);
}

}  // namespace

bool is_critical_xid(std::uint64_t xid) {
    return std::find(std::begin(kCriticalXids), std::end(kCriticalXids), xid) != std::end(kCriticalXids);
}

TelemetrySampler::TelemetrySampler(const DeviceBackend& backend, std::vector<int> gpus, double hz, Clock::time_point t0,
                                   std::size_t history)
    : backend_(backend), hz_(std::isfinite(hz) ? std::clamp(hz, 1.0, 20.0) : 1.0), t0_(t0) {
    for (int i : gpus)
        gpus_.push_back(Gpu{nullptr, GpuTelemetry{i, {}, {}, false}, SampleHistory<TelemetrySample>(history)});
}

void TelemetrySampler::start() {
    if (!backend_.usable())
        throw Error(ErrorKind::Driver, "NVML is not usable: " + backend_.absent_reason(),
                    "install the NVIDIA driver or set GPUVET_LIBNVML");
    std::vector<const GpuDevice*> watched;
    for (auto& g : gpus_) {
        auto dev = backend_.open(g.data.gpu);
        if (!dev->unopened_reason().empty()) {
            note_absent(g.data, "device", dev->unopened_reason());
            g.data.lost = dev->lost();
            continue;
        }
        g.device = std::move(dev);
        watched.push_back(g.device.get());
    }
    events_ = backend_.watch_critical_errors(watched);
    xid_absent_reason_ = events_->absent_reason();
    started_ = true;
    sample_once();  // a first sample at t0, before the load starts heating anything
    next_ = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(1.0 / hz_));
}

TelemetrySampler::Clock::time_point TelemetrySampler::poll() {
    if (!started_) return Clock::now() + std::chrono::seconds(1);
    collect_events();
    if (Clock::now() >= next_) {
        sample_once();
        next_ += std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(1.0 / hz_));
        if (next_ < Clock::now()) next_ = Clock::now();  // fell behind (slow driver): don't burst
    }
    return next_;
}

void TelemetrySampler::stop() {
    if (!started_) return;
    collect_events();  // what arrived since the last poll
    events_.reset();
    started_ = false;
}

TelemetryData TelemetrySampler::snapshot() const {
    TelemetryData d;
    d.sample_hz = hz_;
    d.xids = xids_;
    d.xid_absent_reason = xid_absent_reason_;
    for (const auto& g : gpus_) {
        d.gpus.push_back(g.data);
        d.gpus.back().samples = g.history.items();
    }
    return d;
}

std::optional<TelemetrySample> TelemetrySampler::latest(int gpu) const {
    for (const auto& g : gpus_)
        if (g.data.gpu == gpu && !g.history.empty()) return g.history.back();
    return std::nullopt;
}

void TelemetrySampler::sample_once() {
    for (auto& g : gpus_)
        if (g.device) sample_gpu(g);
}

void TelemetrySampler::sample_gpu(Gpu& g) {
    DeviceSample d = g.device->sample(kTelemetryReadings);
    TelemetrySample s;
    s.t_s = std::chrono::duration<double>(d.taken_at - t0_).count();
    GpuTelemetry& t = g.data;
    take(t, "temperature_c", s.temperature_c, d.temperature_c);
    take(t, "memory_temperature_c", s.memory_temperature_c, d.temperature_memory_c);
    take(t, "power_w", s.power_w, d.power_draw_w);
    take(t, "power_limit_w", s.power_limit_w, d.power_enforced_limit_w);
    take(t, "sm_clock_mhz", s.sm_clock_mhz, d.clock_sm_mhz);
    take(t, "mem_clock_mhz", s.mem_clock_mhz, d.clock_mem_mhz);
    take(t, "utilization_pct", s.utilization_gpu_percent, d.utilization_gpu_percent);
    take(t, "utilization_pct", s.utilization_memory_percent, d.utilization_memory_percent);
    take(t, "clock_reasons", s.clock_event_reasons, d.clock_event_reasons);
    take(t, "ecc_uncorrected", s.ecc_uncorrected, d.ecc.volatile_uncorrected);
    take(t, "ecc_corrected", s.ecc_corrected, d.ecc.volatile_corrected);
    take(t, "pcie_replays", s.pcie_replay_count, d.pcie_replay_count);
    // Absent on the first sample (a counter needs two reads): noted from the second on, when the
    // driver lacks the counters, so the throttle findings can say why they read reason bits.
    if (d.throttled_power_percent) s.throttled_power_percent = *d.throttled_power_percent;
    if (d.throttled_thermal_percent) s.throttled_thermal_percent = *d.throttled_thermal_percent;
    if (!g.history.empty()) take(t, "throttled_pct", s.throttled_thermal_percent, d.throttled_thermal_percent);
    s.utilization_origin = d.utilization_gpu.origin.source;
    s.power_origin = d.power_w.origin.source;
    s.sm_clock_origin = d.clock_sm.origin.source;
    g.history.push(s);
    if (g.device->lost()) {
        t.lost = true;
        g.device.reset();  // stop asking a GPU that fell off the bus
    }
}

void TelemetrySampler::collect_events() {
    if (!events_) return;
    while (auto e = events_->next(std::chrono::milliseconds(0))) {
        double t = std::chrono::duration<double>(Clock::now() - t0_).count();
        xids_.push_back(XidEvent{e->gpu, t, e->code});
    }
}

std::string origin_words(const std::vector<FigureSource>& sources, const char* counter) {
    auto words = [&](FigureSource f) -> std::string {
        switch (f) {
            case FigureSource::kIntervalMean: return "interval means of the driver's samples";
            case FigureSource::kCounterDifference: return std::string(counter) + " differences";
            case FigureSource::kPointRead: break;
        }
        return "point reads";
    };
    std::string out;
    for (FigureSource f : {FigureSource::kIntervalMean, FigureSource::kCounterDifference, FigureSource::kPointRead}) {
        auto n = std::count(sources.begin(), sources.end(), f);
        if (n == 0) continue;
        if (n == static_cast<long>(sources.size())) return words(f);
        out += (out.empty() ? "" : ", ") + words(f) + " (" + std::to_string(n) + " of " +
               std::to_string(sources.size()) + ")";
    }
    return out;
}

std::vector<TimeSeries> to_time_series(const TelemetryData& d) {
    std::vector<TimeSeries> out;
    for (const auto& g : d.gpus) {
        // `origin`: how each kept value was obtained (nullptr: one way only).
        auto add = [&](const char* key, const char* unit, auto get,
                       FigureSource (*origin)(const TelemetrySample&) = nullptr, const char* counter = "") {
            TimeSeries ts{key, unit, g.gpu, {}, {}, {}};
            std::vector<FigureSource> how;
            for (const auto& s : g.samples)
                if (auto v = get(s)) {
                    ts.t_s.push_back(s.t_s);
                    ts.values.push_back(double(*v));
                    if (origin) how.push_back(origin(s));
                }
            if (origin) ts.origin = origin_words(how, counter);
            if (!ts.values.empty()) out.push_back(std::move(ts));
        };
        auto util_origin = [](const TelemetrySample& s) { return s.utilization_origin; };
        auto counter_origin = [](const TelemetrySample&) { return FigureSource::kCounterDifference; };
        add("temperature_c", "C", [](const TelemetrySample& s) { return s.temperature_c; });
        add("memory_temperature_c", "C", [](const TelemetrySample& s) { return s.memory_temperature_c; });
        add(
            "power_w", "W", [](const TelemetrySample& s) { return s.power_w; },
            [](const TelemetrySample& s) { return s.power_origin; }, "energy counter");
        add("power_limit_w", "W", [](const TelemetrySample& s) { return s.power_limit_w; });
        add(
            "sm_clock_mhz", "MHz", [](const TelemetrySample& s) { return s.sm_clock_mhz; },
            [](const TelemetrySample& s) { return s.sm_clock_origin; });
        add("mem_clock_mhz", "MHz", [](const TelemetrySample& s) { return s.mem_clock_mhz; });
        add(
            "utilization_gpu_pct", "%", [](const TelemetrySample& s) { return s.utilization_gpu_percent; },
            util_origin);
        add(
            "utilization_mem_pct", "%", [](const TelemetrySample& s) { return s.utilization_memory_percent; },
            util_origin);
        add(
            "throttled_power_pct", "%", [](const TelemetrySample& s) { return s.throttled_power_percent; },
            counter_origin, "violation counter");
        add(
            "throttled_thermal_pct", "%", [](const TelemetrySample& s) { return s.throttled_thermal_percent; },
            counter_origin, "violation counter");
        add("clock_reasons_mask", "bitmask", [](const TelemetrySample& s) { return s.clock_event_reasons; });
        add("ecc_uncorrected_count", "count", [](const TelemetrySample& s) { return s.ecc_uncorrected; });
        add("ecc_corrected_count", "count", [](const TelemetrySample& s) { return s.ecc_corrected; });
        add("pcie_replay_count", "count", [](const TelemetrySample& s) { return s.pcie_replay_count; });
        TimeSeries x{"xid", "xid", g.gpu, {}, {}, {}};
        for (const auto& e : d.xids)
            if (e.gpu == g.gpu) {
                x.t_s.push_back(e.t_s);
                x.values.push_back(double(e.xid));
            }
        if (!x.values.empty()) out.push_back(std::move(x));
    }
    return out;
}

}  // namespace gpuvet
