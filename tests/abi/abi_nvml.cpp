// gpuvet's NVML declarations against nvml.h. NVML_NO_UNVERSIONED_FUNC_DEFS makes nvml.h declare
// the old unversioned functions (nvmlInit, ...) as themselves, so their signatures can be checked
// too; our headers come first so nvml.h's macros cannot rewrite them.
#include "gpu/bindings/nvml_api.hpp"
#define NVML_NO_UNVERSIONED_FUNC_DEFS
// clang-format off
#include <nvml.h>
// clang-format on
#include <cstddef>

#include "official_map.hpp"

namespace abi {
namespace n = gpuvet::nvml;
ABI_ENUM(n::nvmlReturn_t, ::nvmlReturn_t);
ABI_ENUM(n::nvmlEnableState_t, ::nvmlEnableState_t);
ABI_ENUM(n::nvmlMemoryErrorType_t, ::nvmlMemoryErrorType_t);
ABI_ENUM(n::nvmlEccCounterType_t, ::nvmlEccCounterType_t);
ABI_ENUM(n::nvmlPageRetirementCause_t, ::nvmlPageRetirementCause_t);
ABI_ENUM(n::nvmlComputeMode_t, ::nvmlComputeMode_t);
ABI_ENUM(n::nvmlGpuVirtualizationMode_t, ::nvmlGpuVirtualizationMode_t);
ABI_ENUM(n::nvmlClockType_t, ::nvmlClockType_t);
ABI_ENUM(n::nvmlTemperatureSensors_t, ::nvmlTemperatureSensors_t);
ABI_ENUM(n::nvmlSamplingType_t, ::nvmlSamplingType_t);
ABI_ENUM(n::nvmlPerfPolicyType_t, ::nvmlPerfPolicyType_t);
ABI_MAP(n::nvmlSample_t, ::nvmlSample_t);
ABI_MAP(n::nvmlViolationTime_t, ::nvmlViolationTime_t);
ABI_ENUM(n::nvmlPcieUtilCounter_t, ::nvmlPcieUtilCounter_t);
ABI_ENUM(n::nvmlTemperatureThresholds_t, ::nvmlTemperatureThresholds_t);
ABI_ENUM(n::nvmlGpuTopologyLevel_t, ::nvmlGpuTopologyLevel_t);
ABI_ENUM(n::nvmlIntNvLinkDeviceType_t, ::nvmlIntNvLinkDeviceType_t);
ABI_MAP(n::nvmlPciInfo_t, ::nvmlPciInfo_t);
ABI_MAP(n::nvmlPciInfoExt_v1_t, ::nvmlPciInfoExt_v1_t);
ABI_MAP(n::nvmlMemory_t, ::nvmlMemory_t);
ABI_MAP(n::nvmlMemory_v2_t, ::nvmlMemory_v2_t);
ABI_MAP(n::nvmlProcessInfo_v1_t, ::nvmlProcessInfo_v1_t);
ABI_MAP(n::nvmlProcessInfo_v2_t, ::nvmlProcessInfo_v2_t);
ABI_MAP(n::nvmlUtilization_t, ::nvmlUtilization_t);
ABI_MAP(n::nvmlEventData_t, ::nvmlEventData_t);
ABI_ENUM(n::nvmlValueType_t, ::nvmlValueType_t);
ABI_MAP(n::nvmlValue_t, ::nvmlValue_t);
ABI_MAP(n::nvmlFieldValue_t, ::nvmlFieldValue_t);
ABI_MAP(n::nvmlGpmMetric_t, ::nvmlGpmMetric_t);
ABI_MAP(n::nvmlGpmSupport_t, ::nvmlGpmSupport_t);
// Our nvmlGpmMetricsGet_t is deliberately larger than any header's (its array outgrows every
// NVML_GPM_METRIC_MAX so far): the same header and element, more room; checked below.
template <>
struct official<n::nvmlGpmMetricsGet_t> {
    using type = ::nvmlGpmMetricsGet_t;
};
}  // namespace abi

namespace n = gpuvet::nvml;

static_assert(std::is_same_v<n::nvmlDevice_t, ::nvmlDevice_t>);
static_assert(std::is_same_v<n::nvmlEventSet_t, ::nvmlEventSet_t>);
static_assert(std::is_same_v<n::nvmlDeviceArchitecture_t, ::nvmlDeviceArchitecture_t>);
static_assert(std::is_same_v<n::nvmlGpmSample_t, ::nvmlGpmSample_t>);

// GPM: the request's header and metric layout match; our array holds at least the header's MAX.
ABI_SAME_OFFSET(n::nvmlGpmMetric_t, ::nvmlGpmMetric_t, metricId);
ABI_SAME_OFFSET(n::nvmlGpmMetric_t, ::nvmlGpmMetric_t, nvmlReturn);
ABI_SAME_OFFSET(n::nvmlGpmMetric_t, ::nvmlGpmMetric_t, value);
ABI_SAME_OFFSET(n::nvmlGpmMetric_t, ::nvmlGpmMetric_t, metricInfo);
ABI_SAME_OFFSET(n::nvmlGpmMetricsGet_t, ::nvmlGpmMetricsGet_t, version);
ABI_SAME_OFFSET(n::nvmlGpmMetricsGet_t, ::nvmlGpmMetricsGet_t, numMetrics);
ABI_SAME_OFFSET(n::nvmlGpmMetricsGet_t, ::nvmlGpmMetricsGet_t, sample1);
ABI_SAME_OFFSET(n::nvmlGpmMetricsGet_t, ::nvmlGpmMetricsGet_t, sample2);
ABI_SAME_OFFSET(n::nvmlGpmMetricsGet_t, ::nvmlGpmMetricsGet_t, metrics);
ABI_SAME_OFFSET(n::nvmlGpmSupport_t, ::nvmlGpmSupport_t, version);
ABI_SAME_OFFSET(n::nvmlGpmSupport_t, ::nvmlGpmSupport_t, isSupportedDevice);
static_assert(n::kGpmMetricsBufferEntries >= NVML_GPM_METRIC_MAX, "GPM buffer smaller than this nvml.h's MAX");
static_assert(sizeof(n::nvmlGpmMetricsGet_t) >= sizeof(::nvmlGpmMetricsGet_t));

