// The run's signals as data: one row per field of a timeline point (GpuPoint, HostPoint) and one
// per figure of a run summary (GpuRunSummary, HostRunSummary). The rows drive the record file
// (monitor/run_record), the window statistics (monitor/run_summary), the report's JSON and charted
// series (report/run_json) and the reader of a saved report (report/run_report_reader), so a new
// signal is a field of its point, one row here and the reading that produces it
// (monitor/run_session, monitor/run_host). tests/unit/core/test_run_fields.cpp holds every field of the
// point types to a row and every row to a round trip through the record, the JSON and the reader.
#pragma once
#include <array>
#include <cstdint>
#include <optional>
#include <variant>

#include "core/run_result.hpp"

namespace gpuvet {

// A field of a point: a number (NaN: not measured), a count (always known, or empty: unknown), a
// flag, a bit set or how a figure was obtained.
template <class P>
using PointMember =
    std::variant<double P::*, int P::*, std::optional<int> P::*, bool P::*, std::uint64_t P::*, TickOrigin P::*>;

template <class P, class S>
struct PointSignal {
    const char* key;  // the record's key, and the summary's and the series' unless they name their own
    PointMember<P> point;
    // The record header's legend; "" recorded without a legend entry, nullptr not recorded (a
    // figure the rules use within the run, kept out of the file's fixed layout).
    const char* record_unit = nullptr;
    Stat S::*window = nullptr;          // time-weighted statistics over the steady window (numbers only)
    const char* series_unit = nullptr;  // charted in the report with this unit; nullptr not charted
    const char* series_key = nullptr;   // the chart's key where it differs from `key`
    bool P::*known = nullptr;           // the field counts only where this flag is set (a bit set)

