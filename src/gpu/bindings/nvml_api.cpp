#include "gpu/bindings/nvml_api.hpp"

#include <array>

#include "core/text_safety.hpp"

namespace gpuvet {

namespace {

using A = NvmlApi;
constexpr Need R = Need::Required;
constexpr Need O = Need::Optional;

}  // namespace

// The index a handle is asked for names its GPU; the handle it hands out names it from then on.
template <>
struct DriverHooks<&NvmlApi::nvmlDeviceGetHandleByIndex> {
    static int gpu(DriverLib&, unsigned index, nvml::nvmlDevice_t*) { return static_cast<int>(index); }
    static void after(DriverLib& lib, int gpu, nvml::nvmlReturn_t rc, unsigned, nvml::nvmlDevice_t* out) {
        if (rc == nvml::NVML_SUCCESS && out) record_gpu_handle(lib, *out, gpu);
    }
};

// The arrays NVML writes, with the argument that says how many elements they take
// (driver_deadline.hpp: the job holds them, so an abandoned call never writes into its caller).
template <>
struct DriverArgs<&NvmlApi::nvmlDeviceGetRetiredPages> : ArrayArgs<2, 3> {};
template <>
struct DriverArgs<&NvmlApi::nvmlDeviceGetComputeRunningProcesses> : ArrayArgs<1, 2> {};
template <>
struct DriverArgs<&NvmlApi::nvmlDeviceGetComputeRunningProcesses_v1> : ArrayArgs<1, 2> {};
template <>
struct DriverArgs<&NvmlApi::nvmlDeviceGetGraphicsRunningProcesses> : ArrayArgs<1, 2> {};
template <>
struct DriverArgs<&NvmlApi::nvmlDeviceGetGraphicsRunningProcesses_v1> : ArrayArgs<1, 2> {};
template <>
struct DriverArgs<&NvmlApi::nvmlDeviceGetCpuAffinity> : ArrayArgs<1, 2> {};
template <>
struct DriverArgs<&NvmlApi::nvmlDeviceGetFieldValues> : ArrayArgs<1, 2> {};
template <>
struct DriverArgs<&NvmlApi::nvmlDeviceGetSamples> : ArrayArgs<4, 5> {};

namespace {

template <auto M>
constexpr void (*set)(NvmlApi&, void*, const char*, DriverLib*) = &assign_member<M, NvmlApi>;

// Newest name first. Only names with one and the same C signature share a row.
const SymbolEntry<NvmlApi> kTable[] = {
    {{"nvmlInit_v2", "nvmlInit"}, R, set<&A::nvmlInit>},
    {{"nvmlShutdown"}, R, set<&A::nvmlShutdown>},
    {{"nvmlDeviceGetCount_v2", "nvmlDeviceGetCount"}, R, set<&A::nvmlDeviceGetCount>},
    {{"nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex"}, R, set<&A::nvmlDeviceGetHandleByIndex>},
    {{"nvmlErrorString"}, O, set<&A::nvmlErrorString>},
    {{"nvmlSystemGetDriverVersion"}, O, set<&A::nvmlSystemGetDriverVersion>},
    {{"nvmlSystemGetNVMLVersion"}, O, set<&A::nvmlSystemGetNVMLVersion>},
    {{"nvmlSystemGetCudaDriverVersion_v2", "nvmlSystemGetCudaDriverVersion"},
     O,
     set<&A::nvmlSystemGetCudaDriverVersion>},
    {{"nvmlDeviceGetName"}, O, set<&A::nvmlDeviceGetName>},
    {{"nvmlDeviceGetUUID"}, O, set<&A::nvmlDeviceGetUUID>},
    {{"nvmlDeviceGetSerial"}, O, set<&A::nvmlDeviceGetSerial>},
    {{"nvmlDeviceGetVbiosVersion"}, O, set<&A::nvmlDeviceGetVbiosVersion>},
    {{"nvmlDeviceGetInforomImageVersion"}, O, set<&A::nvmlDeviceGetInforomImageVersion>},
    {{"nvmlDeviceGetBoardPartNumber"}, O, set<&A::nvmlDeviceGetBoardPartNumber>},
    // v1 of GetPciInfo filled a shorter struct, so it is not a fallback.
    {{"nvmlDeviceGetPciInfo_v3", "nvmlDeviceGetPciInfo_v2"}, O, set<&A::nvmlDeviceGetPciInfo>},
    {{"nvmlDeviceGetPciInfoExt"}, O, set<&A::nvmlDeviceGetPciInfoExt>},
    {{"nvmlDeviceGetMemoryInfo_v2"}, O, set<&A::nvmlDeviceGetMemoryInfo_v2>},
    {{"nvmlDeviceGetMemoryInfo"}, O, set<&A::nvmlDeviceGetMemoryInfo>},
    {{"nvmlDeviceGetEccMode"}, O, set<&A::nvmlDeviceGetEccMode>},
    {{"nvmlDeviceGetTotalEccErrors"}, O, set<&A::nvmlDeviceGetTotalEccErrors>},
    {{"nvmlDeviceGetRemappedRows"}, O, set<&A::nvmlDeviceGetRemappedRows>},
    {{"nvmlDeviceGetRetiredPages"}, O, set<&A::nvmlDeviceGetRetiredPages>},
    {{"nvmlDeviceGetRetiredPagesPendingStatus"}, O, set<&A::nvmlDeviceGetRetiredPagesPendingStatus>},
    {{"nvmlDeviceGetCurrPcieLinkGeneration"}, O, set<&A::nvmlDeviceGetCurrPcieLinkGeneration>},
    {{"nvmlDeviceGetMaxPcieLinkGeneration"}, O, set<&A::nvmlDeviceGetMaxPcieLinkGeneration>},
    {{"nvmlDeviceGetGpuMaxPcieLinkGeneration"}, O, set<&A::nvmlDeviceGetGpuMaxPcieLinkGeneration>},
    {{"nvmlDeviceGetCurrPcieLinkWidth"}, O, set<&A::nvmlDeviceGetCurrPcieLinkWidth>},
    {{"nvmlDeviceGetMaxPcieLinkWidth"}, O, set<&A::nvmlDeviceGetMaxPcieLinkWidth>},
    {{"nvmlDeviceGetPcieReplayCounter"}, O, set<&A::nvmlDeviceGetPcieReplayCounter>},
    {{"nvmlDeviceGetPcieThroughput"}, O, set<&A::nvmlDeviceGetPcieThroughput>},
    {{"nvmlDeviceGetNvLinkState"}, O, set<&A::nvmlDeviceGetNvLinkState>},
    {{"nvmlDeviceGetNvLinkRemotePciInfo_v2"}, O, set<&A::nvmlDeviceGetNvLinkRemotePciInfo>},
    {{"nvmlDeviceGetNvLinkVersion"}, O, set<&A::nvmlDeviceGetNvLinkVersion>},
    {{"nvmlDeviceGetNvLinkRemoteDeviceType"}, O, set<&A::nvmlDeviceGetNvLinkRemoteDeviceType>},
    {{"nvmlDeviceGetPersistenceMode"}, O, set<&A::nvmlDeviceGetPersistenceMode>},
    {{"nvmlDeviceGetComputeMode"}, O, set<&A::nvmlDeviceGetComputeMode>},
    {{"nvmlDeviceGetMigMode"}, O, set<&A::nvmlDeviceGetMigMode>},
    {{"nvmlDeviceGetVirtualizationMode"}, O, set<&A::nvmlDeviceGetVirtualizationMode>},
    {{"nvmlDeviceGetPowerUsage"}, O, set<&A::nvmlDeviceGetPowerUsage>},
    {{"nvmlDeviceGetPowerManagementLimit"}, O, set<&A::nvmlDeviceGetPowerManagementLimit>},
    {{"nvmlDeviceGetPowerManagementDefaultLimit"}, O, set<&A::nvmlDeviceGetPowerManagementDefaultLimit>},
    {{"nvmlDeviceGetPowerManagementLimitConstraints"}, O, set<&A::nvmlDeviceGetPowerManagementLimitConstraints>},
    {{"nvmlDeviceGetEnforcedPowerLimit"}, O, set<&A::nvmlDeviceGetEnforcedPowerLimit>},
    {{"nvmlDeviceGetClockInfo"}, O, set<&A::nvmlDeviceGetClockInfo>},
    {{"nvmlDeviceGetMaxClockInfo"}, O, set<&A::nvmlDeviceGetMaxClockInfo>},
    {{"nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons"},
     O,
     set<&A::nvmlDeviceGetCurrentClocksEventReasons>},
    {{"nvmlDeviceGetTemperature"}, O, set<&A::nvmlDeviceGetTemperature>},
    {{"nvmlDeviceGetTemperatureThreshold"}, O, set<&A::nvmlDeviceGetTemperatureThreshold>},
    {{"nvmlDeviceGetFanSpeed"}, O, set<&A::nvmlDeviceGetFanSpeed>},
    {{"nvmlDeviceGetUtilizationRates"}, O, set<&A::nvmlDeviceGetUtilizationRates>},
    {{"nvmlDeviceGetComputeRunningProcesses_v3", "nvmlDeviceGetComputeRunningProcesses_v2"},
     O,
     set<&A::nvmlDeviceGetComputeRunningProcesses>},
    {{"nvmlDeviceGetComputeRunningProcesses"}, O, set<&A::nvmlDeviceGetComputeRunningProcesses_v1>},
    {{"nvmlDeviceGetGraphicsRunningProcesses_v3", "nvmlDeviceGetGraphicsRunningProcesses_v2"},
     O,
     set<&A::nvmlDeviceGetGraphicsRunningProcesses>},
    {{"nvmlDeviceGetGraphicsRunningProcesses"}, O, set<&A::nvmlDeviceGetGraphicsRunningProcesses_v1>},
    {{"nvmlDeviceGetNumaNodeId"}, O, set<&A::nvmlDeviceGetNumaNodeId>},
    {{"nvmlDeviceGetCpuAffinity"}, O, set<&A::nvmlDeviceGetCpuAffinity>},
    {{"nvmlDeviceGetTopologyCommonAncestor"}, O, set<&A::nvmlDeviceGetTopologyCommonAncestor>},
    {{"nvmlDeviceGetArchitecture"}, O, set<&A::nvmlDeviceGetArchitecture>},
    {{"nvmlDeviceGetCudaComputeCapability"}, O, set<&A::nvmlDeviceGetCudaComputeCapability>},
    {{"nvmlDeviceGetFieldValues"}, O, set<&A::nvmlDeviceGetFieldValues>},
    {{"nvmlDeviceGetSamples"}, O, set<&A::nvmlDeviceGetSamples>},
    {{"nvmlDeviceGetTotalEnergyConsumption"}, O, set<&A::nvmlDeviceGetTotalEnergyConsumption>},
    {{"nvmlDeviceGetViolationStatus"}, O, set<&A::nvmlDeviceGetViolationStatus>},
    {{"nvmlEventSetCreate"}, O, set<&A::nvmlEventSetCreate>},
    {{"nvmlDeviceRegisterEvents"}, O, set<&A::nvmlDeviceRegisterEvents>},
    {{"nvmlEventSetWait_v2", "nvmlEventSetWait"}, O, set<&A::nvmlEventSetWait>},
    {{"nvmlEventSetFree"}, O, set<&A::nvmlEventSetFree>},
    {{"nvmlGpmQueryDeviceSupport"}, O, set<&A::nvmlGpmQueryDeviceSupport>},
    {{"nvmlGpmSampleAlloc"}, O, set<&A::nvmlGpmSampleAlloc>},
    {{"nvmlGpmSampleFree"}, O, set<&A::nvmlGpmSampleFree>},
    {{"nvmlGpmSampleGet"}, O, set<&A::nvmlGpmSampleGet>},
    {{"nvmlGpmMetricsGet"}, O, set<&A::nvmlGpmMetricsGet>},
};

struct StatusInfo {
    int code;
    const char* name;
    const char* reason;  // short, for an absent fact
    const char* advice;  // what to do
};

// Values from nvml.h (nvmlReturn_t); the advice is ours.
const StatusInfo kStatus[] = {
    {0, "NVML_SUCCESS", "success", ""},
    {1, "NVML_ERROR_UNINITIALIZED", "NVML not initialised", "this is a gpuvet bug: please report it"},
    {2, "NVML_ERROR_INVALID_ARGUMENT", "invalid argument", "this is a gpuvet bug: please report it"},
    {3, "NVML_ERROR_NOT_SUPPORTED", "not supported by this GPU or driver",
     "nothing to do: this GPU or driver does not offer it"},
    {4, "NVML_ERROR_NO_PERMISSION", "no permission", "no permission: run as root or add the user to the video group"},
    {5, "NVML_ERROR_ALREADY_INITIALIZED", "already initialised", ""},
    {6, "NVML_ERROR_NOT_FOUND", "not found", "the GPU or object is not present; check nvidia-smi"},
    {7, "NVML_ERROR_INSUFFICIENT_SIZE", "buffer too small", "this is a gpuvet bug: please report it"},
    {8, "NVML_ERROR_INSUFFICIENT_POWER", "insufficient power",
     "a power cable is not connected properly: check the GPU's auxiliary power connectors"},
    {9, "NVML_ERROR_DRIVER_NOT_LOADED", "driver not loaded",
     "driver not loaded: load the nvidia kernel module or reboot"},
    {10, "NVML_ERROR_TIMEOUT", "timed out",
     "the driver did not answer in time: retry, then check dmesg for Xid errors"},
    {11, "NVML_ERROR_IRQ_ISSUE", "interrupt problem",
     "the GPU's interrupts are not delivered: check dmesg and the kernel's IOMMU/MSI settings"},
    {12, "NVML_ERROR_LIBRARY_NOT_FOUND", "library not found",
     "install the NVIDIA driver's NVML library (libnvidia-ml.so.1)"},
    {13, "NVML_ERROR_FUNCTION_NOT_FOUND", "driver lacks this function", "update the NVIDIA driver"},
    {14, "NVML_ERROR_CORRUPTED_INFOROM", "corrupted infoROM",
     "the GPU's infoROM is corrupted: ask the provider to reflash or replace the GPU"},
    {15, "NVML_ERROR_GPU_IS_LOST", "GPU is lost", "GPU has fallen off the bus: reset or reboot, check Xid 79 in dmesg"},
    {16, "NVML_ERROR_RESET_REQUIRED", "GPU needs a reset",
     "reset required: run nvidia-smi -r on the idle GPU or reboot"},
    {17, "NVML_ERROR_OPERATING_SYSTEM", "blocked by the operating system",
     "the operating system refused the call: check dmesg"},
    {18, "NVML_ERROR_LIB_RM_VERSION_MISMATCH", "library and kernel module versions differ",
     "the driver was updated without a reboot: reboot, or reload the nvidia kernel modules"},
    {19, "NVML_ERROR_IN_USE", "in use", "the GPU is busy: stop the processes using it"},
    {20, "NVML_ERROR_MEMORY", "out of memory", "free host memory and retry"},
    {21, "NVML_ERROR_NO_DATA", "no data", "no data yet: retry later"},
    {22, "NVML_ERROR_VGPU_ECC_NOT_SUPPORTED", "ECC not supported on this vGPU", "nothing to do: vGPU without ECC"},
    {23, "NVML_ERROR_INSUFFICIENT_RESOURCES", "insufficient resources", "free GPU resources and retry"},
    {24, "NVML_ERROR_FREQ_NOT_SUPPORTED", "frequency not supported", ""},
    {25, "NVML_ERROR_ARGUMENT_VERSION_MISMATCH", "struct version not understood by this driver",
     "update the NVIDIA driver"},
    {26, "NVML_ERROR_DEPRECATED", "deprecated by this driver", "update gpuvet"},
    {27, "NVML_ERROR_NOT_READY", "not ready", "the GPU is still initialising: retry in a minute"},
    {28, "NVML_ERROR_GPU_NOT_FOUND", "GPU not found", "the GPU disappeared: check lspci and dmesg"},
    {29, "NVML_ERROR_INVALID_STATE", "invalid state", "the GPU is in an unexpected state: reset or reboot"},
    {30, "NVML_ERROR_RESET_TYPE_NOT_SUPPORTED", "reset type not supported", ""},
    {999, "NVML_ERROR_UNKNOWN", "unknown error", "check dmesg for Xid errors and nvidia-smi for the GPU's state"},
};

const StatusInfo* find_status(int code) {
    for (const auto& s : kStatus)
        if (s.code == code) return &s;
    return nullptr;
}

}  // namespace

std::span<const SymbolEntry<NvmlApi>> nvml_symbol_table() { return kTable; }

std::string nvml_status_name(int code) {
    if (code == kNvmlNoAnswer) return "no answer from the driver";
    if (auto* s = find_status(code)) return s->name;
    return "NVML_ERROR_" + std::to_string(code);
}

std::string nvml_advice(int code) {
    if (code == kNvmlNoAnswer) return driver_no_answer_advice("NVML");
    if (auto* s = find_status(code)) return s->advice;
    return "check dmesg for Xid errors and nvidia-smi for the GPU's state";
}

std::string nvml_absent_reason(int code) {
    if (code == kNvmlNoAnswer) return last_driver_no_answer();
    auto* s = find_status(code);
    if (!s) return "NVML error " + std::to_string(code);
    switch (code) {
        case 3: return s->reason;  // plain: nothing is wrong
        case 4:
        case 9:
        case 15:
        case 16:
        case 18:  // the advice already says what happened
            return s->advice;
        default: return std::string(s->reason) + " (" + s->name + ")";
    }
}

NvmlApi NvmlApi::from_library(const DynLib& lib, DriverLib* deadline) {
    NvmlApi api;
    api.path = lib.path();
    api.symbols = resolve_symbols<NvmlApi>(
        nvml_symbol_table(), api, [&lib](const char* n) { return lib.symbol(n); }, deadline);
    if (!api.symbols.complete()) {
        std::string names;
        for (const auto& m : api.symbols.missing_required) names += (names.empty() ? "" : ", ") + m;
        api.error = "libnvidia-ml at " + lib.path() + " lacks " + names;
    }
    return api;
}

NvmlApi NvmlApi::load() {
    DynLib lib = DynLib::open(kEnvLibNvml, {"libnvidia-ml.so.1", "libnvidia-ml.so"});
    if (!lib) {
        NvmlApi api;
        api.error = "libnvidia-ml.so.1 could not be loaded: " + lib.error();
        return api;
    }
    return from_library(lib, &nvml_driver_lib());  // the handle stays open for the process (see DynLib)
}

NvmlApi NvmlApi::load_file(const std::string& file) {
    DynLib lib = DynLib::open("", {file});
    if (!lib) {
        NvmlApi api;
        api.error = file + " could not be loaded: " + lib.error();
        return api;
    }
    return from_library(lib);
}

std::string NvmlApi::error_name(int code) const {
    if (code == kNvmlNoAnswer) return last_driver_no_answer();
    if (nvmlErrorString) {
        if (const char* s = nvmlErrorString(static_cast<nvml::nvmlReturn_t>(code)); s && *s) return visible_text(s);
    }
    return nvml_status_name(code);
}

NvmlError::NvmlError(std::string call, int code, std::string name)
    : Error(ErrorKind::Driver, call + " failed: " + name + " (NVML status " + std::to_string(code) + ")",
            nvml_advice(code)),
      call_(std::move(call)),
      code_(code),
      name_(std::move(name)) {}

}  // namespace gpuvet
