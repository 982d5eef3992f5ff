// gpuvet compare --fleet over run reports: the same job run on several nodes (srun gpuvet run ...),
// each node's wall time against the fleet's median (the lower median: a node's own run), every node
// more than kRunSameWithin slower named a straggler, and why the slowest is slow, by the two-run
// comparison of it against the median node (monitor/run_compare.hpp): the multi-node form of the
// straggler question.
#pragma once
#include <string>
#include <vector>

#include "cli/common.hpp"

namespace gpuvet {

// 0 compared, every node within kRunSameWithin of the median; 1 a node's job failed or a node is
// beyond that; 2 bad input (fewer than two usable run reports).
int compare_run_fleet(const GlobalOptions& g, const std::vector<std::string>& files, bool json);

}  // namespace gpuvet
