#include "gpu/device/nvml_interval.hpp"

#include <cmath>

#include "gpu/device/interval_mean.hpp"

namespace gpuvet::nvml_backend {

using namespace nvml;

namespace {

constexpr unsigned kSampleBatch = 256;  // entries fetched per call; more rounds when it fills
constexpr int kMaxBatches = 8;          // a buffer is never that long; stops a looping driver
// gpuvet's choice: the energy mean is taken while the reads' timing leaves the interval uncertain
// by at most a quarter. A read's error cancels over two ticks (it ends one interval and starts the
// next), so on a busy CPU, where a call waits for a core, the counter's means still add up to the
// energy; a point read in its place would land in one phase of a periodic job.
constexpr double kEnergyTimingShare = 0.25;

double sample_number(nvmlValueType_t t, const nvmlValue_t& v) {
    switch (t) {
        case NVML_VALUE_TYPE_DOUBLE: return v.dVal;
        case NVML_VALUE_TYPE_UNSIGNED_LONG: return double(v.ulVal);
        case NVML_VALUE_TYPE_UNSIGNED_LONG_LONG: return double(v.ullVal);
        case NVML_VALUE_TYPE_SIGNED_LONG_LONG: return double(v.sllVal);
        case NVML_VALUE_TYPE_SIGNED_INT: return double(v.siVal);
        case NVML_VALUE_TYPE_UNSIGNED_SHORT: return double(v.usVal);
        default: return double(v.uiVal);  // what nvml.h says utilization and clock samples are
    }
}

IntervalFigure point_figure(const Fact<double>& v, std::string note) {
    IntervalFigure f;
    f.mean = f.min = f.max = v;
    f.origin.note = std::move(note);
    return f;
}

Fact<int> rounded(const Fact<double>& v) {
    return v ? Fact<int>(static_cast<int>(std::lround(*v))) : Fact<int>::absent(v.absent_reason);
}

}  // namespace

// The driver stamps its samples with the CPU clock in microseconds since 1970 (the system clock):
// that clock's "now" tells how long the buffer has gone without a sample.
std::uint64_t system_now_us() {
    return static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
            .count());
}

std::string IntervalReader::buffered_mean(nvmlSamplingType_t type, Buffered& b, double hi, bool holes_are_idle,
                                          IntervalFigure& out) {
    const char* symbol = "nvmlDeviceGetSamples";
    if (!b.unsupported.empty()) return b.unsupported;
    if (r_.lost) return "GPU is lost";
    if (!r_.api.nvmlDeviceGetSamples) return b.unsupported = driver_lacks(symbol);
    std::vector<TimedValue> got;
    buf_.resize(kSampleBatch);
    // From just before the last sample used: while the buffer still holds it, it comes back and
    // shows that no sample was overwritten between the reads.
    std::uint64_t since = b.cursor.last_seen_us ? b.cursor.last_seen_us - 1 : 0;
    for (int round = 0; round < kMaxBatches; ++round) {
        nvmlValueType_t vt = NVML_VALUE_TYPE_UNSIGNED_INT;
        unsigned n = kSampleBatch;
        int rc = r_.api.nvmlDeviceGetSamples(r_.dev, type, since, &vt, &n, buf_.data());
        if (rc == NVML_ERROR_NOT_FOUND) break;  // nothing newer: the driver may keep none while the GPU is idle
        if (rc != NVML_SUCCESS) {
            std::string why = r_.status(symbol, rc);
            if (rc == NVML_ERROR_NOT_SUPPORTED) b.unsupported = why;
            return why;
        }
        for (unsigned i = 0; i < std::min(n, kSampleBatch); ++i) {
            got.push_back({buf_[i].timeStamp, sample_number(vt, buf_[i].sampleValue)});
            since = std::max<std::uint64_t>(since, buf_[i].timeStamp);
        }
        if (n < kSampleBatch) break;
    }
    auto m = buffered_interval_mean(std::move(got), b.cursor, system_now_us(), 0, hi, holes_are_idle);
    if (!m) return "no driver samples yet (the driver keeps none while the GPU is idle)";
    out.mean = m->mean, out.min = m->min, out.max = m->max;
    out.origin = {FigureSource::kIntervalMean, m->samples, m->span_s, m->idle_s, {}};
    if (m->carried) out.origin.note = "no new driver sample since the previous read: its latest period";
    return {};
}

