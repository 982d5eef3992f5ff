// What `gpuvet export` serves on /metrics: dcgm-exporter's metric and label names for what both
// read (so its dashboards and alerts work unchanged), then gpuvet's own series (lost GPUs,
// clock-event reasons, limits against their defaults and maxima, the last check's verdicts and
// figures against the spec). Pure: renders a view the sampler filled; it never reads a GPU.
#pragma once
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "monitor/export_check_report.hpp"
#include "monitor/gpu_monitor.hpp"

namespace gpuvet {

// A scrape's copy of the sampler's state (pointers to immutable data: cheap to copy under a lock).
struct ExportView {
    std::string hostname;        // dcgm-exporter's `hostname` label; empty: left out, as it does
    std::string driver_version;  // its DCGM_FI_DRIVER_VERSION label; empty: unknown, left out
    std::shared_ptr<const std::vector<MonitoredGpu>> gpus;
    std::shared_ptr<const MonitorTick> tick;  // the last complete tick; null before the first
    std::chrono::steady_clock::time_point tick_done{};
    double tick_duration_s = 0;
    std::uint64_t ticks = 0;                           // samples completed since export started
    std::map<int, std::uint64_t> last_xid;             // GPU index -> last Xid seen since export started
    std::string xid_absent_reason;                     // non-empty: Xids are not watched (no series)
    std::shared_ptr<const CheckReportSummary> report;  // null: no --check-report
    std::string report_problem;
};

// A tick older than this is stale: its GPU series are dropped (a hung NVML call must not pass
// old values off as current). Three missed ticks, plus 5 s for a slow but live driver.
std::chrono::milliseconds stale_after(std::chrono::milliseconds interval);

std::string render_metrics(const ExportView& v, std::chrono::steady_clock::time_point now,
                           std::chrono::milliseconds interval);

}  // namespace gpuvet
