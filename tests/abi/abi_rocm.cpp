// gpuvet's ROCm SMI and HIP declarations against Debian's rocm_smi.h and hip_runtime_api.h
// (ROCm 5.2). Our headers come first so the vendor headers' macros cannot rewrite them.
#include "gpu/bindings/hip_api.hpp"
#include "gpu/bindings/hipblaslt_api.hpp"
#include "gpu/bindings/rocm_smi_api.hpp"
// clang-format off
#define __HIP_PLATFORM_AMD__ 1
#include <hip/hip_runtime_api.h>
#include <hip/library_types.h>
#include <rocm_smi/rocm_smi.h>
// clang-format on
#include <cstddef>

#include "official_map.hpp"

namespace abi {
namespace r = gpuvet::rsmi;
ABI_ENUM(r::rsmi_status_t, ::rsmi_status_t);
ABI_ENUM(r::rsmi_memory_type_t, ::rsmi_memory_type_t);
ABI_ENUM(r::rsmi_gpu_block_t, ::rsmi_gpu_block_t);
ABI_ENUM(r::rsmi_memory_page_status_t, ::rsmi_memory_page_status_t);
ABI_ENUM(r::rsmi_temperature_metric_t, ::rsmi_temperature_metric_t);
ABI_ENUM(r::rsmi_temperature_type_t, ::rsmi_temperature_type_t);
ABI_ENUM(r::rsmi_clk_type_t, ::rsmi_clk_type_t);
ABI_ENUM(r::RSMI_IO_LINK_TYPE, ::RSMI_IO_LINK_TYPE);
ABI_ENUM(r::rsmi_sw_component_t, ::rsmi_sw_component_t);
ABI_ENUM(r::rsmi_xgmi_status_t, ::rsmi_xgmi_status_t);
ABI_ENUM(r::rsmi_dev_perf_level_t, ::rsmi_dev_perf_level_t);
ABI_MAP(r::rsmi_error_count_t, ::rsmi_error_count_t);
ABI_MAP(r::rsmi_retired_page_record_t, ::rsmi_retired_page_record_t);
ABI_MAP(r::rsmi_frequencies_t, ::rsmi_frequencies_t);
ABI_MAP(r::rsmi_pcie_bandwidth_t, ::rsmi_pcie_bandwidth_t);
ABI_MAP(r::rsmi_process_info_t, ::rsmi_process_info_t);
ABI_MAP(r::rsmi_version_t, ::rsmi_version_t);

namespace h = gpuvet::hip;
ABI_ENUM(h::hipError_t, ::hipError_t);
ABI_ENUM(h::hipMemcpyKind, ::hipMemcpyKind);
ABI_ENUM(h::hipDeviceAttribute_t, ::hipDeviceAttribute_t);
}  // namespace abi

namespace r = gpuvet::rsmi;
namespace h = gpuvet::hip;

