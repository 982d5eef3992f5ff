// The CUDA driver API (libcuda.so.1), loaded at run time. Our own declarations of the types,
// constants and signatures gpuvet uses, so no CUDA toolkit is needed to build; tests/abi proves
// them equal to cuda.h. cuda.h renames many functions by macro (cuMemAlloc -> cuMemAlloc_v2);
// we always bind the versioned symbol whose signature we declare.
#pragma once
#include <cstddef>
#include <string>

#include "core/error.hpp"
#include "gpu/bindings/dynlib.hpp"
#include "gpu/bindings/symbol_table.hpp"

// Opaque handles: declared at global scope so they are the very types cuda.h names.
struct CUctx_st;
struct CUmod_st;
struct CUfunc_st;
struct CUstream_st;
struct CUevent_st;

namespace gpuvet::cu {

using CUdevice = int;
using CUdeviceptr = unsigned long long;  // 64-bit builds only
using CUcontext = ::CUctx_st*;
using CUmodule = ::CUmod_st*;
using CUfunction = ::CUfunc_st*;
using CUstream = ::CUstream_st*;
using CUevent = ::CUevent_st*;

enum CUresult {
    CUDA_SUCCESS = 0,
    CUDA_ERROR_INVALID_VALUE = 1,
    CUDA_ERROR_OUT_OF_MEMORY = 2,
    CUDA_ERROR_NOT_INITIALIZED = 3,
    CUDA_ERROR_DEINITIALIZED = 4,
    CUDA_ERROR_NO_DEVICE = 100,
    CUDA_ERROR_INVALID_DEVICE = 101,
    CUDA_ERROR_INVALID_IMAGE = 200,
    CUDA_ERROR_NO_BINARY_FOR_GPU = 209,
    CUDA_ERROR_ECC_UNCORRECTABLE = 214,
    CUDA_ERROR_INVALID_PTX = 218,
    CUDA_ERROR_UNSUPPORTED_PTX_VERSION = 222,
    CUDA_ERROR_OPERATING_SYSTEM = 304,
    CUDA_ERROR_NOT_FOUND = 500,
    CUDA_ERROR_NOT_READY = 600,
    CUDA_ERROR_ILLEGAL_ADDRESS = 700,
    CUDA_ERROR_LAUNCH_TIMEOUT = 702,
    CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED = 704,
    CUDA_ERROR_HARDWARE_STACK_ERROR = 714,
    CUDA_ERROR_LAUNCH_FAILED = 719,
    CUDA_ERROR_NOT_PERMITTED = 800,
    CUDA_ERROR_NOT_SUPPORTED = 801,
    CUDA_ERROR_SYSTEM_NOT_READY = 802,
    CUDA_ERROR_SYSTEM_DRIVER_MISMATCH = 803,
    CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE = 804,
    CUDA_ERROR_UNKNOWN = 999
};

enum CUdevice_attribute {
    CU_DEVICE_ATTRIBUTE_CLOCK_RATE = 13,
    CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,
    CU_DEVICE_ATTRIBUTE_ECC_ENABLED = 32,
    CU_DEVICE_ATTRIBUTE_PCI_BUS_ID = 33,
    CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID = 34,
    CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE = 36,
    CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH = 37,
    CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE = 38,
    CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID = 50,
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
    CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED = 124  // CUDA 11.7
};

// cuMemGetHandleForAddressRange's handle types (cuda.h, CUDA 11.7): the DMA-BUF one writes an int fd.
enum CUmemRangeHandleType { CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD = 0x1, CU_MEM_RANGE_HANDLE_TYPE_MAX = 0x7FFFFFFF };

// cuModuleLoadDataEx options: JIT logs, so a failed JIT names its reason (values from cuda.h).
enum CUjit_option {
    CU_JIT_INFO_LOG_BUFFER = 3,
    CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES = 4,
    CU_JIT_ERROR_LOG_BUFFER = 5,
    CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6
};

enum CUstream_flags { CU_STREAM_DEFAULT = 0x0, CU_STREAM_NON_BLOCKING = 0x1 };
enum CUevent_flags { CU_EVENT_DEFAULT = 0x0, CU_EVENT_BLOCKING_SYNC = 0x1, CU_EVENT_DISABLE_TIMING = 0x2 };

// cuMemHostAlloc flags (macros in cuda.h).
inline constexpr unsigned kMemHostAllocPortable = 0x01;
inline constexpr unsigned kMemHostAllocDeviceMap = 0x02;

struct CUuuid {
    char bytes[16];
};

using cuInit_fn = CUresult (*)(unsigned int);
using cuDriverGetVersion_fn = CUresult (*)(int*);
using cuDeviceGetCount_fn = CUresult (*)(int*);
using cuDeviceGet_fn = CUresult (*)(CUdevice*, int);
using cuDeviceGetName_fn = CUresult (*)(char*, int, CUdevice);
using cuDeviceTotalMem_v2_fn = CUresult (*)(std::size_t*, CUdevice);
using cuDeviceGetAttribute_fn = CUresult (*)(int*, CUdevice_attribute, CUdevice);
using cuDeviceGetUuid_fn = CUresult (*)(CUuuid*, CUdevice);
using cuDevicePrimaryCtxRetain_fn = CUresult (*)(CUcontext*, CUdevice);
using cuDevicePrimaryCtxRelease_fn = CUresult (*)(CUdevice);
using cuCtxSetCurrent_fn = CUresult (*)(CUcontext);
using cuModuleLoadData_fn = CUresult (*)(CUmodule*, const void*);
using cuModuleLoadDataEx_fn = CUresult (*)(CUmodule*, const void*, unsigned int, CUjit_option*, void**);
using cuModuleGetFunction_fn = CUresult (*)(CUfunction*, CUmodule, const char*);
using cuLaunchKernel_fn = CUresult (*)(CUfunction, unsigned int, unsigned int, unsigned int, unsigned int, unsigned int,
                                       unsigned int, unsigned int, CUstream, void**, void**);
using cuMemAlloc_v2_fn = CUresult (*)(CUdeviceptr*, std::size_t);
using cuMemFree_v2_fn = CUresult (*)(CUdeviceptr);
using cuMemcpyHtoD_v2_fn = CUresult (*)(CUdeviceptr, const void*, std::size_t);
using cuMemcpyDtoH_v2_fn = CUresult (*)(void*, CUdeviceptr, std::size_t);
using cuMemcpyDtoD_v2_fn = CUresult (*)(CUdeviceptr, CUdeviceptr, std::size_t);
using cuMemsetD8_v2_fn = CUresult (*)(CUdeviceptr, unsigned char, std::size_t);
using cuMemHostAlloc_fn = CUresult (*)(void**, std::size_t, unsigned int);
using cuMemFreeHost_fn = CUresult (*)(void*);
using cuMemcpyAsync_fn = CUresult (*)(CUdeviceptr, CUdeviceptr, std::size_t, CUstream);
using cuMemcpyHtoDAsync_v2_fn = CUresult (*)(CUdeviceptr, const void*, std::size_t, CUstream);
using cuMemcpyDtoHAsync_v2_fn = CUresult (*)(void*, CUdeviceptr, std::size_t, CUstream);
using cuMemsetD32Async_fn = CUresult (*)(CUdeviceptr, unsigned int, std::size_t, CUstream);
using cuStreamWaitEvent_fn = CUresult (*)(CUstream, CUevent, unsigned int);
using cuStreamCreate_fn = CUresult (*)(CUstream*, unsigned int);
using cuStreamSynchronize_fn = CUresult (*)(CUstream);
using cuStreamDestroy_v2_fn = CUresult (*)(CUstream);
using cuEventCreate_fn = CUresult (*)(CUevent*, unsigned int);
using cuEventRecord_fn = CUresult (*)(CUevent, CUstream);
using cuEventSynchronize_fn = CUresult (*)(CUevent);
using cuEventElapsedTime_fn = CUresult (*)(float*, CUevent, CUevent);
using cuEventDestroy_v2_fn = CUresult (*)(CUevent);
using cuMemGetInfo_v2_fn = CUresult (*)(std::size_t*, std::size_t*);
using cuCtxSynchronize_fn = CUresult (*)();
using cuDeviceCanAccessPeer_fn = CUresult (*)(int*, CUdevice, CUdevice);
using cuCtxEnablePeerAccess_fn = CUresult (*)(CUcontext, unsigned int);
using cuMemcpyPeerAsync_fn = CUresult (*)(CUdeviceptr, CUcontext, CUdeviceptr, CUcontext, std::size_t, CUstream);
using cuMemGetHandleForAddressRange_fn = CUresult (*)(void*, CUdeviceptr, std::size_t, CUmemRangeHandleType,
                                                      unsigned long long);
using cuGetErrorName_fn = CUresult (*)(CUresult, const char**);
using cuGetErrorString_fn = CUresult (*)(CUresult, const char**);

}  // namespace gpuvet::cu

