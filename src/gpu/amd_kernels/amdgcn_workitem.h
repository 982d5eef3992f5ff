// The OpenCL work-item functions gpuvet's kernels use, for the amdgcn code objects. ROCm's device
// libraries define them for OpenCL; gpuvet links no device library, so they are defined here from
// the HSA kernel dispatch packet (hsa.h: hsa_kernel_dispatch_packet_t, the same layout in every
// HSA runtime), which HIP's module launch fills as it does for its own kernels. Included ahead of
// every kernel source by the amdgcn build only (-include): PoCL supplies its own definitions, so
// the kernel sources are the same text on the GPU and in the tests on the CPU. 1-D launches only.
#pragma once

typedef struct {
    ushort header, setup;
    ushort workgroup_size_x, workgroup_size_y, workgroup_size_z;
    ushort reserved0;
    uint grid_size_x, grid_size_y, grid_size_z;  // in work-items, as HIP writes them
} gpuvet_dispatch_packet;

static inline __constant gpuvet_dispatch_packet* gpuvet_packet(void) {
    return (__constant gpuvet_dispatch_packet*)__builtin_amdgcn_dispatch_ptr();
}

// C99 inline definitions: always inlined, and no symbol of their own to clash between the sources.
#define GPUVET_WORKITEM inline __attribute__((overloadable, const, always_inline))
GPUVET_WORKITEM size_t get_local_id(uint d) { return d == 0 ? __builtin_amdgcn_workitem_id_x() : 0; }
GPUVET_WORKITEM size_t get_group_id(uint d) { return d == 0 ? __builtin_amdgcn_workgroup_id_x() : 0; }
GPUVET_WORKITEM size_t get_local_size(uint d) { return d == 0 ? gpuvet_packet()->workgroup_size_x : 1; }
GPUVET_WORKITEM size_t get_global_size(uint d) { return d == 0 ? gpuvet_packet()->grid_size_x : 1; }
GPUVET_WORKITEM size_t get_global_id(uint d) {
    return d == 0 ? get_group_id(0) * get_local_size(0) + get_local_id(0) : 0;
}