// Struct layouts, member by member.
ABI_SAME_OFFSET(n::nvmlPciInfo_t, ::nvmlPciInfo_t, busIdLegacy);
ABI_SAME_OFFSET(n::nvmlPciInfo_t, ::nvmlPciInfo_t, domain);
ABI_SAME_OFFSET(n::nvmlPciInfo_t, ::nvmlPciInfo_t, bus);
ABI_SAME_OFFSET(n::nvmlPciInfo_t, ::nvmlPciInfo_t, device);
ABI_SAME_OFFSET(n::nvmlPciInfo_t, ::nvmlPciInfo_t, pciDeviceId);
ABI_SAME_OFFSET(n::nvmlPciInfo_t, ::nvmlPciInfo_t, pciSubSystemId);
ABI_SAME_OFFSET(n::nvmlPciInfo_t, ::nvmlPciInfo_t, busId);
ABI_SAME_OFFSET(n::nvmlPciInfoExt_v1_t, ::nvmlPciInfoExt_v1_t, version);
ABI_SAME_OFFSET(n::nvmlPciInfoExt_v1_t, ::nvmlPciInfoExt_v1_t, domain);
ABI_SAME_OFFSET(n::nvmlPciInfoExt_v1_t, ::nvmlPciInfoExt_v1_t, bus);
ABI_SAME_OFFSET(n::nvmlPciInfoExt_v1_t, ::nvmlPciInfoExt_v1_t, device);
ABI_SAME_OFFSET(n::nvmlPciInfoExt_v1_t, ::nvmlPciInfoExt_v1_t, pciDeviceId);
ABI_SAME_OFFSET(n::nvmlPciInfoExt_v1_t, ::nvmlPciInfoExt_v1_t, pciSubSystemId);
ABI_SAME_OFFSET(n::nvmlPciInfoExt_v1_t, ::nvmlPciInfoExt_v1_t, baseClass);
ABI_SAME_OFFSET(n::nvmlPciInfoExt_v1_t, ::nvmlPciInfoExt_v1_t, subClass);
ABI_SAME_OFFSET(n::nvmlPciInfoExt_v1_t, ::nvmlPciInfoExt_v1_t, busId);
ABI_SAME_OFFSET(n::nvmlMemory_t, ::nvmlMemory_t, total);
ABI_SAME_OFFSET(n::nvmlMemory_t, ::nvmlMemory_t, free);
ABI_SAME_OFFSET(n::nvmlMemory_t, ::nvmlMemory_t, used);
ABI_SAME_OFFSET(n::nvmlMemory_v2_t, ::nvmlMemory_v2_t, version);
ABI_SAME_OFFSET(n::nvmlMemory_v2_t, ::nvmlMemory_v2_t, total);
ABI_SAME_OFFSET(n::nvmlMemory_v2_t, ::nvmlMemory_v2_t, reserved);
ABI_SAME_OFFSET(n::nvmlMemory_v2_t, ::nvmlMemory_v2_t, free);
ABI_SAME_OFFSET(n::nvmlMemory_v2_t, ::nvmlMemory_v2_t, used);
ABI_SAME_OFFSET(n::nvmlProcessInfo_v1_t, ::nvmlProcessInfo_v1_t, pid);
ABI_SAME_OFFSET(n::nvmlProcessInfo_v1_t, ::nvmlProcessInfo_v1_t, usedGpuMemory);
ABI_SAME_OFFSET(n::nvmlProcessInfo_v2_t, ::nvmlProcessInfo_v2_t, pid);
ABI_SAME_OFFSET(n::nvmlProcessInfo_v2_t, ::nvmlProcessInfo_v2_t, usedGpuMemory);
ABI_SAME_OFFSET(n::nvmlProcessInfo_v2_t, ::nvmlProcessInfo_v2_t, gpuInstanceId);
ABI_SAME_OFFSET(n::nvmlProcessInfo_v2_t, ::nvmlProcessInfo_v2_t, computeInstanceId);
ABI_SAME_OFFSET(n::nvmlUtilization_t, ::nvmlUtilization_t, gpu);
ABI_SAME_OFFSET(n::nvmlUtilization_t, ::nvmlUtilization_t, memory);
ABI_SAME_OFFSET(n::nvmlEventData_t, ::nvmlEventData_t, device);
ABI_SAME_OFFSET(n::nvmlEventData_t, ::nvmlEventData_t, eventType);
ABI_SAME_OFFSET(n::nvmlEventData_t, ::nvmlEventData_t, eventData);
ABI_SAME_OFFSET(n::nvmlEventData_t, ::nvmlEventData_t, gpuInstanceId);
ABI_SAME_OFFSET(n::nvmlEventData_t, ::nvmlEventData_t, computeInstanceId);
ABI_SAME_OFFSET(n::nvmlValue_t, ::nvmlValue_t, dVal);
ABI_SAME_OFFSET(n::nvmlValue_t, ::nvmlValue_t, siVal);
ABI_SAME_OFFSET(n::nvmlValue_t, ::nvmlValue_t, uiVal);
ABI_SAME_OFFSET(n::nvmlValue_t, ::nvmlValue_t, ulVal);
ABI_SAME_OFFSET(n::nvmlValue_t, ::nvmlValue_t, ullVal);
ABI_SAME_OFFSET(n::nvmlValue_t, ::nvmlValue_t, sllVal);
ABI_SAME_OFFSET(n::nvmlValue_t, ::nvmlValue_t, usVal);
ABI_SAME_OFFSET(n::nvmlFieldValue_t, ::nvmlFieldValue_t, fieldId);
ABI_SAME_OFFSET(n::nvmlFieldValue_t, ::nvmlFieldValue_t, scopeId);
ABI_SAME_OFFSET(n::nvmlFieldValue_t, ::nvmlFieldValue_t, timestamp);
ABI_SAME_OFFSET(n::nvmlFieldValue_t, ::nvmlFieldValue_t, latencyUsec);
ABI_SAME_OFFSET(n::nvmlFieldValue_t, ::nvmlFieldValue_t, valueType);
ABI_SAME_OFFSET(n::nvmlFieldValue_t, ::nvmlFieldValue_t, nvmlReturn);
ABI_SAME_OFFSET(n::nvmlFieldValue_t, ::nvmlFieldValue_t, value);
// The process list calls of this header take the 4-field struct (see REFERENCES.md on R535).
static_assert(std::is_same_v<::nvmlProcessInfo_t, ::nvmlProcessInfo_v2_t>);