namespace gpuvet {
// A wrapped CUDA call that got no answer (driver_deadline.hpp): no CUDA status, inside the enum's range.
inline constexpr int kCudaNoAnswer = 1000;
template <>
struct NoAnswer<cu::CUresult> {
    static cu::CUresult value() { return static_cast<cu::CUresult>(kCudaNoAnswer); }
};

// Function pointers of the loaded libcuda; optional ones are nullptr when the driver lacks them.
// Names another library file to load instead (docs/testing.md): a test double, or /nonexistent.
inline constexpr const char* kEnvLibCuda = "GPUVET_LIBCUDA";

struct CudaApi {
    // Required: without these there is no inventory through CUDA.
    cu::cuInit_fn cuInit = nullptr;
    cu::cuDriverGetVersion_fn cuDriverGetVersion = nullptr;
    cu::cuDeviceGetCount_fn cuDeviceGetCount = nullptr;
    cu::cuDeviceGet_fn cuDeviceGet = nullptr;
    // Optional: a missing one makes only its facts (or later measurements) absent.
    cu::cuDeviceGetName_fn cuDeviceGetName = nullptr;
    cu::cuDeviceTotalMem_v2_fn cuDeviceTotalMem = nullptr;  // _v2
    cu::cuDeviceGetAttribute_fn cuDeviceGetAttribute = nullptr;
    cu::cuDeviceGetUuid_fn cuDeviceGetUuid = nullptr;  // _v2, else v1
    cu::cuDevicePrimaryCtxRetain_fn cuDevicePrimaryCtxRetain = nullptr;
    cu::cuDevicePrimaryCtxRelease_fn cuDevicePrimaryCtxRelease = nullptr;  // _v2, else v1
    cu::cuCtxSetCurrent_fn cuCtxSetCurrent = nullptr;
    cu::cuModuleLoadData_fn cuModuleLoadData = nullptr;
    cu::cuModuleLoadDataEx_fn cuModuleLoadDataEx = nullptr;  // JIT logs; else cuModuleLoadData
    cu::cuModuleGetFunction_fn cuModuleGetFunction = nullptr;
    cu::cuLaunchKernel_fn cuLaunchKernel = nullptr;
    cu::cuMemAlloc_v2_fn cuMemAlloc = nullptr;      // _v2
    cu::cuMemFree_v2_fn cuMemFree = nullptr;        // _v2
    cu::cuMemcpyHtoD_v2_fn cuMemcpyHtoD = nullptr;  // _v2
    cu::cuMemcpyDtoH_v2_fn cuMemcpyDtoH = nullptr;  // _v2
    cu::cuMemcpyDtoD_v2_fn cuMemcpyDtoD = nullptr;  // _v2
    cu::cuMemsetD8_v2_fn cuMemsetD8 = nullptr;      // _v2
    cu::cuMemHostAlloc_fn cuMemHostAlloc = nullptr;
    cu::cuMemFreeHost_fn cuMemFreeHost = nullptr;
    cu::cuMemcpyAsync_fn cuMemcpyAsync = nullptr;
    cu::cuMemcpyHtoDAsync_v2_fn cuMemcpyHtoDAsync = nullptr;  // _v2
    cu::cuMemcpyDtoHAsync_v2_fn cuMemcpyDtoHAsync = nullptr;  // _v2
    cu::cuMemsetD32Async_fn cuMemsetD32Async = nullptr;
    cu::cuStreamWaitEvent_fn cuStreamWaitEvent = nullptr;
    cu::cuStreamCreate_fn cuStreamCreate = nullptr;
    cu::cuStreamSynchronize_fn cuStreamSynchronize = nullptr;
    cu::cuStreamDestroy_v2_fn cuStreamDestroy = nullptr;  // _v2
    cu::cuEventCreate_fn cuEventCreate = nullptr;
    cu::cuEventRecord_fn cuEventRecord = nullptr;
    cu::cuEventSynchronize_fn cuEventSynchronize = nullptr;
    cu::cuEventElapsedTime_fn cuEventElapsedTime = nullptr;  // _v2, else v1
    cu::cuEventDestroy_v2_fn cuEventDestroy = nullptr;       // _v2
    cu::cuMemGetInfo_v2_fn cuMemGetInfo = nullptr;           // _v2
    cu::cuCtxSynchronize_fn cuCtxSynchronize = nullptr;
    cu::cuDeviceCanAccessPeer_fn cuDeviceCanAccessPeer = nullptr;
    cu::cuCtxEnablePeerAccess_fn cuCtxEnablePeerAccess = nullptr;
    cu::cuMemcpyPeerAsync_fn cuMemcpyPeerAsync = nullptr;
    cu::cuMemGetHandleForAddressRange_fn cuMemGetHandleForAddressRange = nullptr;  // CUDA 11.7 (driver 515)
    cu::cuGetErrorName_fn cuGetErrorName = nullptr;
    cu::cuGetErrorString_fn cuGetErrorString = nullptr;

