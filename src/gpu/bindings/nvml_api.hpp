// NVML (libnvidia-ml.so.1), loaded at run time. Our own declarations of the types, constants and
// function signatures gpuvet uses, so no vendor header is needed to build; tests/abi proves them
// equal to NVIDIA's nvml.h. Names follow nvml.h inside namespace gpuvet::nvml; constants that
// nvml.h spells as macros get a k-prefixed name so both headers can share one translation unit.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "gpu/bindings/dynlib.hpp"
#include "gpu/bindings/symbol_table.hpp"

// Opaque handles: declared at global scope so they are the very types nvml.h names.
struct nvmlDevice_st;
struct nvmlEventSet_st;
struct nvmlGpmSample_st;

namespace gpuvet::nvml {

using nvmlDevice_t = ::nvmlDevice_st*;
using nvmlEventSet_t = ::nvmlEventSet_st*;
using nvmlGpmSample_t = ::nvmlGpmSample_st*;

enum nvmlReturn_t {
    NVML_SUCCESS = 0,
    NVML_ERROR_UNINITIALIZED = 1,
    NVML_ERROR_INVALID_ARGUMENT = 2,
    NVML_ERROR_NOT_SUPPORTED = 3,
    NVML_ERROR_NO_PERMISSION = 4,
    NVML_ERROR_ALREADY_INITIALIZED = 5,
    NVML_ERROR_NOT_FOUND = 6,
    NVML_ERROR_INSUFFICIENT_SIZE = 7,
    NVML_ERROR_INSUFFICIENT_POWER = 8,
    NVML_ERROR_DRIVER_NOT_LOADED = 9,
    NVML_ERROR_TIMEOUT = 10,
    NVML_ERROR_IRQ_ISSUE = 11,
    NVML_ERROR_LIBRARY_NOT_FOUND = 12,
    NVML_ERROR_FUNCTION_NOT_FOUND = 13,
    NVML_ERROR_CORRUPTED_INFOROM = 14,
    NVML_ERROR_GPU_IS_LOST = 15,
    NVML_ERROR_RESET_REQUIRED = 16,
    NVML_ERROR_OPERATING_SYSTEM = 17,
    NVML_ERROR_LIB_RM_VERSION_MISMATCH = 18,
    NVML_ERROR_IN_USE = 19,
    NVML_ERROR_MEMORY = 20,
    NVML_ERROR_NO_DATA = 21,
    NVML_ERROR_VGPU_ECC_NOT_SUPPORTED = 22,
    NVML_ERROR_INSUFFICIENT_RESOURCES = 23,
    NVML_ERROR_FREQ_NOT_SUPPORTED = 24,
    NVML_ERROR_ARGUMENT_VERSION_MISMATCH = 25,
    NVML_ERROR_DEPRECATED = 26,
    NVML_ERROR_NOT_READY = 27,
    NVML_ERROR_GPU_NOT_FOUND = 28,
    NVML_ERROR_INVALID_STATE = 29,
    NVML_ERROR_RESET_TYPE_NOT_SUPPORTED = 30,
    NVML_ERROR_UNKNOWN = 999
};

}  // namespace gpuvet::nvml

namespace gpuvet {
// A wrapped NVML call that got no answer (driver_deadline.hpp): no NVML status, inside the enum's range.
inline constexpr int kNvmlNoAnswer = 1000;
template <>
struct NoAnswer<nvml::nvmlReturn_t> {
    static nvml::nvmlReturn_t value() { return static_cast<nvml::nvmlReturn_t>(kNvmlNoAnswer); }
};
}  // namespace gpuvet

