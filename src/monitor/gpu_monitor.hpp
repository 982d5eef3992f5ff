// The GPU side of the long-running commands (top, export, run): the selected GPUs opened once
// through the device backend, their fixed facts read once, and a sample() that reads every GPU's
// live facts in one tick. Rates that NVML only gives as cumulative counters (NVLink data) are
// turned into bytes/s here, from the difference of two ticks, so every caller computes them alike.
// Not thread-safe: one caller at a time (export's scrape reads a copy of the last tick).
#pragma once
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gpu/device/backend.hpp"

namespace gpuvet {

// One selected GPU: its backend index and what describe() said, once.
struct MonitoredGpu {
    int index = 0;
    DeviceFacts facts;
    std::string unopened_reason;  // non-empty: the library could not open this GPU
};

// One GPU at one tick.
struct GpuReading {
    int index = 0;
    bool lost = false;  // fell off the bus: the sample's facts are all absent with the reason
    // The driver stopped answering for this GPU during or before this tick (a call abandoned at
    // its deadline): why. Readings made before the hang may be present, but none is current.
    std::string no_answer;
    DeviceSample sample;
    // From the cumulative counters of two ticks; absent on the first tick or when unread.
    Fact<double> nvlink_rx_bytes_per_s, nvlink_tx_bytes_per_s;
};

struct MonitorTick {
    std::chrono::system_clock::time_point wall_time{};
    double t_s = 0;                // seconds since the monitor was made
    std::vector<GpuReading> gpus;  // in the order of GpuMonitor::gpus()
};

// NVML measures PCIe throughput by sampling the link for 20 ms per direction and call, so
// reading it every tick would take 320 ms on 8 GPUs and hold a 10 Hz monitor to 3 Hz. It is read at
// most this often per GPU; the ticks between carry the last reading.
inline constexpr std::chrono::milliseconds kPcieThroughputPeriod{1000};

class GpuMonitor {
public:
    // `backend` must be usable and outlive the monitor. `gpus`: backend indexes (empty = every
    // GPU the backend counts); an index the backend does not have is a usage error.
    // `readings`: the kRead* bits every tick reads.
    GpuMonitor(const DeviceBackend& backend, std::vector<int> gpus, unsigned readings);
    GpuMonitor(const GpuMonitor&) = delete;
    GpuMonitor& operator=(const GpuMonitor&) = delete;

    const std::vector<MonitoredGpu>& gpus() const { return gpus_; }
    unsigned readings() const { return readings_; }
    // Reads every GPU once. A lost GPU stays in the tick (lost = true) so callers can say so.
    MonitorTick sample();
    // Problems met while reading (failed calls), per GPU index, once each.
    std::vector<std::string> errors(int index) const;

private:
    struct Open {
        std::unique_ptr<GpuDevice> device;
        Fact<std::uint64_t> last_rx, last_tx;
        std::chrono::steady_clock::time_point last_at{};
        // PCIe throughput: the last reading and when it was taken (see kPcieThroughputPeriod).
        Fact<double> pcie_rx, pcie_tx;
        std::optional<std::chrono::steady_clock::time_point> pcie_at;
    };
    void read(Open& o, GpuReading& r);

    std::vector<MonitoredGpu> gpus_;
    std::vector<Open> open_;
    unsigned readings_;
    std::chrono::steady_clock::time_point t0_;
};

}  // namespace gpuvet
