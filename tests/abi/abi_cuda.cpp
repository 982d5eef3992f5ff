// gpuvet's CUDA driver API declarations against cuda.h. Our headers come first: cuda.h's macros
// (cuMemAlloc -> cuMemAlloc_v2, ...) must not rewrite them.
#include "gpu/bindings/cuda_api.hpp"
// clang-format off
#include <cuda.h>
// clang-format on
#include <cstddef>

#include "official_map.hpp"

namespace abi {
namespace c = gpuvet::cu;
ABI_ENUM(c::CUresult, ::CUresult);
ABI_ENUM(c::CUdevice_attribute, ::CUdevice_attribute);
ABI_MAP(c::CUuuid, ::CUuuid);
ABI_ENUM(c::CUjit_option, ::CUjit_option);
ABI_ENUM(c::CUmemRangeHandleType, ::CUmemRangeHandleType);
}  // namespace abi

namespace c = gpuvet::cu;

// Handle and scalar types are the very same types.
static_assert(std::is_same_v<c::CUdevice, ::CUdevice>);
static_assert(std::is_same_v<c::CUdeviceptr, ::CUdeviceptr>);
static_assert(std::is_same_v<c::CUcontext, ::CUcontext>);
static_assert(std::is_same_v<c::CUmodule, ::CUmodule>);
static_assert(std::is_same_v<c::CUfunction, ::CUfunction>);
static_assert(std::is_same_v<c::CUstream, ::CUstream>);
static_assert(std::is_same_v<c::CUevent, ::CUevent>);
ABI_SAME_OFFSET(c::CUuuid, ::CUuuid, bytes);

// Function signatures; the versioned names are the symbols the table binds.
ABI_SAME_FN(c::cuInit_fn, cuInit);
ABI_SAME_FN(c::cuDriverGetVersion_fn, cuDriverGetVersion);
ABI_SAME_FN(c::cuDeviceGetCount_fn, cuDeviceGetCount);
ABI_SAME_FN(c::cuDeviceGet_fn, cuDeviceGet);
ABI_SAME_FN(c::cuDeviceGetName_fn, cuDeviceGetName);
ABI_SAME_FN(c::cuDeviceTotalMem_v2_fn, cuDeviceTotalMem_v2);
ABI_SAME_FN(c::cuDeviceGetAttribute_fn, cuDeviceGetAttribute);
ABI_SAME_FN(c::cuDeviceGetUuid_fn, cuDeviceGetUuid_v2);
ABI_SAME_FN(c::cuDevicePrimaryCtxRetain_fn, cuDevicePrimaryCtxRetain);
ABI_SAME_FN(c::cuDevicePrimaryCtxRelease_fn, cuDevicePrimaryCtxRelease_v2);
ABI_SAME_FN(c::cuCtxSetCurrent_fn, cuCtxSetCurrent);
ABI_SAME_FN(c::cuModuleLoadData_fn, cuModuleLoadData);
ABI_SAME_FN(c::cuModuleLoadDataEx_fn, cuModuleLoadDataEx);
ABI_SAME_FN(c::cuMemcpyHtoDAsync_v2_fn, cuMemcpyHtoDAsync_v2);
ABI_SAME_FN(c::cuMemcpyDtoHAsync_v2_fn, cuMemcpyDtoHAsync_v2);
ABI_SAME_FN(c::cuMemsetD32Async_fn, cuMemsetD32Async);
ABI_SAME_FN(c::cuStreamWaitEvent_fn, cuStreamWaitEvent);
ABI_SAME_FN(c::cuModuleGetFunction_fn, cuModuleGetFunction);
ABI_SAME_FN(c::cuLaunchKernel_fn, cuLaunchKernel);
ABI_SAME_FN(c::cuMemAlloc_v2_fn, cuMemAlloc_v2);
ABI_SAME_FN(c::cuMemFree_v2_fn, cuMemFree_v2);
ABI_SAME_FN(c::cuMemcpyHtoD_v2_fn, cuMemcpyHtoD_v2);
ABI_SAME_FN(c::cuMemcpyDtoH_v2_fn, cuMemcpyDtoH_v2);
ABI_SAME_FN(c::cuMemcpyDtoD_v2_fn, cuMemcpyDtoD_v2);
ABI_SAME_FN(c::cuMemsetD8_v2_fn, cuMemsetD8_v2);
ABI_SAME_FN(c::cuMemHostAlloc_fn, cuMemHostAlloc);
ABI_SAME_FN(c::cuMemFreeHost_fn, cuMemFreeHost);
ABI_SAME_FN(c::cuMemcpyAsync_fn, cuMemcpyAsync);
ABI_SAME_FN(c::cuStreamCreate_fn, cuStreamCreate);
ABI_SAME_FN(c::cuStreamSynchronize_fn, cuStreamSynchronize);
ABI_SAME_FN(c::cuStreamDestroy_v2_fn, cuStreamDestroy_v2);
ABI_SAME_FN(c::cuEventCreate_fn, cuEventCreate);
ABI_SAME_FN(c::cuEventRecord_fn, cuEventRecord);
ABI_SAME_FN(c::cuEventSynchronize_fn, cuEventSynchronize);
ABI_SAME_FN(c::cuEventElapsedTime_fn, cuEventElapsedTime_v2);
ABI_SAME_FN(c::cuEventDestroy_v2_fn, cuEventDestroy_v2);
ABI_SAME_FN(c::cuMemGetInfo_v2_fn, cuMemGetInfo_v2);
ABI_SAME_FN(c::cuCtxSynchronize_fn, cuCtxSynchronize);
ABI_SAME_FN(c::cuDeviceCanAccessPeer_fn, cuDeviceCanAccessPeer);
ABI_SAME_FN(c::cuCtxEnablePeerAccess_fn, cuCtxEnablePeerAccess);
ABI_SAME_FN(c::cuMemcpyPeerAsync_fn, cuMemcpyPeerAsync);
ABI_SAME_FN(c::cuMemGetHandleForAddressRange_fn, cuMemGetHandleForAddressRange);
ABI_SAME_FN(c::cuGetErrorName_fn, cuGetErrorName);
ABI_SAME_FN(c::cuGetErrorString_fn, cuGetErrorString);

