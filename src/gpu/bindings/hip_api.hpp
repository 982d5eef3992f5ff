// HIP (libamdhip64.so), loaded at run time for gpuvet's AMD kernels: code objects loaded through
// the module API, device memory, copies and events. Our own declarations of what gpuvet uses;
// tests/abi proves them equal to Debian's hip_runtime_api.h (HIP 5.2). Every function here kept
// its name and signature through HIP 6 and 7; hipGetDeviceProperties is not used because HIP 6
// changed hipDeviceProp_t (hipGetDevicePropertiesR0600): the gfx target comes from AMD SMI.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "gpu/bindings/dynlib.hpp"
#include "gpu/bindings/symbol_table.hpp"

// Opaque handles: declared at global scope so they are the very types hip_runtime_api.h names.
struct ihipStream_t;
struct ihipModule_t;
struct ihipModuleSymbol_t;
struct ihipEvent_t;

namespace gpuvet::hip {

using hipDevice_t = int;
using hipStream_t = ::ihipStream_t*;
using hipModule_t = ::ihipModule_t*;
using hipFunction_t = ::ihipModuleSymbol_t*;
using hipEvent_t = ::ihipEvent_t*;

// The statuses gpuvet names; any other value is reported by number (and hipGetErrorName).
enum hipError_t : unsigned {
    hipSuccess = 0,
    hipErrorInvalidValue = 1,
    hipErrorOutOfMemory = 2,
    hipErrorNotInitialized = 3,
    hipErrorDeinitialized = 4,
    hipErrorInsufficientDriver = 35,
    hipErrorInvalidDeviceFunction = 98,
    hipErrorNoDevice = 100,
    hipErrorInvalidDevice = 101,
    hipErrorInvalidImage = 200,
    hipErrorInvalidContext = 201,
    hipErrorNoBinaryForGpu = 209,
    hipErrorECCNotCorrectable = 214,
    hipErrorInvalidKernelFile = 218,
    hipErrorFileNotFound = 301,
    hipErrorSharedObjectInitFailed = 303,
    hipErrorOperatingSystem = 304,
    hipErrorInvalidHandle = 400,
    hipErrorNotFound = 500,
    hipErrorNotReady = 600,
    hipErrorIllegalAddress = 700,
    hipErrorLaunchOutOfResources = 701,
    hipErrorLaunchTimeOut = 702,
    hipErrorAssert = 710,
    hipErrorLaunchFailure = 719,
    hipErrorNotSupported = 801,
    hipErrorUnknown = 999,
    hipErrorRuntimeMemory = 1052,
    hipErrorRuntimeOther = 1053,
};

enum hipMemcpyKind : unsigned {
    hipMemcpyHostToHost = 0,
    hipMemcpyHostToDevice = 1,
    hipMemcpyDeviceToHost = 2,
    hipMemcpyDeviceToDevice = 3,
    hipMemcpyDefault = 4,
};
inline constexpr unsigned kHostMallocDefault = 0x0;  // hipHostMallocDefault
inline constexpr unsigned kEventDefault = 0x0;       // hipEventDefault
// hipDeviceAttribute_t: the values are the same in HIP 5.2 (Debian) and in ROCm/HIP at c5e11fcac8249ce4
// (2024, ROCm 6.3): the enum has kept its numbering since HIP 5.0 made it CUDA-compatible.
enum hipDeviceAttribute_t : unsigned { hipDeviceAttributeL2CacheSize = 19, hipDeviceAttributeMultiprocessorCount = 63 };

using hipInit_fn = hipError_t (*)(unsigned int);
using hipGetInt_fn = hipError_t (*)(int*);  // hipDriverGetVersion, hipRuntimeGetVersion, hipGetDeviceCount
using hipSetDevice_fn = hipError_t (*)(int);
using hipDeviceGet_fn = hipError_t (*)(hipDevice_t*, int);
using hipDeviceGetName_fn = hipError_t (*)(char*, int, hipDevice_t);
using hipDeviceGetPCIBusId_fn = hipError_t (*)(char*, int, int);
using hipDeviceTotalMem_fn = hipError_t (*)(size_t*, hipDevice_t);
using hipDeviceGetAttribute_fn = hipError_t (*)(int*, hipDeviceAttribute_t, int);
using hipMemGetInfo_fn = hipError_t (*)(size_t*, size_t*);
using hipMalloc_fn = hipError_t (*)(void**, size_t);
using hipFree_fn = hipError_t (*)(void*);
using hipHostMalloc_fn = hipError_t (*)(void**, size_t, unsigned int);
using hipMemcpy_fn = hipError_t (*)(void*, const void*, size_t, hipMemcpyKind);
using hipMemcpyAsync_fn = hipError_t (*)(void*, const void*, size_t, hipMemcpyKind, hipStream_t);
using hipMemset_fn = hipError_t (*)(void*, int, size_t);
using hipModuleLoadData_fn = hipError_t (*)(hipModule_t*, const void*);
using hipModuleUnload_fn = hipError_t (*)(hipModule_t);
using hipModuleGetFunction_fn = hipError_t (*)(hipFunction_t*, hipModule_t, const char*);
using hipModuleLaunchKernel_fn = hipError_t (*)(hipFunction_t, unsigned int, unsigned int, unsigned int, unsigned int,
                                                unsigned int, unsigned int, unsigned int, hipStream_t, void**, void**);
using hipStreamCreate_fn = hipError_t (*)(hipStream_t*);
using hipStream_fn = hipError_t (*)(hipStream_t);  // hipStreamDestroy, hipStreamSynchronize
using hipEventCreate_fn = hipError_t (*)(hipEvent_t*);
using hipEvent_fn = hipError_t (*)(hipEvent_t);  // hipEventDestroy, hipEventSynchronize
using hipEventRecord_fn = hipError_t (*)(hipEvent_t, hipStream_t);
using hipStreamWaitEvent_fn = hipError_t (*)(hipStream_t, hipEvent_t, unsigned int);
using hipEventElapsedTime_fn = hipError_t (*)(float*, hipEvent_t, hipEvent_t);
using hipDeviceSynchronize_fn = hipError_t (*)();
using hipGetErrorName_fn = const char* (*)(hipError_t);

}  // namespace gpuvet::hip

