// export's background sampler: one thread opens the GPUs (GpuMonitor), then ticks every interval
// on the one sampling loop, drains the Xid events and re-reads the --check-report file, and
// publishes each finished tick under a mutex. A scrape copies that view and never calls the
// driver, so a slow or hung NVML call delays only the sampler, never an HTTP answer.
#pragma once
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "gpu/device/backend.hpp"
#include "monitor/export_check_report.hpp"
#include "monitor/export_metrics.hpp"
#include "monitor/gpu_monitor.hpp"

namespace gpuvet {

enum class SamplerHealth { Starting, Running, Failed, Ended };

struct SamplerStatus {
    SamplerHealth health = SamplerHealth::Starting;
    std::string message;  // Failed: the error and its advice
};

// What export's sampler reads each tick: everything it exports, not the process lists.
inline constexpr unsigned kExportReadings = kReadEverything & ~kReadProcesses;

class ExportSampler {
public:
    // `backend` must outlive the process's use of it (GpuBackends::shared().devices() does); `monitor` was
    // made over it by the caller, so a missing driver or a bad --gpus is reported before any
    // thread starts. `report` may be null (no --check-report).
    ExportSampler(const DeviceBackend& backend, std::unique_ptr<GpuMonitor> monitor, std::chrono::milliseconds interval,
                  std::string hostname, std::unique_ptr<CheckReportWatch> report);
    ~ExportSampler();
    ExportSampler(const ExportSampler&) = delete;
    ExportSampler& operator=(const ExportSampler&) = delete;

    void start();
    // Asks the thread to end and waits at most `grace`. A thread still inside a driver call then
    // is left to the process's exit (it owns its state, so nothing it uses is freed under it);
    // returns false in that case.
    bool stop(std::chrono::milliseconds grace);

    ExportView view() const;
    SamplerStatus status() const;

    struct Shared;

private:
    std::shared_ptr<Shared> s_;
    std::thread thread_;
};

}  // namespace gpuvet