void IntervalReader::read_utilization(DeviceSample& s) {
    IntervalFigure g, m;
    std::string why_g = buffered_mean(NVML_GPU_UTILIZATION_SAMPLES, gpu_, 100, true, g);
    std::string why_m = buffered_mean(NVML_MEMORY_UTILIZATION_SAMPLES, memory_, 100, true, m);
    if (!why_g.empty() || !why_m.empty()) {
        nvmlUtilization_t u{};
        std::string why = r_.call("nvmlDeviceGetUtilizationRates", r_.api.nvmlDeviceGetUtilizationRates, &u);
        if (!why_g.empty()) g = point_figure(fact_of(why, double(u.gpu)), why_g);
        if (!why_m.empty()) m = point_figure(fact_of(why, double(u.memory)), why_m);
    }
    s.utilization_gpu = g;
    s.utilization_memory = m;
    s.utilization_gpu_percent = rounded(g.mean);
    s.utilization_memory_percent = rounded(m.mean);
}

void IntervalReader::read_power(DeviceSample& s) {
    std::string note;
    unsigned long long mj = 0;
    // The counter carries no timestamp: the read's time is the middle of the call, and a mean is
    // taken only when the calls' durations leave it within a quarter of the interval.
    auto before = std::chrono::steady_clock::now();
    std::string why = r_.call("nvmlDeviceGetTotalEnergyConsumption", r_.api.nvmlDeviceGetTotalEnergyConsumption, &mj);
    auto after = std::chrono::steady_clock::now();
    if (why.empty()) {
        Counter now{true, mj, 0, before + (after - before) / 2,
                    std::chrono::duration<double>(after - before).count() / 2};
        double elapsed_s = std::chrono::duration<double>(now.at - energy_.at).count();
        double watts = 0;
        if (!energy_.have) {
            note = "first reading of the energy counter";
        } else if (auto w = power_from_energy(energy_.value, mj, elapsed_s); !w) {
            note = "the energy counter went back (driver reloaded)";
        } else if (energy_.uncertainty_s + now.uncertainty_s > kEnergyTimingShare * elapsed_s) {
            note = "the energy counter's read took too long for a mean over this interval";
        } else {
            watts = *w;
        }
        energy_ = now;
        if (note.empty()) {
            s.power_w.mean = s.power_w.min = s.power_w.max = watts;
            s.power_w.origin = {FigureSource::kCounterDifference, 0, elapsed_s, 0, {}};
            s.power_draw_w = watts;
            return;
        }
    } else {
        note = "energy counter: " + why;
    }
    s.power_draw_w = r_.fact("nvmlDeviceGetPowerUsage", r_.api.nvmlDeviceGetPowerUsage, milliwatts_to_w);
    s.power_w = point_figure(s.power_draw_w, note);
}

void IntervalReader::read_violation(nvmlPerfPolicyType_t policy, Counter& c, Fact<double>& out, std::string& why) {
    nvmlViolationTime_t v{};
    why = r_.call("nvmlDeviceGetViolationStatus", r_.api.nvmlDeviceGetViolationStatus, policy, &v);
    if (!why.empty()) {
        out = Fact<double>::absent(why);
        return;
    }
    if (!c.have) {
        why = "first reading of the violation counters";
        out = Fact<double>::absent(why);
    } else if (auto pct = violation_percent(c.value, c.ref_us, v.violationTime, v.referenceTime)) {
        out = *pct;
    } else {
        why = "the violation counters did not advance";
        out = Fact<double>::absent(why);
    }
    c = {true, v.violationTime, v.referenceTime, {}, 0};
}

void IntervalReader::read_clocks(DeviceSample& s) {
    IntervalFigure c;
    std::string why = buffered_mean(NVML_PROCESSOR_CLK_SAMPLES, clock_, 1e6, false, c);
    if (why.empty()) {
        s.clock_sm_mhz = rounded(c.mean);
    } else {
        s.clock_sm_mhz = r_.fact("nvmlDeviceGetClockInfo", r_.api.nvmlDeviceGetClockInfo, as_int, NVML_CLOCK_SM);
        c = point_figure(
            s.clock_sm_mhz ? Fact<double>(*s.clock_sm_mhz) : Fact<double>::absent(s.clock_sm_mhz.absent_reason), why);
    }
    s.clock_sm = c;
    std::string why_p, why_t;
    read_violation(NVML_PERF_POLICY_POWER, violation_power_, s.throttled_power_percent, why_p);
    read_violation(NVML_PERF_POLICY_THERMAL, violation_thermal_, s.throttled_thermal_percent, why_t);
    if (s.throttled_power_percent || s.throttled_thermal_percent)
        s.throttle_origin = {FigureSource::kCounterDifference, 0, 0, 0, {}};
    else s.throttle_origin.note = why_p.empty() ? why_t : why_p;
}

}  // namespace gpuvet::nvml_backend