ABI_SAME_VALUE(c::CU_JIT_INFO_LOG_BUFFER, ::CU_JIT_INFO_LOG_BUFFER);
ABI_SAME_VALUE(c::CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, ::CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES);
ABI_SAME_VALUE(c::CU_JIT_ERROR_LOG_BUFFER, ::CU_JIT_ERROR_LOG_BUFFER);
ABI_SAME_VALUE(c::CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, ::CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES);

// Status values.
ABI_SAME_VALUE(c::CUDA_SUCCESS, ::CUDA_SUCCESS);
ABI_SAME_VALUE(c::CUDA_ERROR_INVALID_VALUE, ::CUDA_ERROR_INVALID_VALUE);
ABI_SAME_VALUE(c::CUDA_ERROR_OUT_OF_MEMORY, ::CUDA_ERROR_OUT_OF_MEMORY);
ABI_SAME_VALUE(c::CUDA_ERROR_NOT_INITIALIZED, ::CUDA_ERROR_NOT_INITIALIZED);
ABI_SAME_VALUE(c::CUDA_ERROR_DEINITIALIZED, ::CUDA_ERROR_DEINITIALIZED);
ABI_SAME_VALUE(c::CUDA_ERROR_NO_DEVICE, ::CUDA_ERROR_NO_DEVICE);
ABI_SAME_VALUE(c::CUDA_ERROR_INVALID_DEVICE, ::CUDA_ERROR_INVALID_DEVICE);
ABI_SAME_VALUE(c::CUDA_ERROR_INVALID_IMAGE, ::CUDA_ERROR_INVALID_IMAGE);
ABI_SAME_VALUE(c::CUDA_ERROR_NO_BINARY_FOR_GPU, ::CUDA_ERROR_NO_BINARY_FOR_GPU);
ABI_SAME_VALUE(c::CUDA_ERROR_ECC_UNCORRECTABLE, ::CUDA_ERROR_ECC_UNCORRECTABLE);
ABI_SAME_VALUE(c::CUDA_ERROR_INVALID_PTX, ::CUDA_ERROR_INVALID_PTX);
ABI_SAME_VALUE(c::CUDA_ERROR_UNSUPPORTED_PTX_VERSION, ::CUDA_ERROR_UNSUPPORTED_PTX_VERSION);
ABI_SAME_VALUE(c::CUDA_ERROR_OPERATING_SYSTEM, ::CUDA_ERROR_OPERATING_SYSTEM);
ABI_SAME_VALUE(c::CUDA_ERROR_NOT_FOUND, ::CUDA_ERROR_NOT_FOUND);
ABI_SAME_VALUE(c::CUDA_ERROR_NOT_READY, ::CUDA_ERROR_NOT_READY);
ABI_SAME_VALUE(c::CUDA_ERROR_ILLEGAL_ADDRESS, ::CUDA_ERROR_ILLEGAL_ADDRESS);
ABI_SAME_VALUE(c::CUDA_ERROR_LAUNCH_TIMEOUT, ::CUDA_ERROR_LAUNCH_TIMEOUT);
ABI_SAME_VALUE(c::CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED, ::CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED);
ABI_SAME_VALUE(c::CUDA_ERROR_HARDWARE_STACK_ERROR, ::CUDA_ERROR_HARDWARE_STACK_ERROR);
ABI_SAME_VALUE(c::CUDA_ERROR_LAUNCH_FAILED, ::CUDA_ERROR_LAUNCH_FAILED);
ABI_SAME_VALUE(c::CUDA_ERROR_NOT_PERMITTED, ::CUDA_ERROR_NOT_PERMITTED);
ABI_SAME_VALUE(c::CUDA_ERROR_NOT_SUPPORTED, ::CUDA_ERROR_NOT_SUPPORTED);
ABI_SAME_VALUE(c::CUDA_ERROR_SYSTEM_NOT_READY, ::CUDA_ERROR_SYSTEM_NOT_READY);
ABI_SAME_VALUE(c::CUDA_ERROR_SYSTEM_DRIVER_MISMATCH, ::CUDA_ERROR_SYSTEM_DRIVER_MISMATCH);
ABI_SAME_VALUE(c::CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE, ::CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE);
ABI_SAME_VALUE(c::CUDA_ERROR_UNKNOWN, ::CUDA_ERROR_UNKNOWN);

