// The trial run's timeline: one point per tick, host and every GPU, in plain numbers with NaN
// for "not measured" (the reason is kept once per signal in `absent`, not per tick, so a point
// stays small). Bounded: SampleHistory thins the older half at capacity, so a 24-hour run keeps
// the same memory as a 1-hour one; point_spans() (time since the previous kept point) lets the
// summary weight thinned points by the time they stand for.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "core/sample_history.hpp"

namespace gpuvet {

inline constexpr double kUnmeasured = std::numeric_limits<double>::quiet_NaN();
inline bool measured(double v) { return !std::isnan(v); }

// How a tick's figure was obtained (the device backend's FigureSource, named here so the printers
// need nothing of gpu/): the driver's samples over the interval, a counter's difference over it, or
// one read at the tick's instant, which a periodic job can alias with.
enum class TickOrigin : std::uint8_t { kUnmeasured, kPointRead, kIntervalMean, kCounterDifference };

struct HostPoint {
    int processes = 0;                    // live processes of the job's tree
    int workers = 0;                      // descendants of the main process (DataLoader / multiprocessing workers)
    int named_workers = 0;                // of those, recognised by PyTorch's worker names
    double tree_cpu_cores = kUnmeasured;  // CPU time of the tree per second of wall time
    double main_cpu_cores = kUnmeasured;
    double workers_cpu_cores = kUnmeasured;
    double busiest_worker_cpu_cores = kUnmeasured;
    double runnable = kUnmeasured;  // tree processes in state R (running or waiting for a CPU)
    double blocked = kUnmeasured;   // tree processes in state D (uninterruptible: mostly I/O)
    double workers_runnable_fraction = kUnmeasured;
    double rq_wait_fraction = kUnmeasured;  // schedstat: run-queue wait / (run + wait) of the tree
    double host_busy_percent = kUnmeasured, steal_percent = kUnmeasured;
    double psi_cpu_percent = kUnmeasured, psi_io_percent = kUnmeasured, psi_memory_percent = kUnmeasured;
    double disk_read_bytes_per_s = kUnmeasured, rchar_bytes_per_s = kUnmeasured;
    double disk_write_bytes_per_s = kUnmeasured;
    double net_rx_bytes_per_s = kUnmeasured, net_tx_bytes_per_s = kUnmeasured;
    double memory_used_bytes = kUnmeasured, swap_used_bytes = kUnmeasured;
};

struct GpuPoint {
    bool lost = false;
    double utilization_percent = kUnmeasured, memory_used_bytes = kUnmeasured;
    double power_w = kUnmeasured, power_limit_w = kUnmeasured;
    double sm_clock_mhz = kUnmeasured, temperature_c = kUnmeasured;
    bool reasons_known = false;
    std::uint64_t clock_event_reasons = 0;
    double pcie_rx_bytes_per_s = kUnmeasured, pcie_tx_bytes_per_s = kUnmeasured;
    double pcie_gen = kUnmeasured, pcie_width = kUnmeasured;
    double pcie_replay_count = kUnmeasured;  // cumulative since the driver loaded
    double nvlink_rx_bytes_per_s = kUnmeasured, nvlink_tx_bytes_per_s = kUnmeasured;
    double sm_activity_percent = kUnmeasured, sm_occupancy_percent = kUnmeasured;
    double tensor_activity_percent = kUnmeasured, dram_bandwidth_percent = kUnmeasured;
    std::optional<int> job_processes;  // NVML processes of this GPU that belong to the job's tree
    std::optional<int> gpu_processes;  // every process NVML lists on this GPU, the job's or not
    double job_memory_bytes = kUnmeasured;
    // The driver samples averaged into the tick's utilization (0: none new).
    std::optional<int> utilization_samples;
    // Share of the interval the clocks were held down (violation counters), percent.
    double throttled_power_percent = kUnmeasured, throttled_thermal_percent = kUnmeasured;
    // How utilization, power and the SM clock were obtained; the throttle's origin is a counter
    // difference where the violation counters gave the shares, else a point read (reason bits).
    TickOrigin utilization_origin = TickOrigin::kUnmeasured, power_origin = TickOrigin::kUnmeasured,
               sm_clock_origin = TickOrigin::kUnmeasured, throttle_origin = TickOrigin::kUnmeasured;
};

struct RunPoint {
    double t_s = 0;  // seconds since the job started
    // When the GPUs were read, after the host (unmeasured without GPUs): their interval figures end
    // there, so the time between two reads is what a tick's GPU figures stand for.
    double gpu_t_s = kUnmeasured;
    HostPoint host;
    std::vector<GpuPoint> gpus;  // in the order of RunTimeline::gpu_indexes
};

class RunTimeline {
public:
    // 3600 points: a 1 Hz hour at full rate, about 1.5 KB a point with 8 GPUs.
    static constexpr std::size_t kDefaultCapacity = 3600;
    explicit RunTimeline(std::size_t capacity = kDefaultCapacity) : points_(capacity) {}

    void push(RunPoint p) { points_.push(std::move(p)); }
    const std::vector<RunPoint>& points() const { return points_.items(); }
    std::size_t capacity() const { return points_.capacity(); }
    std::size_t thinned() const { return points_.thinned(); }
    // Bytes the points hold now (the vectors' capacity, GPU vectors included).
    std::size_t memory_bytes() const {
        std::size_t b = points_.items().capacity() * sizeof(RunPoint);
        for (const RunPoint& p : points_.items()) b += p.gpus.capacity() * sizeof(GpuPoint);
        return b;
    }
    // The most a full timeline of `gpus` GPUs may hold: the budget the tests assert.
    std::size_t memory_budget_bytes(std::size_t gpus) const {
        return capacity() * (sizeof(RunPoint) + gpus * sizeof(GpuPoint));
    }

    std::vector<int> gpu_indexes;
    // Why a signal was not measured, once per signal ("gpu0.sm_activity_percent" -> reason).
    std::map<std::string, std::string> absent;
    void note_absent(const std::string& key, const std::string& why) {
        if (!why.empty()) absent.emplace(key, why);
    }

private:
    SampleHistory<RunPoint> points_;
};

// Each point's span: the time since the previous kept point (the first keeps its own interval).
// A tick's figures cover the time since the tick before (interval means, counter differences, CPU
// time over the interval), so a late tick, whose interval is long, weighs its whole interval. The
// GPUs' read times measure it where both points have them: the host's sampling before them takes
// a varying time, and the GPU figures are the ones a periodic job makes uneven.
inline std::vector<double> point_spans(const std::vector<RunPoint>& pts, double interval_s) {
    std::vector<double> w(pts.size(), interval_s);
    for (std::size_t i = 1; i < pts.size(); ++i) {
        const RunPoint &a = pts[i - 1], &b = pts[i];
        bool gpu = measured(a.gpu_t_s) && measured(b.gpu_t_s);
        w[i] = std::max(0.0, gpu ? b.gpu_t_s - a.gpu_t_s : b.t_s - a.t_s);
    }
    return w;
}

}  // namespace gpuvet
