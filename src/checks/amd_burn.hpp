// gpu.burn on AMD GPUs (amd_burn.cpp): the burn's load as gpuvet's FMA and STREAM kernels through
// HIP (gpu/burn_load.hpp, run_burn_hip). GpuBurnCheck::run() takes it when amd_measure::run_is_amd(ctx).
#pragma once
#include <vector>

#include "core/check.hpp"
#include "gpu/burn.hpp"

namespace gpuvet::amd_measure {

std::vector<CheckResult> burn(CheckContext& ctx, const BurnOptions& opt);

}  // namespace gpuvet::amd_measure
