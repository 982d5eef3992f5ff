// Is there an NVIDIA driver on this machine, and which? Fills MachineInfo::driver.
#pragma once
#include "core/result.hpp"

namespace gpuvet {

// Environment variables that point gpuvet at other library files (documented in docs/testing.md).
inline constexpr const char* kEnvLibCuda = "GPUVET_LIBCUDA";
inline constexpr const char* kEnvLibNvml = "GPUVET_LIBNVML";

DriverInfo probe_driver();

}  // namespace gpuvet
