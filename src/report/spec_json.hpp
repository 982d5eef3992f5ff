#pragma once
#include "report/json.hpp"
#include "specs/gpu_spec.hpp"

namespace gpuvet {

Json to_json(const GpuSpec& s);

}  // namespace gpuvet
