// gpuvet compare --fleet over run reports: the same job run on several nodes (srun gpuvet run ...),
// each node's wall time, the slowest node named, and why, by the two-run comparison of the slowest
// against the fastest (monitor/run_compare.hpp): the multi-node form of the straggler question.
#pragma once
#include <string>
#include <vector>

#include "cli/common.hpp"

namespace gpuvet {

// 0 compared, the nodes within kRunSameWithin of each other; 1 a node's job failed or the slowest
// node is beyond that; 2 bad input (fewer than two usable run reports).
int compare_run_fleet(const GlobalOptions& g, const std::vector<std::string>& files, bool json);

}  // namespace gpuvet
