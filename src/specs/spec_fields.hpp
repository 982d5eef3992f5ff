// The numeric fields of a GpuSpec as one table: key (as in gpus.toml and JSON), label, unit.
// `specs show`, `specs compare` and the JSON all read this table, so they cannot disagree.
#pragma once
#include <optional>
#include <vector>

#include "specs/gpu_spec.hpp"

namespace gpuvet {

struct SpecField {
    const char* key;
    const char* label;
    const char* unit;
    std::optional<double> (*get)(const GpuSpec&);
};

const std::vector<SpecField>& numeric_spec_fields();

}  // namespace gpuvet
