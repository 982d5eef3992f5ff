// What `gpuvet top` shows, built from the monitor's ticks: the host header, each GPU's latest
// reading with its datasheet, hints and a bounded history, and the process table. Every printer
// (--once, --json, --log, the screen) reads a TopFrame; none reads NVML or /proc itself.
#pragma once
#include <chrono>
#include <deque>
#include <string>
#include <vector>

#include "host/host_load.hpp"
#include "monitor/gpu_monitor.hpp"
#include "monitor/hints.hpp"
#include "monitor/process_rows.hpp"

namespace gpuvet {

class SpecDb;
struct GpuSpec;

// Samples kept per GPU for the history graph: 4 minutes at 1 Hz, 24 s at 10 Hz.
inline constexpr std::size_t kTopHistoryLength = 240;

struct TopGpu {
    const MonitoredGpu* gpu = nullptr;
    const GpuSpec* spec = nullptr;  // null when the database has no SKU for this GPU
    GpuReading reading;
    std::vector<Hint> hints;
    // Oldest first; a sample that could not be read is absent there, not 0.
    std::deque<Fact<double>> utilization_percent, memory_used_percent, power_percent_of_limit;
};

struct TopFrame {
    std::string host_name;
    SystemFacts system;
    HostLoad host;
    double t_s = 0;
    std::chrono::system_clock::time_point wall_time{};
    std::vector<TopGpu> gpus;
    std::vector<ProcessRow> processes;
    std::string processes_absent_reason;  // when a GPU's list could not be read
};

// The datasheet of a GPU from its PCI device id, narrowed by the driver's name; null when unknown.
const GpuSpec* spec_for(const DeviceFacts& f, const SpecDb& db);

class TopModel {
public:
    // `gpus` and `db` must outlive the model.
    TopModel(const std::vector<MonitoredGpu>& gpus, const SpecDb& db, SystemFacts system, std::string host_name);
    void update(const MonitorTick& tick, HostLoad host, std::vector<ProcessRow> processes);
    const TopFrame& frame() const { return frame_; }

private:
    TopFrame frame_;
};

}  // namespace gpuvet
