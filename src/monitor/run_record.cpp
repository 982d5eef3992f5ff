#include "monitor/run_record.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>

#include "core/atomic_file.hpp"
#include "core/error.hpp"

namespace gpuvet {

namespace {

using Json = nlohmann::ordered_json;

Json value(double v) { return measured(v) && std::isfinite(v) ? Json(v) : Json(nullptr); }

constexpr const char* kOriginUnit = "how the figure was obtained: interval mean, counter difference or point read";

// How a figure was obtained, in the record's words; null when it was not measured.
Json origin(TickOrigin o) {
    switch (o) {
        case TickOrigin::kIntervalMean: return "interval mean";
        case TickOrigin::kCounterDifference: return "counter difference";
        case TickOrigin::kPointRead: return "point read";
        case TickOrigin::kUnmeasured: break;
    }
    return nullptr;
}

}  // namespace

RunRecorder::RunRecorder(const std::string& path) : path_(path) {
    int fd = open_output_stream(path, "--record");  // close-on-exec: the job never inherits it
    f_ = ::fdopen(fd, "w");
    if (!f_) {
        ::close(fd);
        throw input_error("--record " + path + ": cannot write there (" + std::strerror(errno) + ")",
                          "choose a file in a folder you can write to");
    }
}

RunRecorder::~RunRecorder() {
    if (f_) std::fclose(f_);
}

void RunRecorder::line(const std::string& text) {
    if (!f_ || !failure_.empty()) return;
    if (std::fputs(text.c_str(), f_) < 0 || std::fputc('\n', f_) < 0 || std::fflush(f_) != 0)
        failure_ = std::string("writing failed: ") + std::strerror(errno);
}

void RunRecorder::header(const std::vector<int>& gpus, double interval_s, const std::vector<std::string>& command) {
    Json h;
    h["record"] = "gpuvet-run-timeline";
    h["format_version"] = kRecordFormatVersion;
    h["interval_s"] = interval_s;
    h["command"] = command;
    h["gpus"] = gpus;
    h["units"] = {{"t_s", "s since the command started"},
                  {"host.tree_cpu_cores", "CPU cores (CPU s per s) of the job's process tree"},
                  {"host.main_cpu_cores", "cores"},
                  {"host.workers_cpu_cores", "cores"},
                  {"host.processes", "count"},
                  {"host.workers", "count"},
                  {"host.runnable", "processes in state R"},
                  {"host.blocked", "processes in state D"},
                  {"host.rq_wait_fraction", "0-1 of runnable time waiting for a CPU"},
                  {"host.host_busy_percent", "%"},
                  {"host.steal_percent", "% of demanded CPU time"},
                  {"host.psi_cpu_percent", "% of time some task stalled (PSI some)"},
                  {"host.psi_io_percent", "%"},
                  {"host.psi_memory_percent", "%"},
                  {"host.disk_read_bytes_per_s", "B/s from storage (read_bytes)"},
                  {"host.rchar_bytes_per_s", "B/s returned by read calls (rchar)"},
                  {"host.disk_write_bytes_per_s", "B/s"},
                  {"host.net_rx_bytes_per_s", "B/s"},
                  {"host.net_tx_bytes_per_s", "B/s"},
                  {"host.memory_used_bytes", "B"},
                  {"host.swap_used_bytes", "B"},
                  {"gpus[].utilization_percent", "%"},
                  {"gpus[].memory_used_bytes", "B"},
                  {"gpus[].power_w", "W"},
                  {"gpus[].power_limit_w", "W"},
                  {"gpus[].sm_clock_mhz", "MHz"},
                  {"gpus[].temperature_c", "°C"},
                  {"gpus[].clock_event_reasons", "NVML bitmask"},
                  {"gpus[].pcie_rx_bytes_per_s", "B/s"},
                  {"gpus[].pcie_tx_bytes_per_s", "B/s"},
                  {"gpus[].pcie_replay_count", "count since the driver loaded"},
                  {"gpus[].nvlink_rx_bytes_per_s", "B/s"},
                  {"gpus[].nvlink_tx_bytes_per_s", "B/s"},
                  {"gpus[].sm_activity_percent", "% (GPM)"},
                  {"gpus[].sm_occupancy_percent", "% (GPM)"},
                  {"gpus[].tensor_activity_percent", "% (GPM)"},
                  {"gpus[].dram_bandwidth_percent", "% (GPM)"},
                  {"gpus[].job_processes", "count"},
                  {"gpus[].throttled_power_percent", "% of the tick (violation counter)"},
                  {"gpus[].throttled_thermal_percent", "% of the tick (violation counter)"},
                  {"gpus[].utilization_origin", kOriginUnit},
                  {"gpus[].power_origin", kOriginUnit},
                  {"gpus[].sm_clock_origin", kOriginUnit},
                  {"gpus[].throttle_origin", kOriginUnit}};
    line(h.dump());
    // The header is written before the job starts: a target that takes nothing (/dev/full, a full
    // disk) refuses the run instead of losing its record.
    if (!failure_.empty())
        throw input_error("--record " + path_ + ": " + failure_, "choose a file on a disk with free space");
}

void RunRecorder::write(const RunPoint& p) {
    const HostPoint& h = p.host;
    Json j;
    j["t_s"] = p.t_s;
    j["host"] = {{"tree_cpu_cores", value(h.tree_cpu_cores)},
                 {"main_cpu_cores", value(h.main_cpu_cores)},
                 {"workers_cpu_cores", value(h.workers_cpu_cores)},
                 {"processes", h.processes},
                 {"workers", h.workers},
                 {"runnable", value(h.runnable)},
                 {"blocked", value(h.blocked)},
                 {"rq_wait_fraction", value(h.rq_wait_fraction)},
                 {"host_busy_percent", value(h.host_busy_percent)},
                 {"steal_percent", value(h.steal_percent)},
                 {"psi_cpu_percent", value(h.psi_cpu_percent)},
                 {"psi_io_percent", value(h.psi_io_percent)},
                 {"psi_memory_percent", value(h.psi_memory_percent)},
                 {"disk_read_bytes_per_s", value(h.disk_read_bytes_per_s)},
                 {"rchar_bytes_per_s", value(h.rchar_bytes_per_s)},
                 {"disk_write_bytes_per_s", value(h.disk_write_bytes_per_s)},
                 {"net_rx_bytes_per_s", value(h.net_rx_bytes_per_s)},
                 {"net_tx_bytes_per_s", value(h.net_tx_bytes_per_s)},
                 {"memory_used_bytes", value(h.memory_used_bytes)},
                 {"swap_used_bytes", value(h.swap_used_bytes)}};
    j["gpus"] = Json::array();
    for (const GpuPoint& g : p.gpus)
        j["gpus"].push_back({{"lost", g.lost},
                             {"utilization_percent", value(g.utilization_percent)},
                             {"memory_used_bytes", value(g.memory_used_bytes)},
                             {"power_w", value(g.power_w)},
                             {"power_limit_w", value(g.power_limit_w)},
                             {"sm_clock_mhz", value(g.sm_clock_mhz)},
                             {"temperature_c", value(g.temperature_c)},
                             {"clock_event_reasons", g.reasons_known ? Json(g.clock_event_reasons) : Json(nullptr)},
                             {"pcie_rx_bytes_per_s", value(g.pcie_rx_bytes_per_s)},
                             {"pcie_tx_bytes_per_s", value(g.pcie_tx_bytes_per_s)},
                             {"pcie_replay_count", value(g.pcie_replay_count)},
                             {"nvlink_rx_bytes_per_s", value(g.nvlink_rx_bytes_per_s)},
                             {"nvlink_tx_bytes_per_s", value(g.nvlink_tx_bytes_per_s)},
                             {"sm_activity_percent", value(g.sm_activity_percent)},
                             {"sm_occupancy_percent", value(g.sm_occupancy_percent)},
                             {"tensor_activity_percent", value(g.tensor_activity_percent)},
                             {"dram_bandwidth_percent", value(g.dram_bandwidth_percent)},
                             {"job_processes", g.job_processes >= 0 ? Json(g.job_processes) : Json(nullptr)},
                             {"throttled_power_percent", value(g.throttled_power_percent)},
                             {"throttled_thermal_percent", value(g.throttled_thermal_percent)},
                             {"utilization_origin", origin(g.utilization_origin)},
                             {"power_origin", origin(g.power_origin)},
                             {"sm_clock_origin", origin(g.sm_clock_origin)},
                             {"throttle_origin", origin(g.throttle_origin)}});
    line(j.dump());
}

}  // namespace gpuvet