// ROCm SMI: statuses, constants and the members gpuvet reads.
ABI_SAME_VALUE(r::RSMI_STATUS_SUCCESS, ::RSMI_STATUS_SUCCESS);
ABI_SAME_VALUE(r::RSMI_STATUS_NOT_SUPPORTED, ::RSMI_STATUS_NOT_SUPPORTED);
ABI_SAME_VALUE(r::RSMI_STATUS_PERMISSION, ::RSMI_STATUS_PERMISSION);
ABI_SAME_VALUE(r::RSMI_STATUS_INIT_ERROR, ::RSMI_STATUS_INIT_ERROR);
ABI_SAME_VALUE(r::RSMI_STATUS_NOT_YET_IMPLEMENTED, ::RSMI_STATUS_NOT_YET_IMPLEMENTED);
ABI_SAME_VALUE(r::RSMI_STATUS_NOT_FOUND, ::RSMI_STATUS_NOT_FOUND);
ABI_SAME_VALUE(r::RSMI_STATUS_INSUFFICIENT_SIZE, ::RSMI_STATUS_INSUFFICIENT_SIZE);
ABI_SAME_VALUE(r::RSMI_STATUS_NO_DATA, ::RSMI_STATUS_NO_DATA);
ABI_SAME_VALUE(r::RSMI_STATUS_BUSY, ::RSMI_STATUS_BUSY);
ABI_SAME_VALUE(r::RSMI_STATUS_REFCOUNT_OVERFLOW, ::RSMI_STATUS_REFCOUNT_OVERFLOW);
ABI_SAME_VALUE(r::RSMI_STATUS_UNKNOWN_ERROR, ::RSMI_STATUS_UNKNOWN_ERROR);
ABI_SAME_VALUE(r::RSMI_GPU_BLOCK_UMC, ::RSMI_GPU_BLOCK_UMC);
ABI_SAME_VALUE(r::RSMI_GPU_BLOCK_XGMI_WAFL, ::RSMI_GPU_BLOCK_XGMI_WAFL);
ABI_SAME_VALUE(r::RSMI_GPU_BLOCK_FUSE, ::RSMI_GPU_BLOCK_FUSE);
ABI_SAME_VALUE(r::RSMI_GPU_BLOCK_RESERVED, ::RSMI_GPU_BLOCK_RESERVED);
ABI_SAME_VALUE(r::RSMI_TEMP_TYPE_JUNCTION, ::RSMI_TEMP_TYPE_JUNCTION);
ABI_SAME_VALUE(r::RSMI_TEMP_TYPE_MEMORY, ::RSMI_TEMP_TYPE_MEMORY);
ABI_SAME_VALUE(r::RSMI_TEMP_TYPE_HBM_3, ::RSMI_TEMP_TYPE_HBM_3);
ABI_SAME_VALUE(r::RSMI_TEMP_CRITICAL, ::RSMI_TEMP_CRITICAL);
ABI_SAME_VALUE(r::RSMI_TEMP_EMERGENCY, ::RSMI_TEMP_EMERGENCY);
ABI_SAME_VALUE(r::RSMI_TEMP_HIGHEST, ::RSMI_TEMP_HIGHEST);
ABI_SAME_VALUE(r::RSMI_CLK_TYPE_MEM, ::RSMI_CLK_TYPE_MEM);
ABI_SAME_VALUE(r::RSMI_CLK_TYPE_PCIE, ::RSMI_CLK_TYPE_PCIE);
ABI_SAME_VALUE(r::RSMI_IOLINK_TYPE_XGMI, ::RSMI_IOLINK_TYPE_XGMI);
ABI_SAME_VALUE(r::RSMI_XGMI_STATUS_MULTIPLE_ERRORS, ::RSMI_XGMI_STATUS_MULTIPLE_ERRORS);
ABI_SAME_VALUE(r::RSMI_DEV_PERF_LEVEL_DETERMINISM, ::RSMI_DEV_PERF_LEVEL_DETERMINISM);
ABI_SAME_VALUE(r::RSMI_DEV_PERF_LEVEL_UNKNOWN, ::RSMI_DEV_PERF_LEVEL_UNKNOWN);
ABI_SAME_VALUE(r::RSMI_MEM_PAGE_STATUS_UNRESERVABLE, ::RSMI_MEM_PAGE_STATUS_UNRESERVABLE);
ABI_SAME_VALUE(r::kMaxNumFrequencies, RSMI_MAX_NUM_FREQUENCIES);
ABI_SAME_VALUE(r::kInitFlagAllGpus, ::RSMI_INIT_FLAG_ALL_GPUS);
ABI_SAME_OFFSET(r::rsmi_frequencies_t, ::rsmi_frequencies_t, num_supported);
ABI_SAME_OFFSET(r::rsmi_frequencies_t, ::rsmi_frequencies_t, current);
ABI_SAME_OFFSET(r::rsmi_frequencies_t, ::rsmi_frequencies_t, frequency);
ABI_SAME_OFFSET(r::rsmi_pcie_bandwidth_t, ::rsmi_pcie_bandwidth_t, lanes);
ABI_SAME_OFFSET(r::rsmi_retired_page_record_t, ::rsmi_retired_page_record_t, status);
ABI_SAME_OFFSET(r::rsmi_process_info_t, ::rsmi_process_info_t, vram_usage);
ABI_SAME_OFFSET(r::rsmi_process_info_t, ::rsmi_process_info_t, cu_occupancy);
ABI_SAME_OFFSET(r::rsmi_version_t, ::rsmi_version_t, build);

