// `history diff`: one run of a box against an earlier one (its previous, or its first): GPUs
// added, removed or replaced per slot, driver and VBIOS changes, and every figure that moved
// beyond its run-to-run noise, with the direction and the size. Pure over two snapshots.
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "history/queries.hpp"

namespace gpuvet::history {

struct FigureChange {
    std::string gpu;  // "GPU 3" or "box"
    std::string metric, unit;
    double before = 0, after = 0;
    double change_percent = 0;  // (after - before) / before; 0 when before is 0
    double noise_percent = 0;   // the margin it had to pass
    bool worse = false;         // a figure with a floor went down, one with a ceiling or a counter went up
};

struct RunDiff {
    RunRow base, now;
    std::vector<std::string> hardware;  // GPUs added/removed/replaced, GPU count, driver, CUDA, VBIOS, InfoROM
    std::vector<FigureChange> figures;
    std::size_t compared = 0;  // figures present in both runs
};

// `history_of(gpu key, metric)`: the GPU's recorded values of the metric up to `now`, oldest
// first, from which its noise is estimated (drift_margin()).
using HistoryOf = std::function<std::vector<double>(const std::string& gpu_key, const std::string& metric)>;

RunDiff diff_runs(const Snapshot& base, const Snapshot& now, const HistoryOf& history_of);

}  // namespace gpuvet::history