    const char* chart_key() const { return series_key ? series_key : key; }
};

using GpuSignal = PointSignal<GpuPoint, GpuRunSummary>;
using HostSignal = PointSignal<HostPoint, HostRunSummary>;

// A figure of a summary computed by a rule of its own in run_summary (a peak over the whole run, a
// counter's difference, a share): written to the report and read back under `key`.
template <class S>
struct SummaryFigure {
    const char* key;
    std::variant<double S::*, int S::*, std::optional<int> S::*, bool S::*> member;
};

using GpuFigure = SummaryFigure<GpuRunSummary>;
using HostFigure = SummaryFigure<HostRunSummary>;

inline constexpr const char* kOriginUnit =
    "how the figure was obtained: interval mean, counter difference or point read";

// In the record's order (its legend and rows follow this table).
inline const std::array<GpuSignal, 29> kGpuSignals = {{
    {.key = "lost", .point = &GpuPoint::lost, .record_unit = ""},
    {.key = "utilization_percent",
     .point = &GpuPoint::utilization_percent,
     .record_unit = "%",
     .window = &GpuRunSummary::utilization_percent,
     .series_unit = "%"},
    {.key = "memory_used_bytes",
     .point = &GpuPoint::memory_used_bytes,
     .record_unit = "B",
     .window = &GpuRunSummary::memory_used_bytes,
     .series_unit = "B"},
    {.key = "power_w",
     .point = &GpuPoint::power_w,
     .record_unit = "W",
     .window = &GpuRunSummary::power_w,
     .series_unit = "W"},
    // Summarized as its median (a figure below).
    {.key = "power_limit_w", .point = &GpuPoint::power_limit_w, .record_unit = "W", .series_unit = "W"},
    {.key = "sm_clock_mhz",
     .point = &GpuPoint::sm_clock_mhz,
     .record_unit = "MHz",
     .window = &GpuRunSummary::sm_clock_mhz,
     .series_unit = "MHz"},
    {.key = "temperature_c",
     .point = &GpuPoint::temperature_c,
     .record_unit = "°C",
     .window = &GpuRunSummary::temperature_c,
     .series_unit = "C"},
    {.key = "clock_event_reasons",
     .point = &GpuPoint::clock_event_reasons,
     .record_unit = "NVML bitmask",
     .known = &GpuPoint::reasons_known},
    {.key = "pcie_rx_bytes_per_s",
     .point = &GpuPoint::pcie_rx_bytes_per_s,
     .record_unit = "B/s",
     .window = &GpuRunSummary::pcie_rx_bytes_per_s,
     .series_unit = "B/s"},
    {.key = "pcie_tx_bytes_per_s",
     .point = &GpuPoint::pcie_tx_bytes_per_s,
     .record_unit = "B/s",
     .window = &GpuRunSummary::pcie_tx_bytes_per_s,
     .series_unit = "B/s"},
    // Summarized as the replays during the run (pcie_replays below).
    {.key = "pcie_replay_count", .point = &GpuPoint::pcie_replay_count, .record_unit = "count since the driver loaded"},
    {.key = "nvlink_rx_bytes_per_s",
     .point = &GpuPoint::nvlink_rx_bytes_per_s,
     .record_unit = "B/s",
     .window = &GpuRunSummary::nvlink_rx_bytes_per_s,
     .series_unit = "B/s"},
    {.key = "nvlink_tx_bytes_per_s",
     .point = &GpuPoint::nvlink_tx_bytes_per_s,
     .record_unit = "B/s",
     .window = &GpuRunSummary::nvlink_tx_bytes_per_s,
     .series_unit = "B/s"},
    {.key = "sm_activity_percent",
     .point = &GpuPoint::sm_activity_percent,
     .record_unit = "% (GPM)",
     .window = &GpuRunSummary::sm_activity_percent,
     .series_unit = "%"},
    {.key = "sm_occupancy_percent",
     .point = &GpuPoint::sm_occupancy_percent,
     .record_unit = "% (GPM)",
     .window = &GpuRunSummary::sm_occupancy_percent},
    {.key = "tensor_activity_percent",
     .point = &GpuPoint::tensor_activity_percent,
     .record_unit = "% (GPM)",
     .window = &GpuRunSummary::tensor_activity_percent,
     .series_unit = "%"},
    {.key = "dram_bandwidth_percent",
     .point = &GpuPoint::dram_bandwidth_percent,
     .record_unit = "% (GPM)",
     .window = &GpuRunSummary::dram_bandwidth_percent,
     .series_unit = "%"},
    {.key = "job_processes", .point = &GpuPoint::job_processes, .record_unit = "count"},
    // Summarized with the reason bits into the throttled fractions below.
    {.key = "throttled_power_percent",
     .point = &GpuPoint::throttled_power_percent,
     .record_unit = "% of the tick (violation counter)"},
    {.key = "throttled_thermal_percent",
     .point = &GpuPoint::throttled_thermal_percent,
     .record_unit = "% of the tick (violation counter)"},
    {.key = "utilization_origin", .point = &GpuPoint::utilization_origin, .record_unit = kOriginUnit},
    {.key = "power_origin", .point = &GpuPoint::power_origin, .record_unit = kOriginUnit},
    {.key = "sm_clock_origin", .point = &GpuPoint::sm_clock_origin, .record_unit = kOriginUnit},
    {.key = "throttle_origin", .point = &GpuPoint::throttle_origin, .record_unit = kOriginUnit},
    // Read by the rules within the run only.
    {.key = "pcie_gen", .point = &GpuPoint::pcie_gen},
    {.key = "pcie_width", .point = &GpuPoint::pcie_width},
    {.key = "gpu_processes", .point = &GpuPoint::gpu_processes},
    {.key = "job_memory_bytes", .point = &GpuPoint::job_memory_bytes},
    {.key = "utilization_samples", .point = &GpuPoint::utilization_samples},
}};

inline const std::array<HostSignal, 23> kHostSignals = {{
    {.key = "tree_cpu_cores",
     .point = &HostPoint::tree_cpu_cores,
     .record_unit = "CPU cores (CPU s per s) of the job's process tree",
     .window = &HostRunSummary::tree_cpu_cores,
     .series_unit = "cores",
     .series_key = "host_tree_cpu_cores"},
    {.key = "main_cpu_cores",
     .point = &HostPoint::main_cpu_cores,
     .record_unit = "cores",
     .window = &HostRunSummary::main_cpu_cores,
     .series_unit = "cores",
     .series_key = "host_main_cpu_cores"},
    {.key = "workers_cpu_cores",
     .point = &HostPoint::workers_cpu_cores,
     .record_unit = "cores",
     .window = &HostRunSummary::workers_cpu_cores,
     .series_unit = "cores",
     .series_key = "host_workers_cpu_cores"},
    {.key = "processes", .point = &HostPoint::processes, .record_unit = "count"},
    {.key = "workers", .point = &HostPoint::workers, .record_unit = "count"},
    {.key = "runnable",
     .point = &HostPoint::runnable,
     .record_unit = "processes in state R",
     .window = &HostRunSummary::runnable},
    {.key = "blocked",
     .point = &HostPoint::blocked,
     .record_unit = "processes in state D",
     .window = &HostRunSummary::blocked},
    {.key = "rq_wait_fraction",
     .point = &HostPoint::rq_wait_fraction,
     .record_unit = "0-1 of runnable time waiting for a CPU",
     .window = &HostRunSummary::rq_wait_fraction},
    {.key = "host_busy_percent",
     .point = &HostPoint::host_busy_percent,
     .record_unit = "%",
     .window = &HostRunSummary::host_busy_percent,
     .series_unit = "%"},
    {.key = "steal_percent",
     .point = &HostPoint::steal_percent,
     .record_unit = "% of demanded CPU time",
     .window = &HostRunSummary::steal_percent},
    {.key = "psi_cpu_percent",
     .point = &HostPoint::psi_cpu_percent,
     .record_unit = "% of time some task stalled (PSI some)",
     .window = &HostRunSummary::psi_cpu_percent,
     .series_unit = "%",
     .series_key = "host_psi_cpu_percent"},
    {.key = "psi_io_percent",
     .point = &HostPoint::psi_io_percent,
     .record_unit = "%",
     .window = &HostRunSummary::psi_io_percent,
     .series_unit = "%",
     .series_key = "host_psi_io_percent"},
    {.key = "psi_memory_percent",
     .point = &HostPoint::psi_memory_percent,
     .record_unit = "%",
     .window = &HostRunSummary::psi_memory_percent},
    {.key = "disk_read_bytes_per_s",
     .point = &HostPoint::disk_read_bytes_per_s,
     .record_unit = "B/s from storage (read_bytes)",
     .window = &HostRunSummary::disk_read_bytes_per_s,
     .series_unit = "B/s",
     .series_key = "host_disk_read_bytes_per_s"},
    {.key = "rchar_bytes_per_s",
     .point = &HostPoint::rchar_bytes_per_s,
     .record_unit = "B/s returned by read calls (rchar)",
     .window = &HostRunSummary::rchar_bytes_per_s,
     .series_unit = "B/s",
     .series_key = "host_rchar_bytes_per_s"},
    {.key = "disk_write_bytes_per_s",
     .point = &HostPoint::disk_write_bytes_per_s,
     .record_unit = "B/s",
     .window = &HostRunSummary::disk_write_bytes_per_s},
    {.key = "net_rx_bytes_per_s",
     .point = &HostPoint::net_rx_bytes_per_s,
     .record_unit = "B/s",
     .window = &HostRunSummary::net_rx_bytes_per_s,
     .series_unit = "B/s",
     .series_key = "host_net_rx_bytes_per_s"},
    {.key = "net_tx_bytes_per_s",
     .point = &HostPoint::net_tx_bytes_per_s,
     .record_unit = "B/s",
     .window = &HostRunSummary::net_tx_bytes_per_s},
    {.key = "memory_used_bytes",
     .point = &HostPoint::memory_used_bytes,
     .record_unit = "B",
     .window = &HostRunSummary::memory_used_bytes,
     .series_unit = "B",
     .series_key = "host_memory_used_bytes"},
    {.key = "swap_used_bytes",
     .point = &HostPoint::swap_used_bytes,
     .record_unit = "B",
     .window = &HostRunSummary::swap_used_bytes},
    // Read by the rules within the run only.
    {.key = "named_workers", .point = &HostPoint::named_workers},
    {.key = "workers_runnable_fraction", .point = &HostPoint::workers_runnable_fraction},
    {.key = "busiest_worker_cpu_cores", .point = &HostPoint::busiest_worker_cpu_cores},
}};

// The GPU summary's figures besides the window statistics and the GPU's fixed facts, in the
// report's order.
inline const std::array<GpuFigure, 15> kGpuFigures = {{
    {"lost", &GpuRunSummary::lost},
    {"lost_at_s", &GpuRunSummary::lost_at_s},
    {"utilization_peak_percent", &GpuRunSummary::utilization_peak_percent},
    {"power_limit_w", &GpuRunSummary::power_limit_w},
    {"pcie_replays", &GpuRunSummary::pcie_replays},
    {"power_cap_fraction", &GpuRunSummary::power_cap_fraction},
    {"thermal_fraction", &GpuRunSummary::thermal_fraction},
    {"power_brake_fraction", &GpuRunSummary::power_brake_fraction},
    {"utilization_interval_share", &GpuRunSummary::utilization_interval_share},
    {"utilization_samples_per_tick", &GpuRunSummary::utilization_samples_per_tick},
    {"sm_clock_interval_share", &GpuRunSummary::sm_clock_interval_share},
    {"power_counter_share", &GpuRunSummary::power_counter_share},
    {"throttle_counter_share", &GpuRunSummary::throttle_counter_share},
    {"job_processes_max", &GpuRunSummary::job_processes_max},
    {"gpu_processes_max", &GpuRunSummary::gpu_processes_max},
}};

inline const std::array<HostFigure, 4> kHostFigures = {{
    {"cpus", &HostRunSummary::cpus},
    {"processes_max", &HostRunSummary::processes_max},
    {"workers_max", &HostRunSummary::workers_max},
    {"named_workers_max", &HostRunSummary::named_workers_max},
}};

}  // namespace gpuvet
