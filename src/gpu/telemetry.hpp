// Telemetry during a burn: every selected GPU read through the device backend at a fixed rate
// (1-20 Hz), and the critical hardware errors (Xids) it reports. No thread of its own: the caller
// already loops (the burn's progress loop) and calls poll() each turn. Each GPU keeps a bounded
// history (SampleHistory); to_time_series() turns a snapshot into the report's TimeSeries.
#pragma once
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/result.hpp"
#include "gpu/device/backend.hpp"
#include "core/sample_history.hpp"

namespace gpuvet {

// One GPU at one instant. A field is empty when the call failed or is unsupported; the first
// reason per field is kept in GpuTelemetry::absent.
struct TelemetrySample {
    double t_s = 0;  // seconds since the sampler's t0
    std::optional<double> temperature_c, memory_temperature_c, power_w, power_limit_w, sm_clock_mhz, mem_clock_mhz,
        utilization_gpu_percent, utilization_memory_percent;
    std::optional<std::uint64_t> clock_event_reasons, ecc_uncorrected, ecc_corrected, pcie_replay_count;
    // Share of the time since the previous sample the clocks were held down by the power cap or by
    // a thermal slowdown (the driver's violation counters), so a dip between two samples counts;
    // absent on the first sample and where the driver lacks the counters.
    std::optional<double> throttled_power_percent, throttled_thermal_percent;
    // How the interval figures were obtained: utilization and the SM clock as means of the
    // driver's samples since the previous sample, power as the energy counter's difference, or
    // each a point read at the instant.
    FigureSource utilization_origin = FigureSource::kPointRead, power_origin = FigureSource::kPointRead,
                 sm_clock_origin = FigureSource::kPointRead;
};

struct XidEvent {
    int gpu = 0;  // NVML index
    double t_s = 0;
    std::uint64_t xid = 0;
};

struct GpuTelemetry {
    int gpu = 0;
    std::vector<TelemetrySample> samples;                     // oldest first; thinned when the history filled
    std::vector<std::pair<std::string, std::string>> absent;  // field -> why it is missing
    bool lost = false;                                        // the GPU fell off the bus
};

struct TelemetryData {
    std::vector<GpuTelemetry> gpus;
    std::vector<XidEvent> xids;
    std::string xid_absent_reason;  // set when Xid events could not be watched
    double sample_hz = 1;
};

// Per GPU: 16384 samples, 4.5 hours at the default 1 Hz, 13 minutes at 20 Hz before the older
// half is thinned; about 4 MB per GPU.
inline constexpr std::size_t kTelemetryHistory = 16384;

class TelemetrySampler {
public:
    using Clock = std::chrono::steady_clock;
    // `backend` must outlive the sampler. gpus are backend indexes. hz is clamped to [1, 20].
    TelemetrySampler(const DeviceBackend& backend, std::vector<int> gpus, double hz, Clock::time_point t0,
                     std::size_t history = kTelemetryHistory);
    TelemetrySampler(const TelemetrySampler&) = delete;
    TelemetrySampler& operator=(const TelemetrySampler&) = delete;

    // Opens the GPUs, starts watching for Xids and takes the first sample. Throws a driver Error
    // when the backend is unusable.
    void start();
    // Takes a sample of every GPU when one is due and collects the Xids that arrived. Returns
    // when the next sample is due; the caller sleeps until then (or less) and calls again.
    Clock::time_point poll();
    // Stops watching. Idempotent; the data stays readable.
    void stop();
    // A copy of everything read so far.
    TelemetryData snapshot() const;
    // The latest sample of a GPU, if any.
    std::optional<TelemetrySample> latest(int gpu) const;

private:
    struct Gpu {
        std::unique_ptr<GpuDevice> device;  // null once lost or when it could not be opened
        GpuTelemetry data;
        SampleHistory<TelemetrySample> history;
    };
    void sample_once();
    void sample_gpu(Gpu& g);
    void collect_events();

    const DeviceBackend& backend_;
    std::vector<Gpu> gpus_;
    double hz_;
    Clock::time_point t0_, next_{};
    std::unique_ptr<EventWatch> events_;
    std::vector<XidEvent> xids_;
    std::string xid_absent_reason_;
    bool started_ = false;
};

// The report's series: per GPU "temperature_c", "memory_temperature_c", "power_w", "power_limit_w", "sm_clock_mhz",
// "mem_clock_mhz", "utilization_gpu_pct", "utilization_mem_pct", "clock_reasons_mask",
// "ecc_uncorrected_count", "ecc_corrected_count", "pcie_replay_count", "throttled_power_pct",
// "throttled_thermal_pct"; plus "xid" (value = Xid). Power, SM clock, utilization and the
// throttled shares say in `origin` how their values were obtained.
std::vector<TimeSeries> to_time_series(const TelemetryData& d);

// How a run of samples' figures were obtained, in words: "interval means of the driver's samples",
// "energy counter differences", "point reads", or a mix with the counts ("point reads (2 of 60)").
// `counter` names the counter a difference came from ("energy counter").
std::string origin_words(const std::vector<FigureSource>& sources, const char* counter);

// Xids the industry treats as critical (Azure's list in REFERENCES.md).
bool is_critical_xid(std::uint64_t xid);

}  // namespace gpuvet