namespace gpuvet::nvml {

enum nvmlEnableState_t { NVML_FEATURE_DISABLED = 0, NVML_FEATURE_ENABLED = 1 };
enum nvmlMemoryErrorType_t { NVML_MEMORY_ERROR_TYPE_CORRECTED = 0, NVML_MEMORY_ERROR_TYPE_UNCORRECTED = 1 };
enum nvmlEccCounterType_t { NVML_VOLATILE_ECC = 0, NVML_AGGREGATE_ECC = 1 };
enum nvmlPageRetirementCause_t {
    NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS = 0,
    NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR = 1
};
enum nvmlComputeMode_t {
    NVML_COMPUTEMODE_DEFAULT = 0,
    NVML_COMPUTEMODE_EXCLUSIVE_THREAD = 1,
    NVML_COMPUTEMODE_PROHIBITED = 2,
    NVML_COMPUTEMODE_EXCLUSIVE_PROCESS = 3
};
enum nvmlGpuVirtualizationMode_t {
    NVML_GPU_VIRTUALIZATION_MODE_NONE = 0,
    NVML_GPU_VIRTUALIZATION_MODE_PASSTHROUGH = 1,
    NVML_GPU_VIRTUALIZATION_MODE_VGPU = 2,
    NVML_GPU_VIRTUALIZATION_MODE_HOST_VGPU = 3,
    NVML_GPU_VIRTUALIZATION_MODE_HOST_VSGA = 4
};
enum nvmlClockType_t { NVML_CLOCK_GRAPHICS = 0, NVML_CLOCK_SM = 1, NVML_CLOCK_MEM = 2, NVML_CLOCK_VIDEO = 3 };
enum nvmlTemperatureSensors_t { NVML_TEMPERATURE_GPU = 0 };
// What nvmlDeviceGetSamples reads from the driver's sample buffer.
enum nvmlSamplingType_t {
    NVML_TOTAL_POWER_SAMPLES = 0,
    NVML_GPU_UTILIZATION_SAMPLES = 1,
    NVML_MEMORY_UTILIZATION_SAMPLES = 2,
    NVML_ENC_UTILIZATION_SAMPLES = 3,
    NVML_DEC_UTILIZATION_SAMPLES = 4,
    NVML_PROCESSOR_CLK_SAMPLES = 5,
    NVML_MEMORY_CLK_SAMPLES = 6,
    NVML_MODULE_POWER_SAMPLES = 7,
    NVML_JPG_UTILIZATION_SAMPLES = 8,
    NVML_OFA_UTILIZATION_SAMPLES = 9,
    NVML_SAMPLINGTYPE_COUNT
};
// Which limiter a violation-time counter (nvmlDeviceGetViolationStatus) counts.
enum nvmlPerfPolicyType_t {
    NVML_PERF_POLICY_POWER = 0,
    NVML_PERF_POLICY_THERMAL = 1,
    NVML_PERF_POLICY_SYNC_BOOST = 2,
    NVML_PERF_POLICY_BOARD_LIMIT = 3,
    NVML_PERF_POLICY_LOW_UTILIZATION = 4,
    NVML_PERF_POLICY_RELIABILITY = 5,
    NVML_PERF_POLICY_TOTAL_APP_CLOCKS = 10,
    NVML_PERF_POLICY_TOTAL_BASE_CLOCKS = 11,
    NVML_PERF_POLICY_COUNT
};
enum nvmlPcieUtilCounter_t { NVML_PCIE_UTIL_TX_BYTES = 0, NVML_PCIE_UTIL_RX_BYTES = 1 };
enum nvmlTemperatureThresholds_t {
    NVML_TEMPERATURE_THRESHOLD_SHUTDOWN = 0,
    NVML_TEMPERATURE_THRESHOLD_SLOWDOWN = 1,
    NVML_TEMPERATURE_THRESHOLD_MEM_MAX = 2,
    NVML_TEMPERATURE_THRESHOLD_GPU_MAX = 3
};
// What sits at the far end of an NVLink: another GPU, or an NVSwitch (HGX boards).
enum nvmlIntNvLinkDeviceType_t {
    NVML_NVLINK_DEVICE_TYPE_GPU = 0x00,
    NVML_NVLINK_DEVICE_TYPE_IBMNPU = 0x01,
    NVML_NVLINK_DEVICE_TYPE_SWITCH = 0x02,
    NVML_NVLINK_DEVICE_TYPE_UNKNOWN = 0xFF,
};

enum nvmlGpuTopologyLevel_t {
    NVML_TOPOLOGY_INTERNAL = 0,
    NVML_TOPOLOGY_SINGLE = 10,
    NVML_TOPOLOGY_MULTIPLE = 20,
    NVML_TOPOLOGY_HOSTBRIDGE = 30,
    NVML_TOPOLOGY_NODE = 40,
    NVML_TOPOLOGY_SYSTEM = 50
};
using nvmlDeviceArchitecture_t = unsigned int;

// Field values (nvmlDeviceGetFieldValues): each entry carries its own status and says which
// member of the value union it filled.
enum nvmlValueType_t {
    NVML_VALUE_TYPE_DOUBLE = 0,
    NVML_VALUE_TYPE_UNSIGNED_INT = 1,
    NVML_VALUE_TYPE_UNSIGNED_LONG = 2,
    NVML_VALUE_TYPE_UNSIGNED_LONG_LONG = 3,
    NVML_VALUE_TYPE_SIGNED_LONG_LONG = 4,
    NVML_VALUE_TYPE_SIGNED_INT = 5,
    NVML_VALUE_TYPE_UNSIGNED_SHORT = 6,
    NVML_VALUE_TYPE_COUNT
};
union nvmlValue_t {
    double dVal;
    int siVal;
    unsigned int uiVal;
    unsigned long ulVal;
    unsigned long long ullVal;
    signed long long sllVal;
    unsigned short usVal;
};
struct nvmlFieldValue_t {
    unsigned int fieldId;  // set by the caller
    unsigned int scopeId;  // e.g. the NVLink for per-link fields; 0 otherwise
    long long timestamp;   // microseconds since 1970
    long long latencyUsec;
    nvmlValueType_t valueType;
    nvmlReturn_t nvmlReturn;  // this entry's status: value is undefined unless NVML_SUCCESS
    nvmlValue_t value;
};
// One entry of the driver's sample buffer: the CPU time in microseconds the driver took it at and
// the value, whose union member nvmlDeviceGetSamples names in its sampleValType output.
struct nvmlSample_t {
    unsigned long long timeStamp;
    nvmlValue_t sampleValue;
};
// A violation-time counter: nanoseconds the limiter held the clocks down, read at referenceTime
// (CPU microseconds).
struct nvmlViolationTime_t {
    unsigned long long referenceTime;
    unsigned long long violationTime;
};
// Field ids (NVML_FI_* macros in nvml.h).
inline constexpr unsigned kFiDevMemoryTemp = 82;               // memory (HBM) temperature, degrees C
inline constexpr unsigned kFiDevNvLinkThroughputDataTx = 138;  // KiB sent, cumulative
inline constexpr unsigned kFiDevNvLinkThroughputDataRx = 139;  // KiB received, cumulative
inline constexpr unsigned kFieldScopeAllLinks = 0xffffffffu;   // scopeId: summed over all links

// Buffer sizes and architecture ids (macros in nvml.h).
inline constexpr unsigned kPciBusIdBufferSize = 32;
inline constexpr unsigned kPciBusIdBufferV2Size = 16;
inline constexpr unsigned kDeviceNameV2BufferSize = 96;
inline constexpr unsigned kDeviceUuidV2BufferSize = 96;
inline constexpr unsigned kDeviceSerialBufferSize = 30;
inline constexpr unsigned kDeviceVbiosVersionBufferSize = 32;
inline constexpr unsigned kDeviceInforomVersionBufferSize = 16;
inline constexpr unsigned kSystemDriverVersionBufferSize = 80;
inline constexpr unsigned kSystemNvmlVersionBufferSize = 80;
inline constexpr unsigned kNvLinkMaxLinks = 36;  // newest header; we loop until a call fails anyway
inline constexpr unsigned kDeviceArchKepler = 2, kDeviceArchMaxwell = 3, kDeviceArchPascal = 4, kDeviceArchVolta = 5,
                          kDeviceArchTuring = 6, kDeviceArchAmpere = 7, kDeviceArchAda = 8, kDeviceArchHopper = 9,
                          kDeviceArchBlackwell = 10, kDeviceArchUnknown = 0xffffffffu;

// Clock event (formerly "throttle") reason bits.
inline constexpr unsigned long long kClocksEventReasonGpuIdle = 0x1ULL;
inline constexpr unsigned long long kClocksEventReasonApplicationsClocksSetting = 0x2ULL;
inline constexpr unsigned long long kClocksEventReasonSwPowerCap = 0x4ULL;
inline constexpr unsigned long long kClocksEventReasonHwSlowdown = 0x8ULL;
inline constexpr unsigned long long kClocksEventReasonSyncBoost = 0x10ULL;
inline constexpr unsigned long long kClocksEventReasonSwThermalSlowdown = 0x20ULL;
inline constexpr unsigned long long kClocksEventReasonHwThermalSlowdown = 0x40ULL;
inline constexpr unsigned long long kClocksEventReasonHwPowerBrakeSlowdown = 0x80ULL;
inline constexpr unsigned long long kClocksEventReasonDisplayClockSetting = 0x100ULL;
inline constexpr unsigned long long kClocksEventReasonBoardLimit = 0x200ULL;
inline constexpr unsigned long long kClocksEventReasonReliability = 0x400ULL;

// Event types for the event-set calls.
inline constexpr unsigned long long kEventTypeSingleBitEccError = 0x1ULL;
inline constexpr unsigned long long kEventTypeDoubleBitEccError = 0x2ULL;
inline constexpr unsigned long long kEventTypePState = 0x4ULL;
inline constexpr unsigned long long kEventTypeXidCriticalError = 0x8ULL;
inline constexpr unsigned long long kEventTypeClock = 0x10ULL;

struct nvmlPciInfo_t {
    char busIdLegacy[kPciBusIdBufferV2Size];
    unsigned int domain;
    unsigned int bus;
    unsigned int device;
    unsigned int pciDeviceId;  // device id << 16 | vendor id
    unsigned int pciSubSystemId;
    char busId[kPciBusIdBufferSize];
};

struct nvmlPciInfoExt_v1_t {
    unsigned int version;
    unsigned int domain;
    unsigned int bus;
    unsigned int device;
    unsigned int pciDeviceId;
    unsigned int pciSubSystemId;
    unsigned int baseClass;
    unsigned int subClass;
    char busId[kPciBusIdBufferSize];
};

struct nvmlMemory_t {
    unsigned long long total;
    unsigned long long free;
    unsigned long long used;
};

struct nvmlMemory_v2_t {
    unsigned int version;
    unsigned long long total;
    unsigned long long reserved;
    unsigned long long free;
    unsigned long long used;
};

struct nvmlProcessInfo_v1_t {
    unsigned int pid;
    unsigned long long usedGpuMemory;
};

struct nvmlProcessInfo_v2_t {
    unsigned int pid;
    unsigned long long usedGpuMemory;
    unsigned int gpuInstanceId;
    unsigned int computeInstanceId;
};

struct nvmlUtilization_t {
    unsigned int gpu;
    unsigned int memory;
};

struct nvmlEventData_t {
    nvmlDevice_t device;
    unsigned long long eventType;
    unsigned long long eventData;
    unsigned int gpuInstanceId;
    unsigned int computeInstanceId;
};

// GPU performance metrics (GPM, Hopper and newer). nvml.h sizes nvmlGpmMetricsGet_t's array by
// NVML_GPM_METRIC_MAX, which grew 98 -> 210 -> 333 -> 477 while NVML_GPM_METRICS_GET_VERSION stayed 1,
// so a library may read or write its own MAX entries whatever the caller was built with. gpuvet
// passes a zeroed array larger than any header so far (kGpmMetricsBufferEntries) and names only the
// metrics it wants in numMetrics.
struct nvmlGpmMetric_t {
    unsigned int metricId;    // IN: which metric
    nvmlReturn_t nvmlReturn;  // OUT: this metric's status; value is valid only on NVML_SUCCESS
    double value;             // OUT
    struct {
        char* shortName;
        char* longName;
        char* unit;
    } metricInfo;  // OUT: may be null
};
inline constexpr unsigned kGpmMetricsBufferEntries = 1024;
struct nvmlGpmMetricsGet_t {
    unsigned int version;     // IN: kGpmMetricsGetVersion
    unsigned int numMetrics;  // IN: how many of metrics[] to fill
    nvmlGpmSample_t sample1;  // IN: the earlier sample
    nvmlGpmSample_t sample2;  // IN: the later sample
    nvmlGpmMetric_t metrics[kGpmMetricsBufferEntries];
};
struct nvmlGpmSupport_t {
    unsigned int version;            // IN: kGpmSupportVersion
    unsigned int isSupportedDevice;  // OUT: non-zero when the device has GPM
};
// Both are the raw integer 1, not NVML_STRUCT_VERSION(...) (go-nvml got the support one wrong).
inline constexpr unsigned kGpmMetricsGetVersion = 1;
inline constexpr unsigned kGpmSupportVersion = 1;
// Metric ids (NVML_GPM_METRIC_*), each a percentage 0-100 over the interval of two samples.
inline constexpr unsigned kGpmMetricSmUtil = 2;         // SMs busy
inline constexpr unsigned kGpmMetricSmOccupancy = 3;    // warps resident vs the theoretical maximum
inline constexpr unsigned kGpmMetricAnyTensorUtil = 5;  // SMs doing any tensor operation
inline constexpr unsigned kGpmMetricDramBwUtil = 10;    // DRAM bandwidth used vs the theoretical maximum
// nvmlDeviceGetMigMode's "enabled" value.
inline constexpr unsigned kDeviceMigEnable = 1;

// NVML_STRUCT_VERSION(data, ver) = sizeof(struct) | ver << 24.
inline constexpr unsigned kPciInfoExt_v1 = unsigned(sizeof(nvmlPciInfoExt_v1_t)) | (1u << 24);
inline constexpr unsigned kMemory_v2 = unsigned(sizeof(nvmlMemory_v2_t)) | (2u << 24);

// NVML is unusable without these.
using nvmlInit_fn = nvmlReturn_t (*)();
using nvmlShutdown_fn = nvmlReturn_t (*)();
using nvmlDeviceGetCount_fn = nvmlReturn_t (*)(unsigned int*);
using nvmlDeviceGetHandleByIndex_fn = nvmlReturn_t (*)(unsigned int, nvmlDevice_t*);
// Everything else is optional: a missing symbol makes only its facts absent.
using nvmlErrorString_fn = const char* (*)(nvmlReturn_t);
using nvmlSystemGetString_fn = nvmlReturn_t (*)(char*, unsigned int);
using nvmlSystemGetCudaDriverVersion_fn = nvmlReturn_t (*)(int*);
using nvmlDeviceGetString_fn = nvmlReturn_t (*)(nvmlDevice_t, char*, unsigned int);
using nvmlDeviceGetPciInfo_fn = nvmlReturn_t (*)(nvmlDevice_t, nvmlPciInfo_t*);
using nvmlDeviceGetPciInfoExt_fn = nvmlReturn_t (*)(nvmlDevice_t, nvmlPciInfoExt_v1_t*);
using nvmlDeviceGetMemoryInfo_v2_fn = nvmlReturn_t (*)(nvmlDevice_t, nvmlMemory_v2_t*);
using nvmlDeviceGetMemoryInfo_fn = nvmlReturn_t (*)(nvmlDevice_t, nvmlMemory_t*);
using nvmlDeviceGetEccMode_fn = nvmlReturn_t (*)(nvmlDevice_t, nvmlEnableState_t*, nvmlEnableState_t*);
using nvmlDeviceGetTotalEccErrors_fn = nvmlReturn_t (*)(nvmlDevice_t, nvmlMemoryErrorType_t, nvmlEccCounterType_t,
                                                        unsigned long long*);
using nvmlDeviceGetRemappedRows_fn = nvmlReturn_t (*)(nvmlDevice_t, unsigned int*, unsigned int*, unsigned int*,
                                                      unsigned int*);
using nvmlDeviceGetRetiredPages_fn = nvmlReturn_t (*)(nvmlDevice_t, nvmlPageRetirementCause_t, unsigned int*,
                                                      unsigned long long*);
using nvmlDeviceGetEnableState_fn = nvmlReturn_t (*)(nvmlDevice_t, nvmlEnableState_t*);
using nvmlDeviceGetUInt_fn = nvmlReturn_t (*)(nvmlDevice_t, unsigned int*);
using nvmlDeviceGetUIntPair_fn = nvmlReturn_t (*)(nvmlDevice_t, unsigned int*, unsigned int*);
using nvmlDeviceGetNvLinkState_fn = nvmlReturn_t (*)(nvmlDevice_t, unsigned int, nvmlEnableState_t*);
using nvmlDeviceGetNvLinkRemotePciInfo_fn = nvmlReturn_t (*)(nvmlDevice_t, unsigned int, nvmlPciInfo_t*);
using nvmlDeviceGetNvLinkVersion_fn = nvmlReturn_t (*)(nvmlDevice_t, unsigned int, unsigned int*);
using nvmlDeviceGetNvLinkRemoteDeviceType_fn = nvmlReturn_t (*)(nvmlDevice_t, unsigned int, nvmlIntNvLinkDeviceType_t*);
using nvmlDeviceGetComputeMode_fn = nvmlReturn_t (*)(nvmlDevice_t, nvmlComputeMode_t*);
using nvmlDeviceGetVirtualizationMode_fn = nvmlReturn_t (*)(nvmlDevice_t, nvmlGpuVirtualizationMode_t*);
using nvmlDeviceGetClockInfo_fn = nvmlReturn_t (*)(nvmlDevice_t, nvmlClockType_t, unsigned int*);
using nvmlDeviceGetClocksEventReasons_fn = nvmlReturn_t (*)(nvmlDevice_t, unsigned long long*);
using nvmlDeviceGetTemperature_fn = nvmlReturn_t (*)(nvmlDevice_t, nvmlTemperatureSensors_t, unsigned int*);
using nvmlDeviceGetTemperatureThreshold_fn = nvmlReturn_t (*)(nvmlDevice_t, nvmlTemperatureThresholds_t, unsigned int*);
using nvmlDeviceGetPcieThroughput_fn = nvmlReturn_t (*)(nvmlDevice_t, nvmlPcieUtilCounter_t, unsigned int*);
using nvmlDeviceGetUtilizationRates_fn = nvmlReturn_t (*)(nvmlDevice_t, nvmlUtilization_t*);
using nvmlDeviceGetRunningProcesses_fn = nvmlReturn_t (*)(nvmlDevice_t, unsigned int*, nvmlProcessInfo_v2_t*);
using nvmlDeviceGetRunningProcesses_v1_fn = nvmlReturn_t (*)(nvmlDevice_t, unsigned int*, nvmlProcessInfo_v1_t*);
using nvmlDeviceGetCpuAffinity_fn = nvmlReturn_t (*)(nvmlDevice_t, unsigned int, unsigned long*);
using nvmlDeviceGetTopologyCommonAncestor_fn = nvmlReturn_t (*)(nvmlDevice_t, nvmlDevice_t, nvmlGpuTopologyLevel_t*);
using nvmlDeviceGetArchitecture_fn = nvmlReturn_t (*)(nvmlDevice_t, nvmlDeviceArchitecture_t*);
using nvmlDeviceGetCudaComputeCapability_fn = nvmlReturn_t (*)(nvmlDevice_t, int*, int*);
using nvmlDeviceGetFieldValues_fn = nvmlReturn_t (*)(nvmlDevice_t, int, nvmlFieldValue_t*);
using nvmlDeviceGetSamples_fn = nvmlReturn_t (*)(nvmlDevice_t, nvmlSamplingType_t, unsigned long long, nvmlValueType_t*,
                                                 unsigned int*, nvmlSample_t*);
using nvmlDeviceGetTotalEnergyConsumption_fn = nvmlReturn_t (*)(nvmlDevice_t, unsigned long long*);
using nvmlDeviceGetViolationStatus_fn = nvmlReturn_t (*)(nvmlDevice_t, nvmlPerfPolicyType_t, nvmlViolationTime_t*);
using nvmlEventSetCreate_fn = nvmlReturn_t (*)(nvmlEventSet_t*);
using nvmlDeviceRegisterEvents_fn = nvmlReturn_t (*)(nvmlDevice_t, unsigned long long, nvmlEventSet_t);
using nvmlEventSetWait_fn = nvmlReturn_t (*)(nvmlEventSet_t, nvmlEventData_t*, unsigned int);
using nvmlEventSetFree_fn = nvmlReturn_t (*)(nvmlEventSet_t);
using nvmlGpmQueryDeviceSupport_fn = nvmlReturn_t (*)(nvmlDevice_t, nvmlGpmSupport_t*);
using nvmlGpmSampleAlloc_fn = nvmlReturn_t (*)(nvmlGpmSample_t*);
using nvmlGpmSampleFree_fn = nvmlReturn_t (*)(nvmlGpmSample_t);
using nvmlGpmSampleGet_fn = nvmlReturn_t (*)(nvmlDevice_t, nvmlGpmSample_t);
using nvmlGpmMetricsGet_fn = nvmlReturn_t (*)(nvmlGpmMetricsGet_t*);

}  // namespace gpuvet::nvml

