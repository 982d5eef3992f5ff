// Catalogue of gpuvet's AMD GPU kernels: the code objects built for each gfx target (one per
// target, every kernel in it; cmake/AmdKernels.cmake), each kernel's parameters in order and how
// big a grid to launch. The kernels' contracts are at the top of src/gpu/amd_kernels/*.cl and in
// docs/kernels.md: the same as the PTX kernels', so kernel_reference.hpp verifies both.
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "gpu/kernels.hpp"

namespace gpuvet::amd_kernels {

// One embedded code object: an AMDGPU HSA ELF for one gfx target.
struct CodeObject {
    std::string_view gfx;  // "gfx942"
    std::string_view (*bytes)();
};
std::span<const CodeObject> code_objects();  // generated at build time
int code_object_version();                   // the code object ABI version they were built with
// The code object for `gfx` (exactly: a gfx942 GPU does not load a gfx940 object), else null.
const CodeObject* code_object_for(std::string_view gfx);
// "gfx906, gfx908, ..." for messages.
std::string targets_list();

struct KernelInfo {
    std::string_view name;  // the kernel symbol (hipModuleGetFunction)
    std::span<const kernels::Param> params;
    uint32_t block_threads;  // work-group size
    uint32_t groups_per_cu;  // suggested grid = CUs x this
};
std::span<const KernelInfo> catalogue();
const KernelInfo* find_kernel(std::string_view name);  // nullptr when unknown

// Every kernel is 1-D and grid-stride (or per-work-item for fma_*), so any shape is correct; this
// one gives each compute unit several resident work-groups. cu_count must be > 0.
kernels::LaunchGeometry launch_geometry(const KernelInfo& k, uint32_t cu_count);

}  // namespace gpuvet::amd_kernels
