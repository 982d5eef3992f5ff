// What keeps the driver from being used as a whole, told in the user's terms with the fix. NVML and
// CUDA see the same GPUs on a healthy box; where they disagree (MIG mode, CUDA_VISIBLE_DEVICES, a
// kernel module that is not loaded), the inventory keeps what NVML knows and names the disagreement.
#pragma once
#include <string>
#include <vector>

#include "core/result.hpp"

namespace gpuvet {

struct Inventory;
struct GpuInfo;

// The problems found in a collected inventory, most fundamental first. `cuda_visible_devices` is
// the environment variable's value, or null when unset.
std::vector<DriverProblem> diagnose_driver(const Inventory& inv, const char* cuda_visible_devices);

// Why CUDA has no device for this GPU that NVML lists (the GPU's cuda_ordinal absent reason).
std::string cuda_invisible_reason(const GpuInfo& g, const char* cuda_visible_devices);

}  // namespace gpuvet