// Device attributes.
ABI_SAME_VALUE(c::CU_DEVICE_ATTRIBUTE_CLOCK_RATE, ::CU_DEVICE_ATTRIBUTE_CLOCK_RATE);
ABI_SAME_VALUE(c::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, ::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
ABI_SAME_VALUE(c::CU_DEVICE_ATTRIBUTE_ECC_ENABLED, ::CU_DEVICE_ATTRIBUTE_ECC_ENABLED);
ABI_SAME_VALUE(c::CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, ::CU_DEVICE_ATTRIBUTE_PCI_BUS_ID);
ABI_SAME_VALUE(c::CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID, ::CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID);
ABI_SAME_VALUE(c::CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE, ::CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE);
ABI_SAME_VALUE(c::CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH, ::CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH);
ABI_SAME_VALUE(c::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, ::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE);
ABI_SAME_VALUE(c::CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID, ::CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID);
ABI_SAME_VALUE(c::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, ::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
ABI_SAME_VALUE(c::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, ::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
ABI_SAME_VALUE(c::CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED, ::CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED);
ABI_SAME_VALUE(c::CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, ::CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD);

// Flags.
ABI_SAME_VALUE(c::CU_STREAM_DEFAULT, ::CU_STREAM_DEFAULT);
ABI_SAME_VALUE(c::CU_STREAM_NON_BLOCKING, ::CU_STREAM_NON_BLOCKING);
ABI_SAME_VALUE(c::CU_EVENT_DEFAULT, ::CU_EVENT_DEFAULT);
ABI_SAME_VALUE(c::CU_EVENT_BLOCKING_SYNC, ::CU_EVENT_BLOCKING_SYNC);
ABI_SAME_VALUE(c::CU_EVENT_DISABLE_TIMING, ::CU_EVENT_DISABLE_TIMING);
ABI_SAME_VALUE(c::kMemHostAllocPortable, CU_MEMHOSTALLOC_PORTABLE);
ABI_SAME_VALUE(c::kMemHostAllocDeviceMap, CU_MEMHOSTALLOC_DEVICEMAP);