    std::string path;   // the library file, when loaded
    std::string error;  // why it is unusable; empty when ok()
    SymbolResolution symbols;

    bool ok() const { return error.empty(); }
    // Loads through GPUVET_LIBCUDA, else libcuda.so.1. Never throws; see ok()/error.
    // error reads "libcuda.so.1 could not be loaded: <dlopen reason>" when the file is missing.
    static CudaApi load();
    static CudaApi load_file(const std::string& file);
    // With `deadline`, every call runs under that library's deadline (driver_deadline.hpp).
    static CudaApi from_library(const DynLib& lib, DriverLib* deadline = nullptr);
    // cuGetErrorName's answer ("CUDA_ERROR_NO_DEVICE"), else our table's.
    std::string error_name(int code) const;
};

std::span<const SymbolEntry<CudaApi>> cuda_symbol_table();

std::string cuda_status_name(int code);  // "CUDA_ERROR_NO_DEVICE"; "CUDA_ERROR_<code>" when unknown
std::string cuda_advice(int code);       // what to do about it

// A failed CUDA driver call: the numeric status, its name, and advice.
class CudaError : public Error {
public:
    CudaError(std::string call, int code, std::string name);
    int code() const { return code_; }
    const std::string& name() const { return name_; }
    const std::string& call() const { return call_; }

private:
    std::string call_;
    int code_;
    std::string name_;
};

}  // namespace gpuvet
