#include "gpu/bindings/hip_api.hpp"

#include <tuple>

namespace gpuvet {

// Which GPU a HIP call names: the device argument of the device queries, else the device the
// calling thread chose with hipSetDevice.
template <>
struct DriverHooks<&HipApi::hipDeviceGet> : LastArgDevice {};
template <>
struct DriverHooks<&HipApi::hipDeviceGetName> : LastArgDevice {};
template <>
struct DriverHooks<&HipApi::hipDeviceGetPCIBusId> : LastArgDevice {};
template <>
struct DriverHooks<&HipApi::hipDeviceTotalMem> : LastArgDevice {};
template <>
struct DriverHooks<&HipApi::hipDeviceGetAttribute> : LastArgDevice {};
template <>
struct DriverHooks<&HipApi::hipSetDevice> {
    static int gpu(DriverLib&, int dev) { return dev; }
    static void after(DriverLib&, int gpu, hip::hipError_t rc, int) {
        if (rc == hip::hipSuccess) set_thread_gpu(gpu);
    }
};

// A kernel's parameters are read during the launch (their number is the kernel's); a copy's host
// side is held by the call (driver_deadline.hpp), its device side passed as is.
template <>
struct DriverArgs<&HipApi::hipModuleLaunchKernel> : AsIsArgs<9, 10> {};
template <>
struct DriverArgs<&HipApi::hipMemcpy> {
    template <std::size_t I, class... A>
    static std::size_t extent(const std::tuple<A...>& a) {
        const hip::hipMemcpyKind kind = std::get<3>(a);
        const bool host_dst = kind == hip::hipMemcpyDeviceToHost || kind == hip::hipMemcpyHostToHost;
        const bool host_src = kind == hip::hipMemcpyHostToDevice || kind == hip::hipMemcpyHostToHost;
        if constexpr (I == 0) return host_dst ? std::get<2>(a) : kAsIs;
        else if constexpr (I == 1) return host_src ? std::get<2>(a) : kAsIs;
        else return default_extent<I>(a);
    }
};

namespace {

using A = HipApi;
constexpr Need R = Need::Required;
constexpr Need O = Need::Optional;

template <auto M>
constexpr void (*set)(HipApi&, void*, const char*, DriverLib*) = &assign_member<M, HipApi>;

// Required: what every kernel run needs (a device, memory, a module, a launch, a wait).
const SymbolEntry<HipApi> kTable[] = {
    {{"hipInit"}, R, set<&A::hipInit>},
    {{"hipGetDeviceCount"}, R, set<&A::hipGetDeviceCount>},
    {{"hipSetDevice"}, R, set<&A::hipSetDevice>},
    {{"hipMalloc"}, R, set<&A::hipMalloc>},
    {{"hipFree"}, R, set<&A::hipFree>},
    {{"hipMemcpy"}, R, set<&A::hipMemcpy>},
    {{"hipModuleLoadData"}, R, set<&A::hipModuleLoadData>},
    {{"hipModuleUnload"}, R, set<&A::hipModuleUnload>},
    {{"hipModuleGetFunction"}, R, set<&A::hipModuleGetFunction>},
    {{"hipModuleLaunchKernel"}, R, set<&A::hipModuleLaunchKernel>},
    {{"hipDeviceSynchronize"}, R, set<&A::hipDeviceSynchronize>},
    {{"hipDriverGetVersion"}, O, set<&A::hipDriverGetVersion>},
    {{"hipRuntimeGetVersion"}, O, set<&A::hipRuntimeGetVersion>},
    {{"hipDeviceGet"}, O, set<&A::hipDeviceGet>},
    {{"hipDeviceGetName"}, O, set<&A::hipDeviceGetName>},
    {{"hipDeviceGetPCIBusId"}, O, set<&A::hipDeviceGetPCIBusId>},
    {{"hipDeviceTotalMem"}, O, set<&A::hipDeviceTotalMem>},
    {{"hipDeviceGetAttribute"}, O, set<&A::hipDeviceGetAttribute>},
    {{"hipMemGetInfo"}, O, set<&A::hipMemGetInfo>},
    {{"hipHostMalloc"}, O, set<&A::hipHostMalloc>},
    {{"hipHostFree"}, O, set<&A::hipHostFree>},
    {{"hipMemcpyAsync"}, O, set<&A::hipMemcpyAsync>},
    {{"hipMemset"}, O, set<&A::hipMemset>},
    {{"hipStreamCreate"}, O, set<&A::hipStreamCreate>},
    {{"hipStreamDestroy"}, O, set<&A::hipStreamDestroy>},
    {{"hipStreamSynchronize"}, O, set<&A::hipStreamSynchronize>},
    {{"hipStreamWaitEvent"}, O, set<&A::hipStreamWaitEvent>},
    {{"hipEventCreate"}, O, set<&A::hipEventCreate>},
    {{"hipEventDestroy"}, O, set<&A::hipEventDestroy>},
    {{"hipEventRecord"}, O, set<&A::hipEventRecord>},
    {{"hipEventSynchronize"}, O, set<&A::hipEventSynchronize>},
    {{"hipEventElapsedTime"}, O, set<&A::hipEventElapsedTime>},
    {{"hipGetErrorName"}, O, set<&A::hipGetErrorName>},
    {{"hipGetErrorString"}, O, set<&A::hipGetErrorString>},
};

struct StatusInfo {
    unsigned code;
    const char* name;
    const char* advice;
};

// Values from hip_runtime_api.h (hipError_t); the advice is ours.
const StatusInfo kStatus[] = {
    {0, "hipSuccess", ""},
    {1, "hipErrorInvalidValue", "this is a gpuvet bug: please report it"},
    {2, "hipErrorOutOfMemory", "the GPU's memory is full: stop the other processes using it"},
    {3, "hipErrorNotInitialized", "HIP could not start: check that the amdgpu driver is loaded (dmesg, /dev/kfd)"},
    {4, "hipErrorDeinitialized", "HIP was shut down while gpuvet still used it: this is a gpuvet bug"},
    {35, "hipErrorInsufficientDriver", "the amdgpu kernel driver is older than this HIP runtime: update it"},
    {98, "hipErrorInvalidDeviceFunction", "the kernel is not in the code object: this is a gpuvet bug"},
    {100, "hipErrorNoDevice",
     "HIP sees no GPU: check /dev/kfd and /dev/dri permissions (video and render groups) and HIP_VISIBLE_DEVICES"},
    {101, "hipErrorInvalidDevice", "the GPU index is not visible to HIP: check HIP_VISIBLE_DEVICES"},
    {200, "hipErrorInvalidImage", "the code object is damaged: rebuild gpuvet"},
    {201, "hipErrorInvalidContext", "this is a gpuvet bug: please report it"},
    {209, "hipErrorNoBinaryForGpu", "gpuvet has no code object for this GPU's gfx target: build gpuvet with it"},
    {214, "hipErrorECCNotCorrectable", "an uncorrectable memory error: stop using this GPU and check its RAS counters"},
    {218, "hipErrorInvalidKernelFile", "the code object is damaged: rebuild gpuvet"},
    {301, "hipErrorFileNotFound", "a file HIP needs is missing: reinstall ROCm"},
    {303, "hipErrorSharedObjectInitFailed", "a ROCm library did not start: reinstall ROCm"},
    {304, "hipErrorOperatingSystem", "the operating system refused the call: check dmesg"},
    {400, "hipErrorInvalidHandle", "this is a gpuvet bug: please report it"},
    {500, "hipErrorNotFound", "the kernel is not in the code object: this is a gpuvet bug"},
    {600, "hipErrorNotReady", ""},
    {700, "hipErrorIllegalAddress", "the kernel faulted: check dmesg for amdgpu page faults, then reset the GPU"},
    {701, "hipErrorLaunchOutOfResources", "the launch asked for more than the GPU offers: this is a gpuvet bug"},
    {702, "hipErrorLaunchTimeOut", "the kernel ran past the driver's limit: check dmesg, then reset the GPU"},
    {710, "hipErrorAssert", "the kernel's own check failed: this is a gpuvet bug"},
    {719, "hipErrorLaunchFailure", "the kernel failed: check dmesg for amdgpu errors, then reset the GPU"},
    {801, "hipErrorNotSupported", "not supported by this GPU or driver"},
    {999, "hipErrorUnknown", "check dmesg for amdgpu errors"},
    {1052, "hipErrorRuntimeMemory", "the HSA runtime failed to allocate: check dmesg"},
    {1053, "hipErrorRuntimeOther", "the HSA runtime failed: check dmesg"},
};

const StatusInfo* find_status(unsigned code) {
    for (const auto& s : kStatus)
        if (s.code == code) return &s;
    return nullptr;
}

}  // namespace

std::span<const SymbolEntry<HipApi>> hip_symbol_table() { return kTable; }

std::vector<std::string> hip_candidates() {
    return {"libamdhip64.so.7", "libamdhip64.so.6", "libamdhip64.so.5", "libamdhip64.so",
            "/opt/rocm/lib/libamdhip64.so"};
}

std::string hip_status_name(unsigned code) {
    if (code == kHipNoAnswer) return "no answer from the driver";
    if (auto* s = find_status(code)) return s->name;
    return "hipError" + std::to_string(code);
}

std::string hip_advice(unsigned code) {
    if (code == kHipNoAnswer) return driver_no_answer_advice("HIP");
    if (auto* s = find_status(code)) return s->advice;
    return "check dmesg for amdgpu errors";
}

HipApi HipApi::from_library(const DynLib& lib, DriverLib* deadline) {
    HipApi api;
    api.path = lib.path();
    api.symbols = resolve_symbols<HipApi>(
        hip_symbol_table(), api, [&lib](const char* n) { return lib.symbol(n); }, deadline);
    if (!api.symbols.complete()) {
        std::string names;
        for (const auto& m : api.symbols.missing_required) names += (names.empty() ? "" : ", ") + m;
        api.error = "libamdhip64 at " + lib.path() + " lacks " + names;
    }
    return api;
}

HipApi HipApi::load() {
    DynLib lib = DynLib::open(kEnvLibHip, hip_candidates());
    if (!lib) {
        HipApi api;
        api.error = "libamdhip64.so could not be loaded: " + lib.error();
        return api;
    }
    return from_library(lib, &driver_lib("HIP", GpuFrom::CurrentCtx));  // the handle stays open (see DynLib)
}

HipApi HipApi::load_file(const std::string& file) {
    DynLib lib = DynLib::open("", {file});
    if (!lib) {
        HipApi api;
        api.error = file + " could not be loaded: " + lib.error();
        return api;
    }
    return from_library(lib);
}

std::string HipApi::error_name(unsigned code) const {
    if (code == kHipNoAnswer) return last_driver_no_answer();
    if (hipGetErrorName) {
        if (const char* s = hipGetErrorName(static_cast<hip::hipError_t>(code)); s && *s) return s;
    }
    return hip_status_name(code);
}

}  // namespace gpuvet
