// The statistics a run report's pages (HTML, Markdown) tabulate, with the scale and unit each is
// shown in: one list, so the two pages name the same figures the same way.
#pragma once
#include <string>
#include <vector>

#include "core/run_result.hpp"
#include "core/units.hpp"

namespace gpuvet {

template <class Summary>
struct RunFigure {
    const char* label;  // "power (W)": the unit the scaled value is in
    Stat Summary::*stat;
    double scale;  // the stored unit over the shown one (bytes -> GiB: 2^30)
    int decimals;
};

inline const std::vector<RunFigure<GpuRunSummary>>& run_gpu_figures() {
    using G = GpuRunSummary;
    static const std::vector<RunFigure<G>> v = {{"GPU utilization (%)", &G::utilization_percent, 1, 0},
                                                {"SM activity (%)", &G::sm_activity_percent, 1, 0},
                                                {"tensor activity (%)", &G::tensor_activity_percent, 1, 0},
                                                {"DRAM bandwidth (%)", &G::dram_bandwidth_percent, 1, 0},
                                                {"memory used (GiB)", &G::memory_used_bytes, kGiB, 1},
                                                {"power (W)", &G::power_w, 1, 0},
                                                {"SM clock (MHz)", &G::sm_clock_mhz, 1, 0},
                                                {"temperature (°C)", &G::temperature_c, 1, 0},
                                                {"PCIe rx (GB/s)", &G::pcie_rx_bytes_per_s, 1e9, 2},
                                                {"PCIe tx (GB/s)", &G::pcie_tx_bytes_per_s, 1e9, 2},
                                                {"NVLink rx (GB/s)", &G::nvlink_rx_bytes_per_s, 1e9, 2},
                                                {"NVLink tx (GB/s)", &G::nvlink_tx_bytes_per_s, 1e9, 2}};
    return v;
}

inline const std::vector<RunFigure<HostRunSummary>>& run_host_figures() {
    using H = HostRunSummary;
    static const std::vector<RunFigure<H>> v = {{"job CPU (cores)", &H::tree_cpu_cores, 1, 2},
                                                {"main process CPU (cores)", &H::main_cpu_cores, 1, 2},
                                                {"worker CPU (cores)", &H::workers_cpu_cores, 1, 2},
                                                {"host CPU busy (%)", &H::host_busy_percent, 1, 0},
                                                {"steal (%)", &H::steal_percent, 1, 1},
                                                {"CPU pressure (%)", &H::psi_cpu_percent, 1, 0},
                                                {"I/O pressure (%)", &H::psi_io_percent, 1, 0},
                                                {"disk read (MB/s)", &H::disk_read_bytes_per_s, 1e6, 1},
                                                {"read() returned (MB/s)", &H::rchar_bytes_per_s, 1e6, 1},
                                                {"network rx (MB/s)", &H::net_rx_bytes_per_s, 1e6, 1},
                                                {"host memory used (GiB)", &H::memory_used_bytes, kGiB, 1}};
    return v;
}

// A value of a figure in its shown unit, "—" when not measured.
std::string run_figure_text(double v, double scale, int decimals);

}  // namespace gpuvet
