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

// The CUDA ordinal a stream's work runs on, for GPUVET_FAKE_HANG rules; -1 without the fake libcuda.
inline int stream_gpu(CUstream s) {
    const auto& h = cuda_hooks();
    return h.ok() ? h.stream_device(s) : -1;
}

}  // namespace fake
