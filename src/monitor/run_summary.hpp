// The summary of a trial run: the steady-state window and time-weighted statistics over it.
//
// Window rule (stated in every report): with GPU work, from the first to the last tick at which
// any GPU was busy (Nsight likewise leaves out the time before the first and after the last GPU
// operation); without, the whole run. Then drop the warm-up, min(10 % of that span, 60 s), and the
// tail, min(5 %, 10 s) (data loading, compilation and allocation start-up; teardown).
#pragma once
#include <optional>
#include <functional>
#include <vector>

#include "core/run_result.hpp"

namespace gpuvet {

inline constexpr double kWarmupFraction = 0.10, kWarmupMax_s = 60;
inline constexpr double kTailFraction = 0.05, kTailMax_s = 10;

struct SteadyWindow {
    double start_s = 0, end_s = 0;
    bool gpu_bounded = false;  // bounded by GPU activity (else the whole run)
    std::string rule;          // the rule in words, with the numbers used
};
// `wall_s` (when given): the run's wall time; a window never ends after it (the last tick counts
// for a whole interval, which a run that ended early did not last).
SteadyWindow steady_window(const std::vector<RunPoint>& pts, double interval_s,
                           std::optional<double> wall_s = std::nullopt);

// Weighted mean and nearest-rank percentiles of the measured values (NaN ones skipped).
Stat weighted_stat(const std::vector<double>& values, const std::vector<double>& weights);

// The points of the window with their weights (time each stands for).
struct WindowView {
    std::vector<const RunPoint*> pts;
    std::vector<double> w;
    double total_w() const;
    Stat stat(const std::function<double(const RunPoint&)>& f) const;
    // Weighted share of points where `cond` holds, among those where `among` holds.
    double share(const std::function<bool(const RunPoint&)>& cond,
                 const std::function<bool(const RunPoint&)>& among = nullptr) const;
    // The same with each point also weighted by `weight` (0..1), e.g. by how idle the GPU was.
    double weighted_share(const std::function<bool(const RunPoint&)>& cond,
                          const std::function<double(const RunPoint&)>& weight) const;
};
WindowView window_view(const std::vector<RunPoint>& pts, double interval_s, const SteadyWindow& win);

GpuRunSummary summarize_gpu(const std::vector<RunPoint>& all, const WindowView& v, std::size_t k,
                            const RunGpuFacts& facts);
HostRunSummary summarize_host(const std::vector<RunPoint>& all, const WindowView& v, int cpus);

}  // namespace gpuvet
