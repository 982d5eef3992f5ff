// Constructed run timelines for the tests of the run's summary, rules and report: n ticks of
// healthy-looking GPUs that a test then fills with its pattern, and the facts of such GPUs.
#pragma once
#include <functional>
#include <vector>

#include "core/run_result.hpp"
#include "monitor/run_assembly.hpp"
#include "monitor/run_session.hpp"
#include "monitor/run_summary.hpp"

namespace gpuvet::test {

inline constexpr double kInterval = 1.0;

// n ticks of one GPU (or `gpus`), each filled by `fill`.
inline RunTimeline timeline(int n, int gpus, const std::function<void(int, RunPoint&)>& fill) {
    RunTimeline tl(100000);
    for (int g = 0; g < gpus; ++g) tl.gpu_indexes.push_back(g);
    for (int i = 0; i < n; ++i) {
        RunPoint p;
        p.t_s = i * kInterval;
        p.gpus.resize(static_cast<std::size_t>(gpus));
        for (GpuPoint& g : p.gpus) {
            g.power_limit_w = 700;
            g.reasons_known = true;
            g.sm_clock_mhz = 1980;
            g.memory_used_bytes = 10e9;
            g.pcie_rx_bytes_per_s = 0;
            g.pcie_tx_bytes_per_s = 0;
            g.pcie_gen = 5;
            g.pcie_width = 16;
        }
        p.host.host_busy_percent = 20;
        p.host.tree_cpu_cores = 1;
        fill(i, p);
        tl.push(p);
    }
    return tl;
}

inline std::vector<RunGpuFacts> facts(int gpus, int nvlinks = 18) {
    std::vector<RunGpuFacts> v;
    for (int g = 0; g < gpus; ++g) {
        RunGpuFacts f;
        f.index = g;
        f.nvlink_active = nvlinks;
        f.pcie_gen_max = 5;
        f.pcie_width_max = 16;
        f.sm_clock_max_mhz = 1980;
        f.power_default_limit_w = 700;
        f.memory_total_bytes = 80e9;
        f.temperature_slowdown_c = 87;
        v.push_back(f);
    }
    return v;
}

inline RunResult judge(const RunTimeline& tl, int gpus, int nvlinks = 18, int cpus = 64) {
    return summarize_run(tl, facts(gpus, nvlinks), kInterval, cpus, gpus > 0);
}

}  // namespace gpuvet::test