ABI_SAME_FN(r::rsmi_init_fn, ::rsmi_init);
ABI_SAME_FN(r::rsmi_shut_down_fn, ::rsmi_shut_down);
ABI_SAME_FN(r::rsmi_num_monitor_devices_fn, ::rsmi_num_monitor_devices);
ABI_SAME_FN(r::rsmi_status_string_fn, ::rsmi_status_string);
ABI_SAME_FN(r::rsmi_version_get_fn, ::rsmi_version_get);
ABI_SAME_FN(r::rsmi_version_str_get_fn, ::rsmi_version_str_get);
ABI_SAME_FN(r::rsmi_dev_name_get_fn, ::rsmi_dev_name_get);
ABI_SAME_FN(r::rsmi_dev_string_fn, ::rsmi_dev_brand_get);
ABI_SAME_FN(r::rsmi_dev_string_fn, ::rsmi_dev_serial_number_get);
ABI_SAME_FN(r::rsmi_dev_string_fn, ::rsmi_dev_vbios_version_get);
ABI_SAME_FN(r::rsmi_dev_u16_fn, ::rsmi_dev_id_get);
ABI_SAME_FN(r::rsmi_dev_u16_fn, ::rsmi_dev_vendor_id_get);
ABI_SAME_FN(r::rsmi_dev_u16_fn, ::rsmi_dev_subsystem_id_get);
ABI_SAME_FN(r::rsmi_dev_u16_fn, ::rsmi_dev_subsystem_vendor_id_get);
ABI_SAME_FN(r::rsmi_dev_u64_fn, ::rsmi_dev_pci_id_get);
ABI_SAME_FN(r::rsmi_dev_u64_fn, ::rsmi_dev_unique_id_get);
ABI_SAME_FN(r::rsmi_dev_u64_fn, ::rsmi_dev_pci_replay_counter_get);
ABI_SAME_FN(r::rsmi_dev_u64_fn, ::rsmi_dev_xgmi_hive_id_get);
ABI_SAME_FN(r::rsmi_dev_u64_fn, ::rsmi_dev_ecc_enabled_get);
ABI_SAME_FN(r::rsmi_dev_u32_fn, ::rsmi_dev_busy_percent_get);
ABI_SAME_FN(r::rsmi_dev_u32_fn, ::rsmi_dev_memory_busy_percent_get);
ABI_SAME_FN(r::rsmi_dev_u32_fn, ::rsmi_topo_get_numa_node_number);
ABI_SAME_FN(r::rsmi_dev_u32_fn, ::rsmi_dev_drm_render_minor_get);
ABI_SAME_FN(r::rsmi_dev_memory_fn, ::rsmi_dev_memory_total_get);
ABI_SAME_FN(r::rsmi_dev_memory_fn, ::rsmi_dev_memory_usage_get);
ABI_SAME_FN(r::rsmi_dev_ecc_count_get_fn, ::rsmi_dev_ecc_count_get);
ABI_SAME_FN(r::rsmi_dev_memory_reserved_pages_get_fn, ::rsmi_dev_memory_reserved_pages_get);
ABI_SAME_FN(r::rsmi_dev_pci_bandwidth_get_fn, ::rsmi_dev_pci_bandwidth_get);
ABI_SAME_FN(r::rsmi_dev_pci_throughput_get_fn, ::rsmi_dev_pci_throughput_get);
ABI_SAME_FN(r::rsmi_dev_sensor_u64_fn, ::rsmi_dev_power_ave_get);
ABI_SAME_FN(r::rsmi_dev_sensor_u64_fn, ::rsmi_dev_power_cap_get);
ABI_SAME_FN(r::rsmi_dev_u64_fn, ::rsmi_dev_power_cap_default_get);
ABI_SAME_FN(r::rsmi_dev_power_cap_range_get_fn, ::rsmi_dev_power_cap_range_get);
ABI_SAME_FN(r::rsmi_dev_energy_count_get_fn, ::rsmi_dev_energy_count_get);
ABI_SAME_FN(r::rsmi_dev_temp_metric_get_fn, ::rsmi_dev_temp_metric_get);
ABI_SAME_FN(r::rsmi_dev_gpu_clk_freq_get_fn, ::rsmi_dev_gpu_clk_freq_get);
ABI_SAME_FN(r::rsmi_dev_perf_level_get_fn, ::rsmi_dev_perf_level_get);
ABI_SAME_FN(r::rsmi_dev_fan_speed_get_fn, ::rsmi_dev_fan_speed_get);
ABI_SAME_FN(r::rsmi_dev_xgmi_error_status_fn, ::rsmi_dev_xgmi_error_status);
ABI_SAME_FN(r::rsmi_topo_get_link_type_fn, ::rsmi_topo_get_link_type);
ABI_SAME_FN(r::rsmi_topo_pair_u64_fn, ::rsmi_topo_get_link_weight);
ABI_SAME_FN(r::rsmi_is_P2P_accessible_fn, ::rsmi_is_P2P_accessible);
ABI_SAME_FN(r::rsmi_compute_process_info_get_fn, ::rsmi_compute_process_info_get);
ABI_SAME_FN(r::rsmi_compute_process_gpus_get_fn, ::rsmi_compute_process_gpus_get);

