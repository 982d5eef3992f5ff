// Per-core throughput: the same small integer + floating-point loop pinned to each allowed CPU in
// turn. A core far below the others is a throttled, oversubscribed or noisy-neighbour core.
#pragma once
#include <atomic>
#include <optional>
#include <string>
#include <vector>

namespace gpuvet {

struct CoreSpeed {
    int cpu = 0;
    double ops_per_s = 0;
};

// Runs the loop on each CPU for `slice_s`; a CPU that cannot be pinned is left out. Stops early
// (returning what was measured) when `stop` is set.
std::vector<CoreSpeed> measure_core_speeds(const std::vector<int>& cpus, double slice_s, const std::atomic<bool>* stop);

struct SpeedSpread {
    double min = 0, median = 0, max = 0;
    std::vector<CoreSpeed> stragglers;  // more than `straggler_below` below the median
};

// Cores more than 15% below the median are named: beyond run-to-run noise of a pinned loop
// (a few %), and in the range where frequency throttling or a shared core shows.
inline constexpr double kStragglerBelow = 0.15;
std::optional<SpeedSpread> spread_of(const std::vector<CoreSpeed>& v, double straggler_below = kStragglerBelow);

}  // namespace gpuvet
