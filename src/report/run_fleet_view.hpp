// A fleet of runs compared (compare/run_fleet): one line per node against the median, the
// stragglers, then the two-run comparison of the median and the slowest node.
#pragma once
#include <string>

#include "compare/run_compare.hpp"
#include "compare/run_fleet.hpp"
#include "report/style.hpp"

namespace gpuvet {

struct Envelope;

std::string render_run_fleet(const RunFleetAnalysis& a, const RunComparison& c, const Style& st);
// The two-run comparison's JSON with the nodes, the median node, the stragglers and the slowest.
std::string render_run_fleet_json(const RunFleetAnalysis& a, const RunComparison& c, const Envelope& env);

}  // namespace gpuvet