// The ROCm 6 layout differs from the 5.2 one only by the leading bool (rocm_smi_lib 3d40c4b):
// the same members after it, at the offsets the C layout rules give.
static_assert(offsetof(r::rsmi_frequencies_v7_t, num_supported) == 4);
static_assert(offsetof(r::rsmi_frequencies_v7_t, current) == 8);
static_assert(offsetof(r::rsmi_frequencies_v7_t, frequency) == 16);
static_assert(sizeof(r::rsmi_frequencies_v7_t) == 16 + 8 * RSMI_MAX_NUM_FREQUENCIES);
static_assert(offsetof(r::rsmi_pcie_bandwidth_v7_t, lanes) == sizeof(r::rsmi_frequencies_v7_t));

// HIP: handles, statuses and signatures. Functions with C++ overloads or default arguments are
// compared through a cast to our pointer type, which compiles only for an exact match.
static_assert(std::is_same_v<h::hipDevice_t, ::hipDevice_t>);
static_assert(std::is_same_v<h::hipStream_t, ::hipStream_t>);
static_assert(std::is_same_v<h::hipModule_t, ::hipModule_t>);
static_assert(std::is_same_v<h::hipFunction_t, ::hipFunction_t>);
static_assert(std::is_same_v<h::hipEvent_t, ::hipEvent_t>);
ABI_SAME_VALUE(h::hipSuccess, ::hipSuccess);
ABI_SAME_VALUE(h::hipErrorInvalidValue, ::hipErrorInvalidValue);
ABI_SAME_VALUE(h::hipErrorOutOfMemory, ::hipErrorOutOfMemory);
ABI_SAME_VALUE(h::hipErrorNotInitialized, ::hipErrorNotInitialized);
ABI_SAME_VALUE(h::hipErrorDeinitialized, ::hipErrorDeinitialized);
ABI_SAME_VALUE(h::hipErrorInsufficientDriver, ::hipErrorInsufficientDriver);
ABI_SAME_VALUE(h::hipErrorInvalidDeviceFunction, ::hipErrorInvalidDeviceFunction);
ABI_SAME_VALUE(h::hipErrorNoDevice, ::hipErrorNoDevice);
ABI_SAME_VALUE(h::hipErrorInvalidDevice, ::hipErrorInvalidDevice);
ABI_SAME_VALUE(h::hipErrorInvalidImage, ::hipErrorInvalidImage);
ABI_SAME_VALUE(h::hipErrorInvalidContext, ::hipErrorInvalidContext);
ABI_SAME_VALUE(h::hipErrorNoBinaryForGpu, ::hipErrorNoBinaryForGpu);
ABI_SAME_VALUE(h::hipErrorECCNotCorrectable, ::hipErrorECCNotCorrectable);
ABI_SAME_VALUE(h::hipErrorInvalidKernelFile, ::hipErrorInvalidKernelFile);
ABI_SAME_VALUE(h::hipErrorFileNotFound, ::hipErrorFileNotFound);
ABI_SAME_VALUE(h::hipErrorSharedObjectInitFailed, ::hipErrorSharedObjectInitFailed);
ABI_SAME_VALUE(h::hipErrorOperatingSystem, ::hipErrorOperatingSystem);
ABI_SAME_VALUE(h::hipErrorInvalidHandle, ::hipErrorInvalidHandle);
ABI_SAME_VALUE(h::hipErrorNotFound, ::hipErrorNotFound);
ABI_SAME_VALUE(h::hipErrorNotReady, ::hipErrorNotReady);
ABI_SAME_VALUE(h::hipErrorIllegalAddress, ::hipErrorIllegalAddress);
ABI_SAME_VALUE(h::hipErrorLaunchOutOfResources, ::hipErrorLaunchOutOfResources);
ABI_SAME_VALUE(h::hipErrorLaunchTimeOut, ::hipErrorLaunchTimeOut);
ABI_SAME_VALUE(h::hipErrorAssert, ::hipErrorAssert);
ABI_SAME_VALUE(h::hipErrorLaunchFailure, ::hipErrorLaunchFailure);
ABI_SAME_VALUE(h::hipErrorNotSupported, ::hipErrorNotSupported);
ABI_SAME_VALUE(h::hipErrorUnknown, ::hipErrorUnknown);
ABI_SAME_VALUE(h::hipErrorRuntimeMemory, ::hipErrorRuntimeMemory);
ABI_SAME_VALUE(h::hipErrorRuntimeOther, ::hipErrorRuntimeOther);
ABI_SAME_VALUE(h::hipMemcpyHostToDevice, ::hipMemcpyHostToDevice);
ABI_SAME_VALUE(h::hipMemcpyDeviceToHost, ::hipMemcpyDeviceToHost);
ABI_SAME_VALUE(h::hipMemcpyDeviceToDevice, ::hipMemcpyDeviceToDevice);
ABI_SAME_VALUE(h::hipMemcpyDefault, ::hipMemcpyDefault);
ABI_SAME_VALUE(h::kHostMallocDefault, hipHostMallocDefault);
ABI_SAME_VALUE(h::kEventDefault, hipEventDefault);
ABI_SAME_VALUE(h::hipDeviceAttributeMultiprocessorCount, ::hipDeviceAttributeMultiprocessorCount);
ABI_SAME_VALUE(h::hipDeviceAttributeL2CacheSize, ::hipDeviceAttributeL2CacheSize);

