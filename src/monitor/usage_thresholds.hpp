// Thresholds that both the live hints (hints.hpp) and the trial run's rules (run_rules.hpp) judge
// a GPU's use by: one number each, so the monitor and `run` never disagree on the same figures.
#pragma once

namespace gpuvet {

// Busy (time-based utilization) at or above this with SM activity below kSmIneffectivePercent:
// small kernels or launch overhead (the monitor's hint, rule C3) [G].
inline constexpr double kLaunchBoundBusyPercent = 80;
// SM activity below this is likely ineffective use of the GPU [N: DCGM profiling guide, SM
// activity < 0.5].
inline constexpr double kSmIneffectivePercent = 50;
// GPU memory used at or above this share of the total: nearly full (the monitor's hint, rule E6)
// [P: the TensorBoard profiler plugin, 90 %].
inline constexpr double kMemoryFullFraction = 0.90;

}  // namespace gpuvet
