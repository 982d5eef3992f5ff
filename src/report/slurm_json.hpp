// The "slurm" object of a report made under Slurm (docs/report-schema.md), written (core/report_reader reads it back).
#pragma once
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "core/slurm_env.hpp"

namespace gpuvet {

nlohmann::ordered_json slurm_to_json(const SlurmContext& s);
// `document` (a JSON document gpuvet wrote) with its "slurm" member set: the context, or null.
std::string with_slurm_context(const std::string& document, const std::optional<SlurmContext>& s);

}  // namespace gpuvet