namespace gpuvet {

// Function pointers of the loaded NVML; optional ones are nullptr when the driver lacks them.
// Names another library file to load instead (docs/testing.md): a test double, or /nonexistent.
inline constexpr const char* kEnvLibNvml = "GPUVET_LIBNVML";

struct NvmlApi {
    nvml::nvmlInit_fn nvmlInit = nullptr;  // nvmlInit_v2, else nvmlInit
    nvml::nvmlShutdown_fn nvmlShutdown = nullptr;
    nvml::nvmlDeviceGetCount_fn nvmlDeviceGetCount = nullptr;  // _v2, else v1
    nvml::nvmlDeviceGetHandleByIndex_fn nvmlDeviceGetHandleByIndex = nullptr;

    nvml::nvmlErrorString_fn nvmlErrorString = nullptr;
    nvml::nvmlSystemGetString_fn nvmlSystemGetDriverVersion = nullptr;
    nvml::nvmlSystemGetString_fn nvmlSystemGetNVMLVersion = nullptr;
    nvml::nvmlSystemGetCudaDriverVersion_fn nvmlSystemGetCudaDriverVersion = nullptr;
    nvml::nvmlDeviceGetString_fn nvmlDeviceGetName = nullptr;
    nvml::nvmlDeviceGetString_fn nvmlDeviceGetUUID = nullptr;
    nvml::nvmlDeviceGetString_fn nvmlDeviceGetSerial = nullptr;
    nvml::nvmlDeviceGetString_fn nvmlDeviceGetVbiosVersion = nullptr;
    nvml::nvmlDeviceGetString_fn nvmlDeviceGetInforomImageVersion = nullptr;
    nvml::nvmlDeviceGetString_fn nvmlDeviceGetBoardPartNumber = nullptr;
    nvml::nvmlDeviceGetPciInfo_fn nvmlDeviceGetPciInfo = nullptr;  // _v3, else _v2
    nvml::nvmlDeviceGetPciInfoExt_fn nvmlDeviceGetPciInfoExt = nullptr;
    nvml::nvmlDeviceGetMemoryInfo_v2_fn nvmlDeviceGetMemoryInfo_v2 = nullptr;
    nvml::nvmlDeviceGetMemoryInfo_fn nvmlDeviceGetMemoryInfo = nullptr;
    nvml::nvmlDeviceGetEccMode_fn nvmlDeviceGetEccMode = nullptr;
    nvml::nvmlDeviceGetTotalEccErrors_fn nvmlDeviceGetTotalEccErrors = nullptr;
    nvml::nvmlDeviceGetRemappedRows_fn nvmlDeviceGetRemappedRows = nullptr;
    nvml::nvmlDeviceGetRetiredPages_fn nvmlDeviceGetRetiredPages = nullptr;
    nvml::nvmlDeviceGetEnableState_fn nvmlDeviceGetRetiredPagesPendingStatus = nullptr;
    nvml::nvmlDeviceGetUInt_fn nvmlDeviceGetCurrPcieLinkGeneration = nullptr;
    nvml::nvmlDeviceGetUInt_fn nvmlDeviceGetMaxPcieLinkGeneration = nullptr;  // GPU and host together
    nvml::nvmlDeviceGetUInt_fn nvmlDeviceGetGpuMaxPcieLinkGeneration = nullptr;
    nvml::nvmlDeviceGetUInt_fn nvmlDeviceGetCurrPcieLinkWidth = nullptr;
    nvml::nvmlDeviceGetUInt_fn nvmlDeviceGetMaxPcieLinkWidth = nullptr;
    nvml::nvmlDeviceGetUInt_fn nvmlDeviceGetPcieReplayCounter = nullptr;
    nvml::nvmlDeviceGetPcieThroughput_fn nvmlDeviceGetPcieThroughput = nullptr;  // KB/s over 20 ms
    nvml::nvmlDeviceGetNvLinkState_fn nvmlDeviceGetNvLinkState = nullptr;
    nvml::nvmlDeviceGetNvLinkRemotePciInfo_fn nvmlDeviceGetNvLinkRemotePciInfo = nullptr;  // _v2
    nvml::nvmlDeviceGetNvLinkVersion_fn nvmlDeviceGetNvLinkVersion = nullptr;
    nvml::nvmlDeviceGetNvLinkRemoteDeviceType_fn nvmlDeviceGetNvLinkRemoteDeviceType = nullptr;
    nvml::nvmlDeviceGetEnableState_fn nvmlDeviceGetPersistenceMode = nullptr;
    nvml::nvmlDeviceGetComputeMode_fn nvmlDeviceGetComputeMode = nullptr;
    nvml::nvmlDeviceGetUIntPair_fn nvmlDeviceGetMigMode = nullptr;  // current, pending
    nvml::nvmlDeviceGetVirtualizationMode_fn nvmlDeviceGetVirtualizationMode = nullptr;
    nvml::nvmlDeviceGetUInt_fn nvmlDeviceGetPowerUsage = nullptr;  // milliwatts
    nvml::nvmlDeviceGetUInt_fn nvmlDeviceGetPowerManagementLimit = nullptr;
    nvml::nvmlDeviceGetUInt_fn nvmlDeviceGetPowerManagementDefaultLimit = nullptr;
    nvml::nvmlDeviceGetUIntPair_fn nvmlDeviceGetPowerManagementLimitConstraints = nullptr;
    nvml::nvmlDeviceGetUInt_fn nvmlDeviceGetEnforcedPowerLimit = nullptr;
    nvml::nvmlDeviceGetClockInfo_fn nvmlDeviceGetClockInfo = nullptr;
    nvml::nvmlDeviceGetClockInfo_fn nvmlDeviceGetMaxClockInfo = nullptr;
    nvml::nvmlDeviceGetClocksEventReasons_fn nvmlDeviceGetCurrentClocksEventReasons = nullptr;  // or ...ThrottleReasons
    nvml::nvmlDeviceGetTemperature_fn nvmlDeviceGetTemperature = nullptr;
    nvml::nvmlDeviceGetTemperatureThreshold_fn nvmlDeviceGetTemperatureThreshold = nullptr;
    nvml::nvmlDeviceGetUInt_fn nvmlDeviceGetFanSpeed = nullptr;
    nvml::nvmlDeviceGetUtilizationRates_fn nvmlDeviceGetUtilizationRates = nullptr;
    nvml::nvmlDeviceGetRunningProcesses_fn nvmlDeviceGetComputeRunningProcesses = nullptr;  // _v3, else _v2
    nvml::nvmlDeviceGetRunningProcesses_v1_fn nvmlDeviceGetComputeRunningProcesses_v1 = nullptr;
    nvml::nvmlDeviceGetRunningProcesses_fn nvmlDeviceGetGraphicsRunningProcesses = nullptr;  // _v3, else _v2
    nvml::nvmlDeviceGetRunningProcesses_v1_fn nvmlDeviceGetGraphicsRunningProcesses_v1 = nullptr;
    nvml::nvmlDeviceGetUInt_fn nvmlDeviceGetNumaNodeId = nullptr;
    nvml::nvmlDeviceGetCpuAffinity_fn nvmlDeviceGetCpuAffinity = nullptr;
    nvml::nvmlDeviceGetTopologyCommonAncestor_fn nvmlDeviceGetTopologyCommonAncestor = nullptr;
    nvml::nvmlDeviceGetArchitecture_fn nvmlDeviceGetArchitecture = nullptr;
    nvml::nvmlDeviceGetCudaComputeCapability_fn nvmlDeviceGetCudaComputeCapability = nullptr;
    nvml::nvmlDeviceGetFieldValues_fn nvmlDeviceGetFieldValues = nullptr;
    // Interval figures: the driver's sample buffer, the energy counter (mJ, Volta+) and the
    // violation-time counters (ns); each missing symbol leaves its figure to a point read.
    nvml::nvmlDeviceGetSamples_fn nvmlDeviceGetSamples = nullptr;
    nvml::nvmlDeviceGetTotalEnergyConsumption_fn nvmlDeviceGetTotalEnergyConsumption = nullptr;
    nvml::nvmlDeviceGetViolationStatus_fn nvmlDeviceGetViolationStatus = nullptr;
    nvml::nvmlEventSetCreate_fn nvmlEventSetCreate = nullptr;
    nvml::nvmlDeviceRegisterEvents_fn nvmlDeviceRegisterEvents = nullptr;
    nvml::nvmlEventSetWait_fn nvmlEventSetWait = nullptr;  // _v2, else v1
    nvml::nvmlEventSetFree_fn nvmlEventSetFree = nullptr;
    // GPM (NVML 11.8+, Hopper and newer GPUs).
    nvml::nvmlGpmQueryDeviceSupport_fn nvmlGpmQueryDeviceSupport = nullptr;
    nvml::nvmlGpmSampleAlloc_fn nvmlGpmSampleAlloc = nullptr;
    nvml::nvmlGpmSampleFree_fn nvmlGpmSampleFree = nullptr;
    nvml::nvmlGpmSampleGet_fn nvmlGpmSampleGet = nullptr;
    nvml::nvmlGpmMetricsGet_fn nvmlGpmMetricsGet = nullptr;

