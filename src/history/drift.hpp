// Drift and swaps, judged against each GPU's own history. Pure: the caller hands in the figures
// of this run and what the history holds; the result is a CheckResult with one finding per
// statement, each naming the dates and the figures.
//
// Thresholds (docs/history.md):
// - a figure more than max(kDriftMargin, 3 robust standard deviations of the GPU's own earlier
//   values) below the median of at least kMinEarlierRuns earlier runs is a WARN, even above the
//   spec floor. The 5 % is gpuvet's own choice: above the run-to-run spread of a healthy GPU's
//   repeated figures, below the 8-10 % a failing fan or a slower replacement card costs; a GPU
//   whose own figures scatter more gets its own wider margin, so noise does not alarm;
// - a different GPU (UUID or serial) in a slot that held another in the box's previous run;
// - a lifetime error counter (uncorrectable ECC, remapped rows, retired pages) above its value
//   in the GPU's previous run: gpu.health judges the totals against Azure's and NVIDIA's floors
//   (docs/checks.md); the history adds that they grew since the last run, which gpuvet counts as
//   a WARN at any size (its own choice: a growing count is a card getting worse, whatever the total);
// - a burn's peak temperature that rose in each of the last kRisingRuns runs, by at least
//   kRisingMinC in all: gpuvet's own choice, more than the few degrees that a room's or a rack's
//   inlet temperature moves between runs;
// - a hostname the history knew with other GPUs (an informational finding: the box is new).
// Earlier values are those of comparable runs only (comparable.hpp): the same command at the same
// tier, a burn's figures from burns of about the same length.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "core/result.hpp"
#include "history/comparable.hpp"

namespace gpuvet::history {

inline constexpr double kDriftMargin = 0.05;
inline constexpr int kMinEarlierRuns = 3;
inline constexpr int kRisingRuns = 3;  // this run and the two before it
inline constexpr double kRisingMinC = 5.0;
inline constexpr const char* kThermalMetric = "gpu.burn.temperature_peak_c";

struct Dated {
    std::string at;  // the run's start, RFC 3339
    double value = 0;
};

struct FigureHistory {
    std::string metric, unit;
    double now = 0;
    bool higher_is_better = false;  // it has a floor or a spec and no ceiling
    std::vector<Dated> earlier;     // this GPU's earlier values, oldest first
};

struct GpuHistory {
    int index = 0;
    std::string label;  // "GPU 3 (serial 1654922000123)"
    std::vector<FigureHistory> figures;
};

struct SlotChange {
    std::string slot;
    int index = 0;
    std::string before, after;  // GPU keys (serial when known)
    std::string before_at;      // when the previous GPU was last seen there
};

// A hostname that belonged to a box with other GPUs: this run is a new box under an old name.
struct HostnameReuse {
    std::string hostname, box;  // the box that had it
    std::string until;          // that box's last run under the name
};

struct DriftInput {
    std::string now_at;
    std::vector<GpuHistory> gpus;
    std::vector<SlotChange> swaps;
    std::optional<HostnameReuse> hostname_reused;
    bool any_history = false;  // the box or a GPU has an earlier run
};

// The robust spread of `values` as a fraction of their median: 1.4826 x MAD / median.
double relative_spread(const std::vector<double>& values);
double median_of(std::vector<double> values);
// The margin a figure may fall below its median before it is drift: kDriftMargin or 3 x spread.
double drift_margin(const std::vector<double>& earlier);

CheckResult judge_drift(const DriftInput& in);

}  // namespace gpuvet::history
