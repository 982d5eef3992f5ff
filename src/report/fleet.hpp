// gpuvet compare --fleet: many nodes' check reports of one GPU model, each metric's median and
// spread, and the nodes and GPUs that stand out by a robust rule (below), with one line per node
// in the style of NVIDIA's NHC for schedulers.
//
// The outlier rule: for each metric over every GPU of every node (or every node, for box-level
// figures), the median and the median absolute deviation (MAD). A value is an outlier when its
// modified z-score 0.6745·|x − median| / MAD exceeds 3.5 (Iglewicz and Hoaglin, 1993) and it lies
// more than 5% from the median (so that nodes agreeing to within noise, MAD near 0, are not
// flagged). Low outliers of a throughput are errors; high ones are listed only.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "core/result.hpp"
#include "report/offers.hpp"

namespace gpuvet {

inline constexpr double kOutlierModifiedZ = 3.5;
inline constexpr double kOutlierMinDeviation = 0.05;

struct FleetOutlier {
    std::string node;
    std::optional<int> gpu;
    std::string metric, label, unit;
    double value = 0, median = 0;
    bool low = true;
};

struct FleetMetric {
    std::string id, label, unit;
    std::size_t samples = 0;
    double median = 0, mad = 0, min = 0, max = 0;
};

struct FleetNode {
    std::string name, path;
    RunVerdict verdict = RunVerdict::CouldNotRun;
    std::vector<std::string> failed;  // "gpu.health GPU 1: ..."
};

struct Fleet {
    std::string gpu_model;
    std::vector<FleetNode> nodes;
    std::vector<FleetMetric> metrics;
    std::vector<FleetOutlier> outliers;
};

// Throws an Input error for fewer than 3 reports or reports of different GPU models.
Fleet analyse_fleet(const std::vector<OfferInput>& inputs);
// "node-07 | Healthy" or "node-07 | ERROR: gpu.health GPU 1 failed: ...; low outlier: ...".
std::string nhc_line(const Fleet& f, const FleetNode& n);

}  // namespace gpuvet