    std::string path;          // the library file, when loaded
    std::string error;         // why it is unusable; empty when ok()
    SymbolResolution symbols;  // which names were found, which are missing

    bool ok() const { return error.empty(); }
    // Loads through GPUVET_LIBNVML, else libnvidia-ml.so.1. Never throws; see ok()/error.
    static NvmlApi load();
    // Loads a given library file (tests and fakes).
    static NvmlApi load_file(const std::string& file);
    // Resolves the table against an already opened library; with `deadline`, every call runs
    // under that library's deadline (driver_deadline.hpp).
    static NvmlApi from_library(const DynLib& lib, DriverLib* deadline = nullptr);
    // The library's own name for a status (nvmlErrorString), else our table's.
    std::string error_name(int code) const;
};

// The symbol table: one row per member above.
std::span<const SymbolEntry<NvmlApi>> nvml_symbol_table();

// Our table of NVML status names ("NVML_ERROR_GPU_IS_LOST"); "NVML_ERROR_<code>" when unknown.
std::string nvml_status_name(int code);
// What to do about a status ("GPU has fallen off the bus: reset or reboot, check Xid 79 in dmesg").
std::string nvml_advice(int code);
// A short absent reason for a fact whose call returned `code` ("not supported by this GPU",
// "no permission: run as root or add the user to the video group").
std::string nvml_absent_reason(int code);

// A failed NVML call: the numeric status, its name, and advice.
class NvmlError : public Error {
public:
    NvmlError(std::string call, int code, std::string name);
    int code() const { return code_; }
    const std::string& name() const { return name_; }
    const std::string& call() const { return call_; }

private:
    std::string call_;
    int code_;
    std::string name_;
};

}  // namespace gpuvet
