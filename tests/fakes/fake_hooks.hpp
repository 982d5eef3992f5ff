// The fake cuBLASLt and NCCL run on the fake libcuda's device memory and simulated clock through
// hooks it exports (gpuvet_fake_*). They find the libcuda gpuvet loaded (GPUVET_LIBCUDA) with
// dlopen(RTLD_NOLOAD), as the real libraries find the process's libcuda.
#pragma once
#include <cuda.h>
#include <dlfcn.h>

#include <cstdlib>

#include "fake_hang.hpp"
#include "scenario.hpp"

namespace fake {

struct CudaHooks {
    void* (*host_view)(unsigned long long, size_t) = nullptr;
    int (*charge)(CUstream, double) = nullptr;
    int (*stream_device)(CUstream) = nullptr;
    const void* (*device_gpu)(int) = nullptr;
    const void* (*scenario)() = nullptr;
    void (*on_device_read)(void (*)(unsigned long long, size_t)) = nullptr;
    bool ok() const { return host_view && charge && stream_device && device_gpu && scenario && on_device_read; }
    const Gpu* gpu(int dev) const { return static_cast<const Gpu*>(device_gpu(dev)); }
    const Scenario* sc() const { return static_cast<const Scenario*>(scenario()); }
    // What the collectives double asks of either driver double (HipHooks has the same).
    bool has_device(int dev) const { return gpu(dev) != nullptr; }
    double busbw_gbps(int dev) const { return gpu(dev)->nccl_busbw_gbps; }
    bool wrong_sums(int dev) const { return gpu(dev)->nccl_wrong_sums; }
};

// Nullptr-filled (ok() false) when the fake libcuda is not loaded in this process.
inline const CudaHooks& cuda_hooks() {
    static CudaHooks h = [] {
        CudaHooks x;
        const char* lib = std::getenv("GPUVET_LIBCUDA");
        void* d = dlopen(lib && *lib ? lib : "libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
        if (!d) return x;
        x.host_view = reinterpret_cast<decltype(x.host_view)>(dlsym(d, "gpuvet_fake_host_view"));
        x.charge = reinterpret_cast<decltype(x.charge)>(dlsym(d, "gpuvet_fake_charge"));
        x.stream_device = reinterpret_cast<decltype(x.stream_device)>(dlsym(d, "gpuvet_fake_stream_device"));
        x.device_gpu = reinterpret_cast<decltype(x.device_gpu)>(dlsym(d, "gpuvet_fake_device_gpu"));
        x.scenario = reinterpret_cast<decltype(x.scenario)>(dlsym(d, "gpuvet_fake_scenario"));
        x.on_device_read = reinterpret_cast<decltype(x.on_device_read)>(dlsym(d, "gpuvet_fake_on_device_read"));
        return x;
    }();
    return h;
}

// The same for the RCCL double over the HIP double (fake_hip.cpp's gpuvet_fake_hip_*), found in the
// libamdhip64 gpuvet loaded (GPUVET_LIBHIP) as RCCL finds the process's HIP. Streams are hipStream_t.
struct HipHooks {
    void* (*host_view)(unsigned long long, size_t) = nullptr;
    int (*charge)(void*, double) = nullptr;
    int (*stream_device)(void*) = nullptr;
    int (*device_count)() = nullptr;
    double (*rccl_busbw_gbps)(int) = nullptr;
    int (*rccl_wrong_sums)(int) = nullptr;
    void (*on_device_read)(void (*)(unsigned long long, size_t)) = nullptr;
    bool ok() const {
        return host_view && charge && stream_device && device_count && rccl_busbw_gbps && rccl_wrong_sums &&
               on_device_read;
    }
    bool has_device(int dev) const { return dev >= 0 && dev < device_count(); }
    double busbw_gbps(int dev) const { return rccl_busbw_gbps(dev); }
    bool wrong_sums(int dev) const { return rccl_wrong_sums(dev) != 0; }
};
inline const HipHooks& hip_hooks() {
    static HipHooks h = [] {
        HipHooks x;
        const char* lib = std::getenv("GPUVET_LIBHIP");
        void* d = dlopen(lib && *lib ? lib : "libamdhip64.so", RTLD_NOW | RTLD_NOLOAD);
        if (!d) return x;
        x.host_view = reinterpret_cast<decltype(x.host_view)>(dlsym(d, "gpuvet_fake_hip_host_view"));
        x.charge = reinterpret_cast<decltype(x.charge)>(dlsym(d, "gpuvet_fake_hip_charge"));
        x.stream_device = reinterpret_cast<decltype(x.stream_device)>(dlsym(d, "gpuvet_fake_hip_stream_device"));
        x.device_count = reinterpret_cast<decltype(x.device_count)>(dlsym(d, "gpuvet_fake_hip_device_count"));
        x.rccl_busbw_gbps = reinterpret_cast<decltype(x.rccl_busbw_gbps)>(dlsym(d, "gpuvet_fake_hip_rccl_busbw_gbps"));
        x.rccl_wrong_sums = reinterpret_cast<decltype(x.rccl_wrong_sums)>(dlsym(d, "gpuvet_fake_hip_rccl_wrong_sums"));
        x.on_device_read = reinterpret_cast<decltype(x.on_device_read)>(dlsym(d, "gpuvet_fake_hip_on_device_read"));
        return x;
    }();
    return h;
}

// The CUDA ordinal a stream's work runs on, for GPUVET_FAKE_HANG rules; -1 without the fake libcuda.
inline int stream_gpu(CUstream s) {
    const auto& h = cuda_hooks();
    return h.ok() ? h.stream_device(s) : -1;
}

}  // namespace fake