// decltype keeps the cast unevaluated: nothing here links against HIP.
#define HIP_SAME_FN(OurFnType, fn)                                                                            \
    static_assert(                                                                                            \
        std::is_same_v<decltype(static_cast<abi::official_t<OurFnType>>(&::fn)), abi::official_t<OurFnType>>, \
        "signature of " #fn)
HIP_SAME_FN(h::hipInit_fn, hipInit);
HIP_SAME_FN(h::hipGetInt_fn, hipGetDeviceCount);
HIP_SAME_FN(h::hipGetInt_fn, hipDriverGetVersion);
HIP_SAME_FN(h::hipGetInt_fn, hipRuntimeGetVersion);
HIP_SAME_FN(h::hipSetDevice_fn, hipSetDevice);
HIP_SAME_FN(h::hipDeviceGet_fn, hipDeviceGet);
HIP_SAME_FN(h::hipDeviceGetName_fn, hipDeviceGetName);
HIP_SAME_FN(h::hipDeviceGetPCIBusId_fn, hipDeviceGetPCIBusId);
HIP_SAME_FN(h::hipDeviceTotalMem_fn, hipDeviceTotalMem);
HIP_SAME_FN(h::hipDeviceGetAttribute_fn, hipDeviceGetAttribute);
HIP_SAME_FN(h::hipMemGetInfo_fn, hipMemGetInfo);
HIP_SAME_FN(h::hipMalloc_fn, hipMalloc);
HIP_SAME_FN(h::hipFree_fn, hipFree);
HIP_SAME_FN(h::hipHostMalloc_fn, hipHostMalloc);
HIP_SAME_FN(h::hipFree_fn, hipHostFree);
HIP_SAME_FN(h::hipMemcpy_fn, hipMemcpy);
HIP_SAME_FN(h::hipMemcpyAsync_fn, hipMemcpyAsync);
HIP_SAME_FN(h::hipMemset_fn, hipMemset);
HIP_SAME_FN(h::hipModuleLoadData_fn, hipModuleLoadData);
HIP_SAME_FN(h::hipModuleUnload_fn, hipModuleUnload);
HIP_SAME_FN(h::hipModuleGetFunction_fn, hipModuleGetFunction);
HIP_SAME_FN(h::hipModuleLaunchKernel_fn, hipModuleLaunchKernel);
HIP_SAME_FN(h::hipStreamCreate_fn, hipStreamCreate);
HIP_SAME_FN(h::hipStream_fn, hipStreamDestroy);
HIP_SAME_FN(h::hipStream_fn, hipStreamSynchronize);
HIP_SAME_FN(h::hipStreamWaitEvent_fn, hipStreamWaitEvent);
HIP_SAME_FN(h::hipEventCreate_fn, hipEventCreate);
HIP_SAME_FN(h::hipEvent_fn, hipEventDestroy);
HIP_SAME_FN(h::hipEventRecord_fn, hipEventRecord);
HIP_SAME_FN(h::hipEvent_fn, hipEventSynchronize);
HIP_SAME_FN(h::hipEventElapsedTime_fn, hipEventElapsedTime);
HIP_SAME_FN(h::hipDeviceSynchronize_fn, hipDeviceSynchronize);
HIP_SAME_FN(h::hipGetErrorName_fn, hipGetErrorName);
HIP_SAME_FN(h::hipGetErrorName_fn, hipGetErrorString);

// The two hipDataType values Debian's ROCm 5.2 library_types.h already has (the others are newer:
// tests/abi/hipblaslt_facts.hpp).
static_assert(static_cast<int>(gpuvet::hiplt::HIP_R_32F) == static_cast<int>(::HIP_R_32F));
static_assert(static_cast<int>(gpuvet::hiplt::HIP_R_16F) == static_cast<int>(::HIP_R_16F));
