// Registry of kernels the fake libcuda can run on the CPU, by PTX entry name. A launch of a name
// without an entry here returns CUDA_ERROR_NOT_SUPPORTED, so a test never passes on a kernel that
// silently did nothing. Memory-bandwidth, FMA and memtest kernels register here when gpuvet gains them.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include "scenario.hpp"

namespace fake {

struct KernelLaunch {
    unsigned grid[3], block[3];
    unsigned shared_bytes;
    void** params;               // kernelParams as passed to cuLaunchKernel
    const Gpu* gpu;              // the scenario's figures for simulated timing
    // Host view of device memory [ptr, ptr + bytes); nullptr when out of any allocation.
    std::function<void*(uint64_t ptr, size_t bytes)> host;
};

// Runs the kernel's effect on host memory and returns its simulated duration in nanoseconds,
// or a negative value when the arguments are invalid (reported as CUDA_ERROR_INVALID_VALUE).
using EmulatedKernel = std::function<double(const KernelLaunch&)>;

inline std::map<std::string, EmulatedKernel>& kernel_registry() {
    static std::map<std::string, EmulatedKernel> registry;
    return registry;
}

}  // namespace fake
