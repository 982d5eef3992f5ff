// The same job run on every node of a fleet (one run report each): the median node, each node's gap
// to it, and the stragglers (more than kRunSameWithin slower). A pure function; `gpuvet compare
// --fleet` reads the reports and report/run_fleet_view prints the result.
#pragma once
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace gpuvet {

struct RunFleetNode {
    std::string name, path;
    std::string problem;  // non-empty: the report is unusable or its job did not finish cleanly
    double wall_s = 0;
    // Filled by analyse_run_fleet for the nodes without a problem.
    std::optional<double> gap_fraction;  // wall time against the median node's, minus 1
    bool straggler = false;
};

struct RunFleetAnalysis {
    std::vector<RunFleetNode> nodes;  // in the order given
    std::size_t centre = 0;           // the median node: a node's own run (the lower median)
    std::size_t slowest = 0;
    std::size_t finished = 0;  // nodes without a problem
    std::vector<std::string> stragglers;
    bool any_problem = false;
};

// Throws an input error when fewer than two nodes finished.
RunFleetAnalysis analyse_run_fleet(std::vector<RunFleetNode> nodes);

}  // namespace gpuvet