namespace gpuvet {
// A wrapped HIP call that got no answer (driver_deadline.hpp): a value HIP never returns (its
// statuses stop far below it), inside the enum's unsigned range.
inline constexpr unsigned kHipNoAnswer = 1000;
template <>
struct NoAnswer<hip::hipError_t> {
    static hip::hipError_t value() { return static_cast<hip::hipError_t>(kHipNoAnswer); }
};
}  // namespace gpuvet

namespace gpuvet {

// Names another library file to load instead (a test double, or /nonexistent).
inline constexpr const char* kEnvLibHip = "GPUVET_LIBHIP";

struct HipApi {
    hip::hipInit_fn hipInit = nullptr;
    hip::hipGetInt_fn hipGetDeviceCount = nullptr;
    hip::hipSetDevice_fn hipSetDevice = nullptr;
    hip::hipMalloc_fn hipMalloc = nullptr;
    hip::hipFree_fn hipFree = nullptr;
    hip::hipMemcpy_fn hipMemcpy = nullptr;
    hip::hipModuleLoadData_fn hipModuleLoadData = nullptr;
    hip::hipModuleUnload_fn hipModuleUnload = nullptr;
    hip::hipModuleGetFunction_fn hipModuleGetFunction = nullptr;
    hip::hipModuleLaunchKernel_fn hipModuleLaunchKernel = nullptr;
    hip::hipDeviceSynchronize_fn hipDeviceSynchronize = nullptr;

    hip::hipGetInt_fn hipDriverGetVersion = nullptr;
    hip::hipGetInt_fn hipRuntimeGetVersion = nullptr;
    hip::hipDeviceGet_fn hipDeviceGet = nullptr;
    hip::hipDeviceGetName_fn hipDeviceGetName = nullptr;
    hip::hipDeviceGetPCIBusId_fn hipDeviceGetPCIBusId = nullptr;
    hip::hipDeviceTotalMem_fn hipDeviceTotalMem = nullptr;
    hip::hipDeviceGetAttribute_fn hipDeviceGetAttribute = nullptr;
    hip::hipMemGetInfo_fn hipMemGetInfo = nullptr;
    hip::hipHostMalloc_fn hipHostMalloc = nullptr;
    hip::hipFree_fn hipHostFree = nullptr;
    hip::hipMemcpyAsync_fn hipMemcpyAsync = nullptr;
    hip::hipMemset_fn hipMemset = nullptr;
    hip::hipStreamCreate_fn hipStreamCreate = nullptr;
    hip::hipStream_fn hipStreamDestroy = nullptr;
    hip::hipStream_fn hipStreamSynchronize = nullptr;
    hip::hipStreamWaitEvent_fn hipStreamWaitEvent = nullptr;
    hip::hipEventCreate_fn hipEventCreate = nullptr;
    hip::hipEvent_fn hipEventDestroy = nullptr;
    hip::hipEventRecord_fn hipEventRecord = nullptr;
    hip::hipEvent_fn hipEventSynchronize = nullptr;
    hip::hipEventElapsedTime_fn hipEventElapsedTime = nullptr;
    hip::hipGetErrorName_fn hipGetErrorName = nullptr;
    hip::hipGetErrorName_fn hipGetErrorString = nullptr;

    std::string path;
    std::string error;
    SymbolResolution symbols;

    bool ok() const { return error.empty(); }
    // Loads through GPUVET_LIBHIP, else the usual sonames and /opt/rocm/lib, every call under the
    // deadline of driver_lib("HIP") (driver_deadline.hpp). Never throws.
    static HipApi load();
    static HipApi load_file(const std::string& file);
    static HipApi from_library(const DynLib& lib, DriverLib* deadline = nullptr);
    // hipGetErrorName's answer, else our table's.
    std::string error_name(unsigned code) const;
};

std::span<const SymbolEntry<HipApi>> hip_symbol_table();
std::vector<std::string> hip_candidates();

// "hipErrorNoBinaryForGpu"; "hipError<code>" when unknown.
std::string hip_status_name(unsigned code);
// What to do about a status ("no code object for this GPU's gfx target: ...").
std::string hip_advice(unsigned code);

}  // namespace gpuvet
