#include "gpu/bindings/cuda_api.hpp"

#include <tuple>

#include "core/text_safety.hpp"

namespace gpuvet {

namespace {

using A = CudaApi;
constexpr Need R = Need::Required;
constexpr Need O = Need::Optional;

}  // namespace

// Which GPU a CUDA call names: the device argument of the device queries, else the calling
// thread's current context (recorded when cuCtxSetCurrent makes a retained context current).
template <>
struct DriverHooks<&CudaApi::cuDeviceGetName> : LastArgDevice {};
template <>
struct DriverHooks<&CudaApi::cuDeviceTotalMem> : LastArgDevice {};
template <>
struct DriverHooks<&CudaApi::cuDeviceGetAttribute> : LastArgDevice {};
template <>
struct DriverHooks<&CudaApi::cuDeviceGetUuid> : LastArgDevice {};
template <>
struct DriverHooks<&CudaApi::cuDevicePrimaryCtxRelease> : LastArgDevice {};
template <>
struct DriverHooks<&CudaApi::cuDevicePrimaryCtxRetain> {
    static int gpu(DriverLib&, cu::CUcontext*, cu::CUdevice dev) { return dev; }
    static void after(DriverLib& lib, int gpu, cu::CUresult rc, cu::CUcontext* ctx, cu::CUdevice) {
        if (rc == cu::CUDA_SUCCESS && ctx) record_gpu_handle(lib, *ctx, gpu);
    }
};
template <>
struct DriverHooks<&CudaApi::cuDeviceCanAccessPeer> {
    static int gpu(DriverLib&, int*, cu::CUdevice dev, cu::CUdevice) { return dev; }
    template <class R, class... A>
    static void after(DriverLib&, int, R, A...) {}
};
template <>
struct DriverHooks<&CudaApi::cuCtxSetCurrent> {
    static int gpu(DriverLib& lib, cu::CUcontext ctx) { return gpu_of_handle(lib, ctx); }
    static void after(DriverLib&, int gpu, cu::CUresult rc, cu::CUcontext) {
        if (rc == cu::CUDA_SUCCESS) set_thread_gpu(gpu);
    }
};

// The JIT options are two arrays of `numOptions` elements (the log buffer they name is the caller's:
// gpu/session.cpp keeps it alive when the load gets no answer); a kernel's parameters are read
// during the launch, their number is the kernel's; a copy's host buffer takes `ByteCount`.
template <>
struct DriverArgs<&CudaApi::cuModuleLoadDataEx> : ArrayArgs<2, 3, 4> {};
template <>
struct DriverArgs<&CudaApi::cuLaunchKernel> : AsIsArgs<9, 10> {};
// cuMemGetHandleForAddressRange's handle is a void* that the DMA-BUF type fills with an int fd (cuda.h).
template <>
struct DriverArgs<&CudaApi::cuMemGetHandleForAddressRange> {
    template <std::size_t I, class... A>
    static std::size_t extent(const std::tuple<A...>& a) {
        if constexpr (I == 0) return sizeof(int);
        else return default_extent<I>(a);
    }
};
template <>
struct DriverArgs<&CudaApi::cuMemcpyDtoH> : ArrayArgs<2, 0> {};
template <>
struct DriverArgs<&CudaApi::cuMemcpyHtoD> : ArrayArgs<2, 1> {};

namespace {

template <auto M>
constexpr void (*set)(CudaApi&, void*, const char*, DriverLib*) = &assign_member<M, CudaApi>;

// Newest name first. The unversioned memory calls of old drivers took 32-bit sizes, so the _v2
// names have no fallback.
const SymbolEntry<CudaApi> kTable[] = {
    {{"cuInit"}, R, set<&A::cuInit>},
    {{"cuDriverGetVersion"}, R, set<&A::cuDriverGetVersion>},
    {{"cuDeviceGetCount"}, R, set<&A::cuDeviceGetCount>},
    {{"cuDeviceGet"}, R, set<&A::cuDeviceGet>},
    {{"cuDeviceGetName"}, O, set<&A::cuDeviceGetName>},
    {{"cuDeviceTotalMem_v2"}, O, set<&A::cuDeviceTotalMem>},
    {{"cuDeviceGetAttribute"}, O, set<&A::cuDeviceGetAttribute>},
    {{"cuDeviceGetUuid_v2", "cuDeviceGetUuid"}, O, set<&A::cuDeviceGetUuid>},
    {{"cuDevicePrimaryCtxRetain"}, O, set<&A::cuDevicePrimaryCtxRetain>},
    {{"cuDevicePrimaryCtxRelease_v2", "cuDevicePrimaryCtxRelease"}, O, set<&A::cuDevicePrimaryCtxRelease>},
    {{"cuCtxSetCurrent"}, O, set<&A::cuCtxSetCurrent>},
    {{"cuModuleLoadData"}, O, set<&A::cuModuleLoadData>},
    {{"cuModuleLoadDataEx"}, O, set<&A::cuModuleLoadDataEx>},
    {{"cuModuleGetFunction"}, O, set<&A::cuModuleGetFunction>},
    {{"cuLaunchKernel"}, O, set<&A::cuLaunchKernel>},
    {{"cuMemAlloc_v2"}, O, set<&A::cuMemAlloc>},
    {{"cuMemFree_v2"}, O, set<&A::cuMemFree>},
    {{"cuMemcpyHtoD_v2"}, O, set<&A::cuMemcpyHtoD>},
    {{"cuMemcpyDtoH_v2"}, O, set<&A::cuMemcpyDtoH>},
    {{"cuMemcpyDtoD_v2"}, O, set<&A::cuMemcpyDtoD>},
    {{"cuMemsetD8_v2"}, O, set<&A::cuMemsetD8>},
    {{"cuMemHostAlloc"}, O, set<&A::cuMemHostAlloc>},
    {{"cuMemFreeHost"}, O, set<&A::cuMemFreeHost>},
    {{"cuMemcpyAsync"}, O, set<&A::cuMemcpyAsync>},
    {{"cuMemcpyHtoDAsync_v2"}, O, set<&A::cuMemcpyHtoDAsync>},
    {{"cuMemcpyDtoHAsync_v2"}, O, set<&A::cuMemcpyDtoHAsync>},
    {{"cuMemsetD32Async"}, O, set<&A::cuMemsetD32Async>},
    {{"cuStreamWaitEvent"}, O, set<&A::cuStreamWaitEvent>},
    {{"cuStreamCreate"}, O, set<&A::cuStreamCreate>},
    {{"cuStreamSynchronize"}, O, set<&A::cuStreamSynchronize>},
    {{"cuStreamDestroy_v2"}, O, set<&A::cuStreamDestroy>},
    {{"cuEventCreate"}, O, set<&A::cuEventCreate>},
    {{"cuEventRecord"}, O, set<&A::cuEventRecord>},
    {{"cuEventSynchronize"}, O, set<&A::cuEventSynchronize>},
    {{"cuEventElapsedTime_v2", "cuEventElapsedTime"}, O, set<&A::cuEventElapsedTime>},
    {{"cuEventDestroy_v2"}, O, set<&A::cuEventDestroy>},
    {{"cuMemGetInfo_v2"}, O, set<&A::cuMemGetInfo>},
    {{"cuCtxSynchronize"}, O, set<&A::cuCtxSynchronize>},
    {{"cuDeviceCanAccessPeer"}, O, set<&A::cuDeviceCanAccessPeer>},
    {{"cuCtxEnablePeerAccess"}, O, set<&A::cuCtxEnablePeerAccess>},
    {{"cuMemcpyPeerAsync"}, O, set<&A::cuMemcpyPeerAsync>},
    {{"cuMemGetHandleForAddressRange"}, O, set<&A::cuMemGetHandleForAddressRange>},
    {{"cuGetErrorName"}, O, set<&A::cuGetErrorName>},
    {{"cuGetErrorString"}, O, set<&A::cuGetErrorString>},
};

struct StatusInfo {
    int code;
    const char* name;
    const char* advice;
};

// Values from cuda.h (CUresult); the advice is ours.
const StatusInfo kStatus[] = {
    {0, "CUDA_SUCCESS", ""},
    {1, "CUDA_ERROR_INVALID_VALUE", "this is a gpuvet bug: please report it"},
    {2, "CUDA_ERROR_OUT_OF_MEMORY", "the GPU is out of memory: stop the processes using it"},
    {3, "CUDA_ERROR_NOT_INITIALIZED", "this is a gpuvet bug: please report it"},
    {4, "CUDA_ERROR_DEINITIALIZED", "the driver is shutting down: retry"},
    {100, "CUDA_ERROR_NO_DEVICE",
     "no CUDA-capable GPU is visible: check nvidia-smi, CUDA_VISIBLE_DEVICES and the container's GPU access"},
    {101, "CUDA_ERROR_INVALID_DEVICE", "check CUDA_VISIBLE_DEVICES"},
    {200, "CUDA_ERROR_INVALID_IMAGE", "this is a gpuvet bug: please report it"},
    {209, "CUDA_ERROR_NO_BINARY_FOR_GPU", "update gpuvet or the driver: no kernel image for this GPU"},
    {214, "CUDA_ERROR_ECC_UNCORRECTABLE",
     "an uncorrectable ECC error occurred: reset the GPU and report it to the provider"},
    {218, "CUDA_ERROR_INVALID_PTX", "this is a gpuvet bug: please report it"},
    {222, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION", "update the NVIDIA driver"},
    {304, "CUDA_ERROR_OPERATING_SYSTEM", "the operating system refused the call: check dmesg"},
    {500, "CUDA_ERROR_NOT_FOUND", "this is a gpuvet bug: please report it"},
    {600, "CUDA_ERROR_NOT_READY", ""},
    {700, "CUDA_ERROR_ILLEGAL_ADDRESS", "the GPU faulted: check dmesg for Xid errors, then reset it"},
    {702, "CUDA_ERROR_LAUNCH_TIMEOUT", "a display watchdog killed the kernel: run on a GPU without a display"},
    {704, "CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED", ""},
    {714, "CUDA_ERROR_HARDWARE_STACK_ERROR", "the GPU faulted: check dmesg for Xid errors, then reset it"},
    {719, "CUDA_ERROR_LAUNCH_FAILED", "the GPU faulted: check dmesg for Xid errors, then reset it"},
    {800, "CUDA_ERROR_NOT_PERMITTED", "no permission: run as root or add the user to the video group"},
    {801, "CUDA_ERROR_NOT_SUPPORTED", "nothing to do: this GPU or driver does not offer it"},
    {802, "CUDA_ERROR_SYSTEM_NOT_READY",
     "the system is not ready: start nvidia-fabricmanager on NVSwitch systems, then retry"},
    {803, "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH",
     "libcuda and the kernel module versions differ: reboot, or reinstall a matching driver"},
    {804, "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE",
     "the CUDA forward-compatibility package does not support this GPU: remove it or use the system driver"},
    {999, "CUDA_ERROR_UNKNOWN", "check dmesg for Xid errors and nvidia-smi for the GPU's state"},
};

const StatusInfo* find_status(int code) {
    for (const auto& s : kStatus)
        if (s.code == code) return &s;
    return nullptr;
}

}  // namespace

std::span<const SymbolEntry<CudaApi>> cuda_symbol_table() { return kTable; }

std::string cuda_status_name(int code) {
    if (code == kCudaNoAnswer) return "no answer from the driver";
    if (auto* s = find_status(code)) return s->name;
    return "CUDA_ERROR_" + std::to_string(code);
}

std::string cuda_advice(int code) {
    if (code == kCudaNoAnswer) return driver_no_answer_advice("CUDA");
    if (auto* s = find_status(code)) return s->advice;
    return "check dmesg for Xid errors and nvidia-smi for the GPU's state";
}

CudaApi CudaApi::from_library(const DynLib& lib, DriverLib* deadline) {
    CudaApi api;
    api.path = lib.path();
    api.symbols = resolve_symbols<CudaApi>(
        cuda_symbol_table(), api, [&lib](const char* n) { return lib.symbol(n); }, deadline);
    if (!api.symbols.complete()) {
        std::string names;
        for (const auto& m : api.symbols.missing_required) names += (names.empty() ? "" : ", ") + m;
        api.error = "libcuda at " + lib.path() + " lacks " + names;
    }
    return api;
}

CudaApi CudaApi::load() {
    DynLib lib = DynLib::open(kEnvLibCuda, {"libcuda.so.1", "libcuda.so"});
    if (!lib) {
        CudaApi api;
        api.error = "libcuda.so.1 could not be loaded: " + lib.error();
        return api;
    }
    return from_library(lib, &cuda_driver_lib());  // the handle stays open for the process (see DynLib)
}

CudaApi CudaApi::load_file(const std::string& file) {
    DynLib lib = DynLib::open("", {file});
    if (!lib) {
        CudaApi api;
        api.error = file + " could not be loaded: " + lib.error();
        return api;
    }
    return from_library(lib);
}

std::string CudaApi::error_name(int code) const {
    if (code == kCudaNoAnswer) return last_driver_no_answer();
    if (cuGetErrorName) {
        const char* s = nullptr;
        if (cuGetErrorName(static_cast<cu::CUresult>(code), &s) == cu::CUDA_SUCCESS && s && *s) return visible_text(s);
    }
    return cuda_status_name(code);
}

CudaError::CudaError(std::string call, int code, std::string name)
    : Error(ErrorKind::Driver, call + " failed: " + name + " (CUDA error " + std::to_string(code) + ")",
            cuda_advice(code)),
      call_(std::move(call)),
      code_(code),
      name_(std::move(name)) {}

}  // namespace gpuvet