// Every symbol name in the table, checked against the signature we hold for it.
ABI_SAME_FN(n::nvmlInit_fn, nvmlInit_v2);
ABI_SAME_FN(n::nvmlInit_fn, nvmlInit);
ABI_SAME_FN(n::nvmlShutdown_fn, nvmlShutdown);
ABI_SAME_FN(n::nvmlDeviceGetCount_fn, nvmlDeviceGetCount_v2);
ABI_SAME_FN(n::nvmlDeviceGetCount_fn, nvmlDeviceGetCount);
ABI_SAME_FN(n::nvmlDeviceGetHandleByIndex_fn, nvmlDeviceGetHandleByIndex_v2);
ABI_SAME_FN(n::nvmlDeviceGetHandleByIndex_fn, nvmlDeviceGetHandleByIndex);
ABI_SAME_FN(n::nvmlErrorString_fn, nvmlErrorString);
ABI_SAME_FN(n::nvmlSystemGetString_fn, nvmlSystemGetDriverVersion);
ABI_SAME_FN(n::nvmlSystemGetString_fn, nvmlSystemGetNVMLVersion);
ABI_SAME_FN(n::nvmlSystemGetCudaDriverVersion_fn, nvmlSystemGetCudaDriverVersion_v2);
ABI_SAME_FN(n::nvmlSystemGetCudaDriverVersion_fn, nvmlSystemGetCudaDriverVersion);
ABI_SAME_FN(n::nvmlDeviceGetString_fn, nvmlDeviceGetName);
ABI_SAME_FN(n::nvmlDeviceGetString_fn, nvmlDeviceGetUUID);
ABI_SAME_FN(n::nvmlDeviceGetString_fn, nvmlDeviceGetSerial);
ABI_SAME_FN(n::nvmlDeviceGetString_fn, nvmlDeviceGetVbiosVersion);
ABI_SAME_FN(n::nvmlDeviceGetString_fn, nvmlDeviceGetInforomImageVersion);
ABI_SAME_FN(n::nvmlDeviceGetPciInfo_fn, nvmlDeviceGetPciInfo_v3);
ABI_SAME_FN(n::nvmlDeviceGetPciInfo_fn, nvmlDeviceGetPciInfo_v2);
ABI_SAME_FN(n::nvmlDeviceGetPciInfoExt_fn, nvmlDeviceGetPciInfoExt);
ABI_SAME_FN(n::nvmlDeviceGetMemoryInfo_v2_fn, nvmlDeviceGetMemoryInfo_v2);
ABI_SAME_FN(n::nvmlDeviceGetMemoryInfo_fn, nvmlDeviceGetMemoryInfo);
ABI_SAME_FN(n::nvmlDeviceGetEccMode_fn, nvmlDeviceGetEccMode);
ABI_SAME_FN(n::nvmlDeviceGetTotalEccErrors_fn, nvmlDeviceGetTotalEccErrors);
ABI_SAME_FN(n::nvmlDeviceGetRemappedRows_fn, nvmlDeviceGetRemappedRows);
ABI_SAME_FN(n::nvmlDeviceGetRetiredPages_fn, nvmlDeviceGetRetiredPages);
ABI_SAME_FN(n::nvmlDeviceGetEnableState_fn, nvmlDeviceGetRetiredPagesPendingStatus);
ABI_SAME_FN(n::nvmlDeviceGetUInt_fn, nvmlDeviceGetCurrPcieLinkGeneration);
ABI_SAME_FN(n::nvmlDeviceGetUInt_fn, nvmlDeviceGetMaxPcieLinkGeneration);
ABI_SAME_FN(n::nvmlDeviceGetUInt_fn, nvmlDeviceGetGpuMaxPcieLinkGeneration);
ABI_SAME_FN(n::nvmlDeviceGetUInt_fn, nvmlDeviceGetCurrPcieLinkWidth);
ABI_SAME_FN(n::nvmlDeviceGetUInt_fn, nvmlDeviceGetMaxPcieLinkWidth);
ABI_SAME_FN(n::nvmlDeviceGetUInt_fn, nvmlDeviceGetPcieReplayCounter);
ABI_SAME_FN(n::nvmlDeviceGetPcieThroughput_fn, nvmlDeviceGetPcieThroughput);
ABI_SAME_FN(n::nvmlDeviceGetString_fn, nvmlDeviceGetBoardPartNumber);
ABI_SAME_FN(n::nvmlDeviceGetNvLinkState_fn, nvmlDeviceGetNvLinkState);
ABI_SAME_FN(n::nvmlDeviceGetNvLinkRemotePciInfo_fn, nvmlDeviceGetNvLinkRemotePciInfo_v2);
ABI_SAME_FN(n::nvmlDeviceGetNvLinkVersion_fn, nvmlDeviceGetNvLinkVersion);
ABI_SAME_FN(n::nvmlDeviceGetNvLinkRemoteDeviceType_fn, nvmlDeviceGetNvLinkRemoteDeviceType);
ABI_SAME_FN(n::nvmlDeviceGetEnableState_fn, nvmlDeviceGetPersistenceMode);
ABI_SAME_FN(n::nvmlDeviceGetComputeMode_fn, nvmlDeviceGetComputeMode);
ABI_SAME_FN(n::nvmlDeviceGetUIntPair_fn, nvmlDeviceGetMigMode);
ABI_SAME_FN(n::nvmlDeviceGetVirtualizationMode_fn, nvmlDeviceGetVirtualizationMode);
ABI_SAME_FN(n::nvmlDeviceGetUInt_fn, nvmlDeviceGetPowerUsage);
ABI_SAME_FN(n::nvmlDeviceGetUInt_fn, nvmlDeviceGetPowerManagementLimit);
ABI_SAME_FN(n::nvmlDeviceGetUInt_fn, nvmlDeviceGetPowerManagementDefaultLimit);
ABI_SAME_FN(n::nvmlDeviceGetUIntPair_fn, nvmlDeviceGetPowerManagementLimitConstraints);
ABI_SAME_FN(n::nvmlDeviceGetUInt_fn, nvmlDeviceGetEnforcedPowerLimit);
ABI_SAME_FN(n::nvmlDeviceGetClockInfo_fn, nvmlDeviceGetClockInfo);
ABI_SAME_FN(n::nvmlDeviceGetClockInfo_fn, nvmlDeviceGetMaxClockInfo);
ABI_SAME_FN(n::nvmlDeviceGetClocksEventReasons_fn, nvmlDeviceGetCurrentClocksEventReasons);
// nvml.h 13 marks these deprecated; gpuvet still calls them on drivers that lack the new names,
// so their signatures are checked all the same.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
ABI_SAME_FN(n::nvmlDeviceGetClocksEventReasons_fn, nvmlDeviceGetCurrentClocksThrottleReasons);
ABI_SAME_FN(n::nvmlDeviceGetTemperature_fn, nvmlDeviceGetTemperature);
ABI_SAME_FN(n::nvmlDeviceGetViolationStatus_fn, nvmlDeviceGetViolationStatus);
#pragma GCC diagnostic pop
ABI_SAME_FN(n::nvmlDeviceGetSamples_fn, nvmlDeviceGetSamples);
ABI_SAME_FN(n::nvmlDeviceGetTotalEnergyConsumption_fn, nvmlDeviceGetTotalEnergyConsumption);
ABI_SAME_OFFSET(n::nvmlSample_t, ::nvmlSample_t, timeStamp);
ABI_SAME_OFFSET(n::nvmlSample_t, ::nvmlSample_t, sampleValue);
ABI_SAME_OFFSET(n::nvmlViolationTime_t, ::nvmlViolationTime_t, referenceTime);
ABI_SAME_OFFSET(n::nvmlViolationTime_t, ::nvmlViolationTime_t, violationTime);
ABI_SAME_FN(n::nvmlDeviceGetTemperatureThreshold_fn, nvmlDeviceGetTemperatureThreshold);
ABI_SAME_FN(n::nvmlDeviceGetUInt_fn, nvmlDeviceGetFanSpeed);
ABI_SAME_FN(n::nvmlDeviceGetUtilizationRates_fn, nvmlDeviceGetUtilizationRates);
ABI_SAME_FN(n::nvmlDeviceGetRunningProcesses_fn, nvmlDeviceGetComputeRunningProcesses_v3);
ABI_SAME_FN(n::nvmlDeviceGetRunningProcesses_fn, nvmlDeviceGetComputeRunningProcesses_v2);
ABI_SAME_FN(n::nvmlDeviceGetRunningProcesses_v1_fn, nvmlDeviceGetComputeRunningProcesses);
ABI_SAME_FN(n::nvmlDeviceGetRunningProcesses_fn, nvmlDeviceGetGraphicsRunningProcesses_v3);
ABI_SAME_FN(n::nvmlDeviceGetRunningProcesses_fn, nvmlDeviceGetGraphicsRunningProcesses_v2);
ABI_SAME_FN(n::nvmlDeviceGetRunningProcesses_v1_fn, nvmlDeviceGetGraphicsRunningProcesses);
ABI_SAME_FN(n::nvmlDeviceGetUInt_fn, nvmlDeviceGetNumaNodeId);
ABI_SAME_FN(n::nvmlDeviceGetCpuAffinity_fn, nvmlDeviceGetCpuAffinity);
ABI_SAME_FN(n::nvmlDeviceGetTopologyCommonAncestor_fn, nvmlDeviceGetTopologyCommonAncestor);
ABI_SAME_FN(n::nvmlDeviceGetArchitecture_fn, nvmlDeviceGetArchitecture);
ABI_SAME_FN(n::nvmlDeviceGetCudaComputeCapability_fn, nvmlDeviceGetCudaComputeCapability);
ABI_SAME_FN(n::nvmlDeviceGetFieldValues_fn, nvmlDeviceGetFieldValues);
ABI_SAME_FN(n::nvmlEventSetCreate_fn, nvmlEventSetCreate);
ABI_SAME_FN(n::nvmlDeviceRegisterEvents_fn, nvmlDeviceRegisterEvents);
ABI_SAME_FN(n::nvmlEventSetWait_fn, nvmlEventSetWait_v2);
ABI_SAME_FN(n::nvmlEventSetWait_fn, nvmlEventSetWait);
ABI_SAME_FN(n::nvmlEventSetFree_fn, nvmlEventSetFree);
ABI_SAME_FN(n::nvmlGpmQueryDeviceSupport_fn, nvmlGpmQueryDeviceSupport);
ABI_SAME_FN(n::nvmlGpmSampleAlloc_fn, nvmlGpmSampleAlloc);
ABI_SAME_FN(n::nvmlGpmSampleFree_fn, nvmlGpmSampleFree);
ABI_SAME_FN(n::nvmlGpmSampleGet_fn, nvmlGpmSampleGet);
ABI_SAME_FN(n::nvmlGpmMetricsGet_fn, nvmlGpmMetricsGet);

