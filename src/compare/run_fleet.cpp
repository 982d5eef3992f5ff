#include "compare/run_fleet.hpp"

#include <algorithm>

#include "compare/run_compare.hpp"
#include "core/error.hpp"

namespace gpuvet {

RunFleetAnalysis analyse_run_fleet(std::vector<RunFleetNode> nodes) {
    RunFleetAnalysis a;
    a.nodes = std::move(nodes);
    std::vector<std::size_t> done;
    for (std::size_t i = 0; i < a.nodes.size(); ++i) {
        if (a.nodes[i].problem.empty()) done.push_back(i);
        else a.any_problem = true;
    }
    a.finished = done.size();
    if (done.size() < 2)
        throw input_error("--fleet: fewer than two run reports of finished jobs",
                          "put the gpuvet-run.json of each node (gpuvet run --report DIR under srun) into the folder");
    // The centre is a node's own run, so that "why" compares two real runs; with two nodes it is
    // the faster one, and the rule is the two-run rule.
    std::vector<std::size_t> by_time = done;
    std::stable_sort(by_time.begin(), by_time.end(),
                     [&](std::size_t x, std::size_t y) { return a.nodes[x].wall_s < a.nodes[y].wall_s; });
    a.centre = by_time[(by_time.size() - 1) / 2];
    a.slowest = by_time.back();
    const double centre_s = a.nodes[a.centre].wall_s;
    for (std::size_t i : done) {
        RunFleetNode& n = a.nodes[i];
        n.gap_fraction = centre_s > 0 ? n.wall_s / centre_s - 1 : 0.0;
        n.straggler = *n.gap_fraction > kRunSameWithin;
        if (n.straggler) a.stragglers.push_back(n.name);
    }
    return a;
}

}  // namespace gpuvet
