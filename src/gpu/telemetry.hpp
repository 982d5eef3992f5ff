// NVML telemetry during a burn: a sampler thread reading every selected GPU at a fixed rate
// (1-20 Hz) and an event thread waiting for critical Xid events. Everything read is kept as
// plain samples; to_time_series() turns them into the report's TimeSeries (units in the keys).
#pragma once
#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/result.hpp"
#include "gpu/bindings/nvml_api.hpp"

namespace gpuvet {

// One GPU at one instant. A field is empty when the call failed or is unsupported; the first
// reason per field is kept in GpuTelemetry::absent.
struct TelemetrySample {
    double t_s = 0;  // seconds since the sampler's t0
    std::optional<double> temperature_c, memory_temperature_c, power_w, power_limit_w, sm_clock_mhz, mem_clock_mhz,
        utilization_gpu_pct, utilization_mem_pct;
    std::optional<std::uint64_t> clock_reasons, ecc_uncorrected, ecc_corrected, pcie_replays;
};

struct XidEvent {
    int gpu = 0;       // NVML index
    double t_s = 0;
    std::uint64_t xid = 0;
};

struct GpuTelemetry {
    int gpu = 0;
    std::vector<TelemetrySample> samples;
    std::vector<std::pair<std::string, std::string>> absent;  // field -> why it is missing
    bool lost = false;  // NVML said GPU_IS_LOST
};

struct TelemetryData {
    std::vector<GpuTelemetry> gpus;
    std::vector<XidEvent> xids;
    std::string xid_absent_reason;  // set when Xid events could not be watched
    double sample_hz = 1;
};

class TelemetrySampler {
public:
    using Clock = std::chrono::steady_clock;
    // `api` must outlive the sampler. gpus are NVML indexes. hz is clamped to [1, 20].
    TelemetrySampler(const NvmlApi& api, std::vector<int> gpus, double hz, Clock::time_point t0);
    ~TelemetrySampler();
    TelemetrySampler(const TelemetrySampler&) = delete;
    TelemetrySampler& operator=(const TelemetrySampler&) = delete;

    // Initialises NVML and starts both threads. Throws NvmlError when NVML cannot start.
    void start();
    // Stops both threads promptly (waits are bounded) and shuts NVML down. Idempotent.
    void stop();
    // A consistent copy of everything read so far (safe while running).
    TelemetryData snapshot() const;
    // The latest sample of a GPU, if any.
    std::optional<TelemetrySample> latest(int gpu) const;

private:
    void sample_loop();
    void event_loop();
    void sample_once();

    const NvmlApi& api_;
    std::vector<int> indexes_;
    std::vector<nvml::nvmlDevice_t> devs_;     // live handles (nullptr once lost); sampler thread
    std::vector<nvml::nvmlDevice_t> handles_;  // as opened; read-only after start()
    double hz_;
    Clock::time_point t0_;
    std::atomic<bool> stop_{false};
    bool started_ = false;
    mutable std::mutex mu_;
    TelemetryData data_;
    std::thread sampler_, events_;
};

// The report's series: per GPU "temperature_c", "memory_temperature_c", "power_w", "power_limit_w", "sm_clock_mhz",
// "mem_clock_mhz", "utilization_gpu_pct", "utilization_mem_pct", "clock_reasons_mask",
// "ecc_uncorrected_count", "ecc_corrected_count", "pcie_replay_count"; plus "xid" (value = Xid).
std::vector<TimeSeries> to_time_series(const TelemetryData& d);

// Xids the industry treats as critical (Azure's list in REFERENCES.md).
bool is_critical_xid(std::uint64_t xid);

}  // namespace gpuvet