// Status values.
ABI_SAME_VALUE(n::NVML_SUCCESS, ::NVML_SUCCESS);
ABI_SAME_VALUE(n::NVML_TOTAL_POWER_SAMPLES, ::NVML_TOTAL_POWER_SAMPLES);
ABI_SAME_VALUE(n::NVML_GPU_UTILIZATION_SAMPLES, ::NVML_GPU_UTILIZATION_SAMPLES);
ABI_SAME_VALUE(n::NVML_MEMORY_UTILIZATION_SAMPLES, ::NVML_MEMORY_UTILIZATION_SAMPLES);
ABI_SAME_VALUE(n::NVML_ENC_UTILIZATION_SAMPLES, ::NVML_ENC_UTILIZATION_SAMPLES);
ABI_SAME_VALUE(n::NVML_DEC_UTILIZATION_SAMPLES, ::NVML_DEC_UTILIZATION_SAMPLES);
ABI_SAME_VALUE(n::NVML_PROCESSOR_CLK_SAMPLES, ::NVML_PROCESSOR_CLK_SAMPLES);
ABI_SAME_VALUE(n::NVML_MEMORY_CLK_SAMPLES, ::NVML_MEMORY_CLK_SAMPLES);
ABI_SAME_VALUE(n::NVML_MODULE_POWER_SAMPLES, ::NVML_MODULE_POWER_SAMPLES);
ABI_SAME_VALUE(n::NVML_JPG_UTILIZATION_SAMPLES, ::NVML_JPG_UTILIZATION_SAMPLES);
ABI_SAME_VALUE(n::NVML_OFA_UTILIZATION_SAMPLES, ::NVML_OFA_UTILIZATION_SAMPLES);
ABI_SAME_VALUE(n::NVML_SAMPLINGTYPE_COUNT, ::NVML_SAMPLINGTYPE_COUNT);
ABI_SAME_VALUE(n::NVML_PERF_POLICY_POWER, ::NVML_PERF_POLICY_POWER);
ABI_SAME_VALUE(n::NVML_PERF_POLICY_THERMAL, ::NVML_PERF_POLICY_THERMAL);
ABI_SAME_VALUE(n::NVML_PERF_POLICY_SYNC_BOOST, ::NVML_PERF_POLICY_SYNC_BOOST);
ABI_SAME_VALUE(n::NVML_PERF_POLICY_BOARD_LIMIT, ::NVML_PERF_POLICY_BOARD_LIMIT);
ABI_SAME_VALUE(n::NVML_PERF_POLICY_LOW_UTILIZATION, ::NVML_PERF_POLICY_LOW_UTILIZATION);
ABI_SAME_VALUE(n::NVML_PERF_POLICY_RELIABILITY, ::NVML_PERF_POLICY_RELIABILITY);
ABI_SAME_VALUE(n::NVML_PERF_POLICY_TOTAL_APP_CLOCKS, ::NVML_PERF_POLICY_TOTAL_APP_CLOCKS);
ABI_SAME_VALUE(n::NVML_PERF_POLICY_TOTAL_BASE_CLOCKS, ::NVML_PERF_POLICY_TOTAL_BASE_CLOCKS);
ABI_SAME_VALUE(n::NVML_PERF_POLICY_COUNT, ::NVML_PERF_POLICY_COUNT);
ABI_SAME_VALUE(n::NVML_PCIE_UTIL_TX_BYTES, ::NVML_PCIE_UTIL_TX_BYTES);
ABI_SAME_VALUE(n::NVML_PCIE_UTIL_RX_BYTES, ::NVML_PCIE_UTIL_RX_BYTES);
ABI_SAME_VALUE(n::kFiDevNvLinkThroughputDataTx, NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX);
ABI_SAME_VALUE(n::kFiDevNvLinkThroughputDataRx, NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX);
ABI_SAME_VALUE(n::NVML_NVLINK_DEVICE_TYPE_GPU, ::NVML_NVLINK_DEVICE_TYPE_GPU);
ABI_SAME_VALUE(n::NVML_NVLINK_DEVICE_TYPE_IBMNPU, ::NVML_NVLINK_DEVICE_TYPE_IBMNPU);
ABI_SAME_VALUE(n::NVML_NVLINK_DEVICE_TYPE_SWITCH, ::NVML_NVLINK_DEVICE_TYPE_SWITCH);
ABI_SAME_VALUE(n::NVML_NVLINK_DEVICE_TYPE_UNKNOWN, ::NVML_NVLINK_DEVICE_TYPE_UNKNOWN);
ABI_SAME_VALUE(n::NVML_ERROR_UNINITIALIZED, ::NVML_ERROR_UNINITIALIZED);
ABI_SAME_VALUE(n::NVML_ERROR_INVALID_ARGUMENT, ::NVML_ERROR_INVALID_ARGUMENT);
ABI_SAME_VALUE(n::NVML_ERROR_NOT_SUPPORTED, ::NVML_ERROR_NOT_SUPPORTED);
ABI_SAME_VALUE(n::NVML_ERROR_NO_PERMISSION, ::NVML_ERROR_NO_PERMISSION);
ABI_SAME_VALUE(n::NVML_ERROR_ALREADY_INITIALIZED, ::NVML_ERROR_ALREADY_INITIALIZED);
ABI_SAME_VALUE(n::NVML_ERROR_NOT_FOUND, ::NVML_ERROR_NOT_FOUND);
ABI_SAME_VALUE(n::NVML_ERROR_INSUFFICIENT_SIZE, ::NVML_ERROR_INSUFFICIENT_SIZE);
ABI_SAME_VALUE(n::NVML_ERROR_INSUFFICIENT_POWER, ::NVML_ERROR_INSUFFICIENT_POWER);
ABI_SAME_VALUE(n::NVML_ERROR_DRIVER_NOT_LOADED, ::NVML_ERROR_DRIVER_NOT_LOADED);
ABI_SAME_VALUE(n::NVML_ERROR_TIMEOUT, ::NVML_ERROR_TIMEOUT);
ABI_SAME_VALUE(n::NVML_ERROR_IRQ_ISSUE, ::NVML_ERROR_IRQ_ISSUE);
ABI_SAME_VALUE(n::NVML_ERROR_LIBRARY_NOT_FOUND, ::NVML_ERROR_LIBRARY_NOT_FOUND);
ABI_SAME_VALUE(n::NVML_ERROR_FUNCTION_NOT_FOUND, ::NVML_ERROR_FUNCTION_NOT_FOUND);
ABI_SAME_VALUE(n::NVML_ERROR_CORRUPTED_INFOROM, ::NVML_ERROR_CORRUPTED_INFOROM);
ABI_SAME_VALUE(n::NVML_ERROR_GPU_IS_LOST, ::NVML_ERROR_GPU_IS_LOST);
ABI_SAME_VALUE(n::NVML_ERROR_RESET_REQUIRED, ::NVML_ERROR_RESET_REQUIRED);
ABI_SAME_VALUE(n::NVML_ERROR_OPERATING_SYSTEM, ::NVML_ERROR_OPERATING_SYSTEM);
ABI_SAME_VALUE(n::NVML_ERROR_LIB_RM_VERSION_MISMATCH, ::NVML_ERROR_LIB_RM_VERSION_MISMATCH);
ABI_SAME_VALUE(n::NVML_ERROR_IN_USE, ::NVML_ERROR_IN_USE);
ABI_SAME_VALUE(n::NVML_ERROR_MEMORY, ::NVML_ERROR_MEMORY);
ABI_SAME_VALUE(n::NVML_ERROR_NO_DATA, ::NVML_ERROR_NO_DATA);
ABI_SAME_VALUE(n::NVML_ERROR_VGPU_ECC_NOT_SUPPORTED, ::NVML_ERROR_VGPU_ECC_NOT_SUPPORTED);
ABI_SAME_VALUE(n::NVML_ERROR_INSUFFICIENT_RESOURCES, ::NVML_ERROR_INSUFFICIENT_RESOURCES);
ABI_SAME_VALUE(n::NVML_ERROR_FREQ_NOT_SUPPORTED, ::NVML_ERROR_FREQ_NOT_SUPPORTED);
ABI_SAME_VALUE(n::NVML_ERROR_ARGUMENT_VERSION_MISMATCH, ::NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
ABI_SAME_VALUE(n::NVML_ERROR_DEPRECATED, ::NVML_ERROR_DEPRECATED);
ABI_SAME_VALUE(n::NVML_ERROR_NOT_READY, ::NVML_ERROR_NOT_READY);
ABI_SAME_VALUE(n::NVML_ERROR_GPU_NOT_FOUND, ::NVML_ERROR_GPU_NOT_FOUND);
ABI_SAME_VALUE(n::NVML_ERROR_INVALID_STATE, ::NVML_ERROR_INVALID_STATE);
ABI_SAME_VALUE(n::NVML_ERROR_RESET_TYPE_NOT_SUPPORTED, ::NVML_ERROR_RESET_TYPE_NOT_SUPPORTED);
ABI_SAME_VALUE(n::NVML_ERROR_UNKNOWN, ::NVML_ERROR_UNKNOWN);

// Other enum values.
ABI_SAME_VALUE(n::NVML_FEATURE_DISABLED, ::NVML_FEATURE_DISABLED);
ABI_SAME_VALUE(n::NVML_FEATURE_ENABLED, ::NVML_FEATURE_ENABLED);
ABI_SAME_VALUE(n::NVML_MEMORY_ERROR_TYPE_CORRECTED, ::NVML_MEMORY_ERROR_TYPE_CORRECTED);
ABI_SAME_VALUE(n::NVML_MEMORY_ERROR_TYPE_UNCORRECTED, ::NVML_MEMORY_ERROR_TYPE_UNCORRECTED);
ABI_SAME_VALUE(n::NVML_VOLATILE_ECC, ::NVML_VOLATILE_ECC);
ABI_SAME_VALUE(n::NVML_AGGREGATE_ECC, ::NVML_AGGREGATE_ECC);
ABI_SAME_VALUE(n::NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS,
               ::NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS);
ABI_SAME_VALUE(n::NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR, ::NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR);
ABI_SAME_VALUE(n::NVML_COMPUTEMODE_DEFAULT, ::NVML_COMPUTEMODE_DEFAULT);
ABI_SAME_VALUE(n::NVML_COMPUTEMODE_EXCLUSIVE_THREAD, ::NVML_COMPUTEMODE_EXCLUSIVE_THREAD);
ABI_SAME_VALUE(n::NVML_COMPUTEMODE_PROHIBITED, ::NVML_COMPUTEMODE_PROHIBITED);
ABI_SAME_VALUE(n::NVML_COMPUTEMODE_EXCLUSIVE_PROCESS, ::NVML_COMPUTEMODE_EXCLUSIVE_PROCESS);
ABI_SAME_VALUE(n::NVML_GPU_VIRTUALIZATION_MODE_NONE, ::NVML_GPU_VIRTUALIZATION_MODE_NONE);
ABI_SAME_VALUE(n::NVML_GPU_VIRTUALIZATION_MODE_PASSTHROUGH, ::NVML_GPU_VIRTUALIZATION_MODE_PASSTHROUGH);
ABI_SAME_VALUE(n::NVML_GPU_VIRTUALIZATION_MODE_VGPU, ::NVML_GPU_VIRTUALIZATION_MODE_VGPU);
ABI_SAME_VALUE(n::NVML_GPU_VIRTUALIZATION_MODE_HOST_VGPU, ::NVML_GPU_VIRTUALIZATION_MODE_HOST_VGPU);
ABI_SAME_VALUE(n::NVML_GPU_VIRTUALIZATION_MODE_HOST_VSGA, ::NVML_GPU_VIRTUALIZATION_MODE_HOST_VSGA);
ABI_SAME_VALUE(n::NVML_CLOCK_GRAPHICS, ::NVML_CLOCK_GRAPHICS);
ABI_SAME_VALUE(n::NVML_CLOCK_SM, ::NVML_CLOCK_SM);
ABI_SAME_VALUE(n::NVML_CLOCK_MEM, ::NVML_CLOCK_MEM);
ABI_SAME_VALUE(n::NVML_CLOCK_VIDEO, ::NVML_CLOCK_VIDEO);
ABI_SAME_VALUE(n::NVML_TEMPERATURE_GPU, ::NVML_TEMPERATURE_GPU);
ABI_SAME_VALUE(n::NVML_TEMPERATURE_THRESHOLD_SHUTDOWN, ::NVML_TEMPERATURE_THRESHOLD_SHUTDOWN);
ABI_SAME_VALUE(n::NVML_TEMPERATURE_THRESHOLD_SLOWDOWN, ::NVML_TEMPERATURE_THRESHOLD_SLOWDOWN);
ABI_SAME_VALUE(n::NVML_TEMPERATURE_THRESHOLD_MEM_MAX, ::NVML_TEMPERATURE_THRESHOLD_MEM_MAX);
ABI_SAME_VALUE(n::NVML_TEMPERATURE_THRESHOLD_GPU_MAX, ::NVML_TEMPERATURE_THRESHOLD_GPU_MAX);
ABI_SAME_VALUE(n::NVML_TOPOLOGY_INTERNAL, ::NVML_TOPOLOGY_INTERNAL);
ABI_SAME_VALUE(n::NVML_TOPOLOGY_SINGLE, ::NVML_TOPOLOGY_SINGLE);
ABI_SAME_VALUE(n::NVML_TOPOLOGY_MULTIPLE, ::NVML_TOPOLOGY_MULTIPLE);
ABI_SAME_VALUE(n::NVML_TOPOLOGY_HOSTBRIDGE, ::NVML_TOPOLOGY_HOSTBRIDGE);
ABI_SAME_VALUE(n::NVML_TOPOLOGY_NODE, ::NVML_TOPOLOGY_NODE);
ABI_SAME_VALUE(n::NVML_TOPOLOGY_SYSTEM, ::NVML_TOPOLOGY_SYSTEM);
ABI_SAME_VALUE(n::NVML_VALUE_TYPE_DOUBLE, ::NVML_VALUE_TYPE_DOUBLE);
ABI_SAME_VALUE(n::NVML_VALUE_TYPE_UNSIGNED_INT, ::NVML_VALUE_TYPE_UNSIGNED_INT);
ABI_SAME_VALUE(n::NVML_VALUE_TYPE_UNSIGNED_LONG, ::NVML_VALUE_TYPE_UNSIGNED_LONG);
ABI_SAME_VALUE(n::NVML_VALUE_TYPE_UNSIGNED_LONG_LONG, ::NVML_VALUE_TYPE_UNSIGNED_LONG_LONG);
ABI_SAME_VALUE(n::NVML_VALUE_TYPE_SIGNED_LONG_LONG, ::NVML_VALUE_TYPE_SIGNED_LONG_LONG);
ABI_SAME_VALUE(n::NVML_VALUE_TYPE_SIGNED_INT, ::NVML_VALUE_TYPE_SIGNED_INT);
ABI_SAME_VALUE(n::NVML_VALUE_TYPE_UNSIGNED_SHORT, ::NVML_VALUE_TYPE_UNSIGNED_SHORT);
ABI_SAME_VALUE(n::NVML_VALUE_TYPE_COUNT, ::NVML_VALUE_TYPE_COUNT);

// Constants nvml.h spells as macros.
ABI_SAME_VALUE(n::kPciBusIdBufferSize, NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE);
ABI_SAME_VALUE(n::kPciBusIdBufferV2Size, NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE);
ABI_SAME_VALUE(n::kDeviceNameV2BufferSize, NVML_DEVICE_NAME_V2_BUFFER_SIZE);
ABI_SAME_VALUE(n::kDeviceUuidV2BufferSize, NVML_DEVICE_UUID_V2_BUFFER_SIZE);
ABI_SAME_VALUE(n::kDeviceSerialBufferSize, NVML_DEVICE_SERIAL_BUFFER_SIZE);
ABI_SAME_VALUE(n::kDeviceVbiosVersionBufferSize, NVML_DEVICE_VBIOS_VERSION_BUFFER_SIZE);
ABI_SAME_VALUE(n::kDeviceInforomVersionBufferSize, NVML_DEVICE_INFOROM_VERSION_BUFFER_SIZE);
ABI_SAME_VALUE(n::kSystemDriverVersionBufferSize, NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE);
ABI_SAME_VALUE(n::kSystemNvmlVersionBufferSize, NVML_SYSTEM_NVML_VERSION_BUFFER_SIZE);
ABI_SAME_VALUE(n::kNvLinkMaxLinks, NVML_NVLINK_MAX_LINKS);
ABI_SAME_VALUE(n::kDeviceArchKepler, NVML_DEVICE_ARCH_KEPLER);
ABI_SAME_VALUE(n::kDeviceArchMaxwell, NVML_DEVICE_ARCH_MAXWELL);
ABI_SAME_VALUE(n::kDeviceArchPascal, NVML_DEVICE_ARCH_PASCAL);
ABI_SAME_VALUE(n::kDeviceArchVolta, NVML_DEVICE_ARCH_VOLTA);
ABI_SAME_VALUE(n::kDeviceArchTuring, NVML_DEVICE_ARCH_TURING);
ABI_SAME_VALUE(n::kDeviceArchAmpere, NVML_DEVICE_ARCH_AMPERE);
ABI_SAME_VALUE(n::kDeviceArchAda, NVML_DEVICE_ARCH_ADA);
ABI_SAME_VALUE(n::kDeviceArchHopper, NVML_DEVICE_ARCH_HOPPER);
ABI_SAME_VALUE(n::kDeviceArchBlackwell, NVML_DEVICE_ARCH_BLACKWELL);
ABI_SAME_VALUE(n::kDeviceArchUnknown, NVML_DEVICE_ARCH_UNKNOWN);
ABI_SAME_VALUE(n::kFiDevMemoryTemp, NVML_FI_DEV_MEMORY_TEMP);
ABI_SAME_VALUE(n::kClocksEventReasonGpuIdle, nvmlClocksEventReasonGpuIdle);
ABI_SAME_VALUE(n::kClocksEventReasonApplicationsClocksSetting, nvmlClocksEventReasonApplicationsClocksSetting);
ABI_SAME_VALUE(n::kClocksEventReasonSwPowerCap, nvmlClocksEventReasonSwPowerCap);
ABI_SAME_VALUE(n::kClocksEventReasonHwSlowdown, nvmlClocksThrottleReasonHwSlowdown);
ABI_SAME_VALUE(n::kClocksEventReasonSyncBoost, nvmlClocksEventReasonSyncBoost);
ABI_SAME_VALUE(n::kClocksEventReasonSwThermalSlowdown, nvmlClocksEventReasonSwThermalSlowdown);
ABI_SAME_VALUE(n::kClocksEventReasonHwThermalSlowdown, nvmlClocksThrottleReasonHwThermalSlowdown);
ABI_SAME_VALUE(n::kClocksEventReasonHwPowerBrakeSlowdown, nvmlClocksThrottleReasonHwPowerBrakeSlowdown);
ABI_SAME_VALUE(n::kClocksEventReasonDisplayClockSetting, nvmlClocksEventReasonDisplayClockSetting);
ABI_SAME_VALUE(n::kClocksEventReasonBoardLimit, nvmlClocksEventReasonBoardLimit);
ABI_SAME_VALUE(n::kClocksEventReasonReliability, nvmlClocksEventReasonReliability);
ABI_SAME_VALUE(n::kEventTypeSingleBitEccError, nvmlEventTypeSingleBitEccError);
ABI_SAME_VALUE(n::kEventTypeDoubleBitEccError, nvmlEventTypeDoubleBitEccError);
ABI_SAME_VALUE(n::kEventTypePState, nvmlEventTypePState);
ABI_SAME_VALUE(n::kEventTypeXidCriticalError, nvmlEventTypeXidCriticalError);
ABI_SAME_VALUE(n::kEventTypeClock, nvmlEventTypeClock);
ABI_SAME_VALUE(n::kGpmMetricsGetVersion, NVML_GPM_METRICS_GET_VERSION);
ABI_SAME_VALUE(n::kGpmSupportVersion, NVML_GPM_SUPPORT_VERSION);
ABI_SAME_VALUE(n::kGpmMetricSmUtil, NVML_GPM_METRIC_SM_UTIL);
ABI_SAME_VALUE(n::kGpmMetricSmOccupancy, NVML_GPM_METRIC_SM_OCCUPANCY);
ABI_SAME_VALUE(n::kGpmMetricAnyTensorUtil, NVML_GPM_METRIC_ANY_TENSOR_UTIL);
ABI_SAME_VALUE(n::kGpmMetricDramBwUtil, NVML_GPM_METRIC_DRAM_BW_UTIL);
ABI_SAME_VALUE(n::kDeviceMigEnable, NVML_DEVICE_MIG_ENABLE);

// Version constants of the versioned structs we pass (sizeof | version << 24).
ABI_SAME_VALUE(n::kPciInfoExt_v1, nvmlPciInfoExt_v1);
ABI_SAME_VALUE(n::kMemory_v2, nvmlMemory_v2);

int check_nvml_runtime() {
    int failures = 0;
    if ((n::kMemory_v2 >> 24) != 2 || (n::kMemory_v2 & 0xffffff) != sizeof(::nvmlMemory_v2_t)) ++failures;
    if ((n::kPciInfoExt_v1 >> 24) != 1 || (n::kPciInfoExt_v1 & 0xffffff) != sizeof(::nvmlPciInfoExt_v1_t)) ++failures;
    return failures;
}
