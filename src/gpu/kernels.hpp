// Catalogue of gpuvet's GPU kernels: which embedded PTX holds each, its parameters in order,
// the lowest compute capability it runs on, and how big a grid to launch.
// Contracts (what each kernel computes, bytes and FLOPs per launch) are at the top of each
// src/gpu/kernels/*.ptx and in docs/kernels.md; kernel_reference.hpp computes the same on the CPU.
#pragma once
#include <cstdint>
#include <span>
#include <string_view>

namespace gpuvet::kernels {

// Kernel parameter types, as cuLaunchKernel receives them (pointer = CUdeviceptr, 8 bytes;
// b32 = a packed f16x2/bf16x2 pair, 4 bytes).
enum class Param : uint8_t { ptr, u32, u64, f32, f64, b32 };
uint32_t param_bytes(Param p);

// One embedded PTX module (src/gpu/kernels/<stem>.ptx) and the .version/.target it declares.
struct PtxModule {
    std::string_view stem;
    std::string_view (*text)();
    int isa_major, isa_minor;  // .version
    int target_sm;             // .target sm_XX (lowest GPU the driver can JIT it for)
};
std::span<const PtxModule> modules();
const PtxModule* find_module(std::string_view stem);

struct KernelInfo {
    std::string_view name;    // the .entry name (cuModuleGetFunction)
    std::string_view module;  // PtxModule::stem
    std::span<const Param> params;
    int min_cc;              // compute capability x 10 (70 = Volta 7.0)
    uint32_t block_threads;  // suggested block size
    uint32_t blocks_per_sm;  // suggested grid = SMs x this
};
std::span<const KernelInfo> catalogue();
const KernelInfo* find_kernel(std::string_view name);  // nullptr when unknown

struct LaunchGeometry {
    uint32_t grid = 0;
    uint32_t block = 0;
    uint64_t threads() const { return uint64_t{grid} * block; }
};
// Every kernel is 1-D and grid-stride (or per-thread for fma_*), so any shape is correct; this
// one keeps all SMs busy with several resident blocks each. sm_count must be > 0.
LaunchGeometry launch_geometry(const KernelInfo& k, uint32_t sm_count);

}  // namespace gpuvet::kernels
