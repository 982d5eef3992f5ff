// The fabric section of the fleet's documents (terminal, JSON, Markdown, HTML): the all-reduce
// across nodes against its band, the findings that name a node, rail or pair, the whole job's
// sweep and what NCCL used on every node.
#pragma once
#include <nlohmann/json.hpp>
#include <string>

#include "compare/fleet_analysis.hpp"
#include "report/style.hpp"

namespace gpuvet {

std::string fabric_terminal(const FleetFabric& f, const Style& st);
nlohmann::ordered_json fabric_json(const FleetFabric& f);
std::string fabric_markdown(const FleetFabric& f);
std::string fabric_html(const FleetFabric& f);  // a <section id="fabric">

}  // namespace gpuvet
