// Registry of kernels the fake libcuda can run on the CPU, by PTX entry name. A launch of a name
// without an entry here returns CUDA_ERROR_NOT_SUPPORTED, so a test never passes on a kernel that
// silently did nothing. Memory-bandwidth, FMA and memtest kernels register here when gpuvet gains them.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "scenario.hpp"

namespace fake {

struct KernelLaunch {
    unsigned grid[3], block[3];
    unsigned shared_bytes;
    void** params;               // kernelParams as passed to cuLaunchKernel
    const Gpu* gpu;              // the scenario's figures for simulated timing
    // Host view of device memory [ptr, ptr + bytes); nullptr when out of any allocation.
    std::function<void*(uint64_t ptr, size_t bytes)> host;
    // The scenario's bad memory cells inside [ptr, ptr + bytes): (device address of the 64-bit
    // word, bits it flips), from the physical placement of the allocation.
    std::function<std::vector<std::pair<uint64_t, uint64_t>>(uint64_t ptr, uint64_t bytes)> bad_cells;
};

// Large buffers written by emulated kernels are kept as a description (a u32 fill, a memtest
// pattern) instead of bytes, so gigabyte-sized measurements cost no CPU time. The fake libcuda
// calls these before host-side copies and fills touch device memory, so what a copy reads is
// always the real content: materialize() writes the described bytes into [ptr, ptr + bytes);
// forget() drops descriptions overlapping a range about to be overwritten or freed.
void lazy_materialize(const KernelLaunch& env, uint64_t ptr, uint64_t bytes);
void lazy_forget(uint64_t ptr, uint64_t bytes);

// Runs the kernel's effect on host memory and returns its simulated duration in nanoseconds,
// or a negative value when the arguments are invalid (reported as CUDA_ERROR_INVALID_VALUE).
using EmulatedKernel = std::function<double(const KernelLaunch&)>;

inline std::map<std::string, EmulatedKernel>& kernel_registry() {
    static std::map<std::string, EmulatedKernel> registry;
    return registry;
}

}  // namespace fake
