// The sections `gpuvet compare --workload` prints from compare/offer_workload's model: terminal,
// Markdown, HTML, JSON.
#pragma once
#include <string>

#include "compare/offer_workload.hpp"
#include "report/json.hpp"

namespace gpuvet {

std::string workload_terminal(const WorkloadComparison& c);
std::string workload_markdown(const WorkloadComparison& c);
std::string workload_html(const WorkloadComparison& c);
Json workload_to_json(const WorkloadComparison& c);

}  // namespace gpuvet
