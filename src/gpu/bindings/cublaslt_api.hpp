// cuBLASLt (libcublasLt.so.<major>), loaded at run time. Our own declarations of the types,
// constants and signatures the GEMM check uses, so no CUDA toolkit is needed to build; tests/abi
// proves them equal to cublasLt.h, cublas_api.h and library_types.h.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "gpu/bindings/cuda_api.hpp"
#include "gpu/bindings/lib_search.hpp"
#include "gpu/bindings/symbol_table.hpp"

// Opaque handle: at global scope so it is the very type cublasLt.h names.
struct cublasLtContext;

namespace gpuvet::lt {

enum cublasStatus_t {
    CUBLAS_STATUS_SUCCESS = 0,
    CUBLAS_STATUS_NOT_INITIALIZED = 1,
    CUBLAS_STATUS_ALLOC_FAILED = 3,
    CUBLAS_STATUS_INVALID_VALUE = 7,
    CUBLAS_STATUS_ARCH_MISMATCH = 8,
    CUBLAS_STATUS_MAPPING_ERROR = 11,
    CUBLAS_STATUS_EXECUTION_FAILED = 13,
    CUBLAS_STATUS_INTERNAL_ERROR = 14,
    CUBLAS_STATUS_NOT_SUPPORTED = 15,
    CUBLAS_STATUS_LICENSE_ERROR = 16
};

enum cublasOperation_t { CUBLAS_OP_N = 0, CUBLAS_OP_T = 1, CUBLAS_OP_C = 2 };

// Only the compute types the GEMM check uses (cublas_api.h has more).
enum cublasComputeType_t { CUBLAS_COMPUTE_32F = 68, CUBLAS_COMPUTE_32F_FAST_TF32 = 77, CUBLAS_COMPUTE_32I = 72 };

// library_types.h; only the element types the check uses.
enum cudaDataType_t {
    CUDA_R_32F = 0,
    CUDA_R_16F = 2,
    CUDA_R_8I = 3,
    CUDA_R_32I = 10,
    CUDA_R_16BF = 14,
    CUDA_R_8F_E4M3 = 28
};

enum cublasLtMatmulDescAttributes_t {
    CUBLASLT_MATMUL_DESC_COMPUTE_TYPE = 0,
    CUBLASLT_MATMUL_DESC_SCALE_TYPE = 1,
    CUBLASLT_MATMUL_DESC_TRANSA = 3,
    CUBLASLT_MATMUL_DESC_TRANSB = 4,
    CUBLASLT_MATMUL_DESC_A_SCALE_POINTER = 17,
    CUBLASLT_MATMUL_DESC_B_SCALE_POINTER = 18
};

enum cublasLtMatmulPreferenceAttributes_t { CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES = 1 };

struct cublasLtMatrixLayoutOpaque_t {
    uint64_t data[8];
};
struct cublasLtMatmulDescOpaque_t {
    uint64_t data[32];
};
struct cublasLtMatmulPreferenceOpaque_t {
    uint64_t data[8];
};
struct cublasLtMatmulAlgo_t {
    uint64_t data[8];
};
struct cublasLtMatmulHeuristicResult_t {
    cublasLtMatmulAlgo_t algo;
    std::size_t workspaceSize;
    cublasStatus_t state;
    float wavesCount;
    int reserved[4];
};

using cublasLtHandle_t = ::cublasLtContext*;
using cublasLtMatmulDesc_t = cublasLtMatmulDescOpaque_t*;
using cublasLtMatrixLayout_t = cublasLtMatrixLayoutOpaque_t*;
using cublasLtMatmulPreference_t = cublasLtMatmulPreferenceOpaque_t*;
using cudaStream_t = cu::CUstream;  // driver_types.h: struct CUstream_st*

using cublasLtCreate_fn = cublasStatus_t (*)(cublasLtHandle_t*);
using cublasLtDestroy_fn = cublasStatus_t (*)(cublasLtHandle_t);
using cublasLtGetVersion_fn = std::size_t (*)();
using cublasLtGetCudartVersion_fn = std::size_t (*)();
using cublasLtGetStatusName_fn = const char* (*)(cublasStatus_t);
using cublasLtMatmulDescCreate_fn = cublasStatus_t (*)(cublasLtMatmulDesc_t*, cublasComputeType_t, cudaDataType_t);
using cublasLtMatmulDescSetAttribute_fn = cublasStatus_t (*)(cublasLtMatmulDesc_t, cublasLtMatmulDescAttributes_t,
                                                             const void*, std::size_t);
using cublasLtMatmulDescDestroy_fn = cublasStatus_t (*)(cublasLtMatmulDesc_t);
using cublasLtMatrixLayoutCreate_fn = cublasStatus_t (*)(cublasLtMatrixLayout_t*, cudaDataType_t, uint64_t, uint64_t,
                                                         int64_t);
using cublasLtMatrixLayoutDestroy_fn = cublasStatus_t (*)(cublasLtMatrixLayout_t);
using cublasLtMatmulPreferenceCreate_fn = cublasStatus_t (*)(cublasLtMatmulPreference_t*);
using cublasLtMatmulPreferenceSetAttribute_fn = cublasStatus_t (*)(cublasLtMatmulPreference_t,
                                                                   cublasLtMatmulPreferenceAttributes_t, const void*,
                                                                   std::size_t);
using cublasLtMatmulPreferenceDestroy_fn = cublasStatus_t (*)(cublasLtMatmulPreference_t);
using cublasLtMatmulAlgoGetHeuristic_fn = cublasStatus_t (*)(cublasLtHandle_t, cublasLtMatmulDesc_t,
                                                             cublasLtMatrixLayout_t, cublasLtMatrixLayout_t,
                                                             cublasLtMatrixLayout_t, cublasLtMatrixLayout_t,
                                                             cublasLtMatmulPreference_t, int,
                                                             cublasLtMatmulHeuristicResult_t*, int*);
using cublasLtMatmul_fn = cublasStatus_t (*)(cublasLtHandle_t, cublasLtMatmulDesc_t, const void*, const void*,
                                             cublasLtMatrixLayout_t, const void*, cublasLtMatrixLayout_t, const void*,
                                             const void*, cublasLtMatrixLayout_t, void*, cublasLtMatrixLayout_t,
                                             const cublasLtMatmulAlgo_t*, void*, std::size_t, cudaStream_t);

}  // namespace gpuvet::lt

namespace gpuvet {
// The descriptors are the library's objects: the declared structs size a caller's own storage for
// the *Init calls only, so a wrapped call passes these handles as they are (driver_deadline.hpp).
template <>
struct OpaqueHandle<lt::cublasLtMatmulDescOpaque_t> : std::true_type {};
template <>
struct OpaqueHandle<lt::cublasLtMatrixLayoutOpaque_t> : std::true_type {};
template <>
struct OpaqueHandle<lt::cublasLtMatmulPreferenceOpaque_t> : std::true_type {};
// A wrapped cuBLAS call that got no answer (driver_deadline.hpp): no cuBLAS status, inside the enum's range.
inline constexpr int kCublasNoAnswer = 31;
template <>
struct NoAnswer<lt::cublasStatus_t> {
    static lt::cublasStatus_t value() { return static_cast<lt::cublasStatus_t>(kCublasNoAnswer); }
};

inline constexpr const char* kEnvLibCublasLt = "GPUVET_CUBLASLT";

struct CublasLtApi {
    lt::cublasLtCreate_fn cublasLtCreate = nullptr;
    lt::cublasLtDestroy_fn cublasLtDestroy = nullptr;
    lt::cublasLtGetVersion_fn cublasLtGetVersion = nullptr;
    lt::cublasLtGetCudartVersion_fn cublasLtGetCudartVersion = nullptr;
    lt::cublasLtMatmulDescCreate_fn cublasLtMatmulDescCreate = nullptr;
    lt::cublasLtMatmulDescSetAttribute_fn cublasLtMatmulDescSetAttribute = nullptr;
    lt::cublasLtMatmulDescDestroy_fn cublasLtMatmulDescDestroy = nullptr;
    lt::cublasLtMatrixLayoutCreate_fn cublasLtMatrixLayoutCreate = nullptr;
    lt::cublasLtMatrixLayoutDestroy_fn cublasLtMatrixLayoutDestroy = nullptr;
    lt::cublasLtMatmulPreferenceCreate_fn cublasLtMatmulPreferenceCreate = nullptr;
    lt::cublasLtMatmulPreferenceSetAttribute_fn cublasLtMatmulPreferenceSetAttribute = nullptr;
    lt::cublasLtMatmulPreferenceDestroy_fn cublasLtMatmulPreferenceDestroy = nullptr;
    lt::cublasLtMatmulAlgoGetHeuristic_fn cublasLtMatmulAlgoGetHeuristic = nullptr;
    lt::cublasLtMatmul_fn cublasLtMatmul = nullptr;
    lt::cublasLtGetStatusName_fn cublasLtGetStatusName = nullptr;  // optional

    std::string path;                // the library used
    std::size_t version = 0;         // cublasLtGetVersion: 120804 = 12.8.4
    std::size_t cudart_version = 0;  // cublasLtGetCudartVersion: 12080 = CUDA 12.8
    std::string error;               // why no library is usable; empty when ok()
    std::vector<std::string> tried;  // "path: why it was not used", in search order
    bool too_new = false;            // load_file: built for a newer CUDA than the driver runs
    bool found_too_new = false;      // load: some library was found, but only ones too new
    SymbolResolution symbols;

    bool ok() const { return error.empty(); }
    std::string version_text() const;  // "12.8.4 (CUDA 12.8)"
    // Searches (see lib_search.hpp) for a library whose CUDA major version the driver can run:
    // `driver_cuda_version` as cuDriverGetVersion reports it (12080). Never throws.
    static CublasLtApi load(int driver_cuda_version);
    // Binds one file; error says why it is unusable (missing symbols, too new for the driver).
    static CublasLtApi load_file(const std::string& file, int driver_cuda_version);
    std::string status_name(int code) const;
};

std::span<const SymbolEntry<CublasLtApi>> cublaslt_symbol_table();
LibrarySearch cublaslt_search();
std::string cublas_status_name(int code);
std::string cublas_advice(int code);
// The advice of a SKIP when no usable cuBLASLt exists: none found at all, or only ones built for
// a newer CUDA than the driver runs.
inline constexpr const char* kCublasLtMissingAdvice =
    "libcublasLt not found: set GPUVET_CUBLASLT or install the CUDA toolkit / pip install nvidia-cublas-cu12";
inline constexpr const char* kCublasLtTooNewAdvice =
    "no libcublasLt this driver can run (those found need a newer CUDA): set GPUVET_CUBLASLT to one built for "
    "the driver's CUDA major version, e.g. pip install nvidia-cublas-cu12 for a 12.x driver";

class CublasError : public Error {
public:
    CublasError(std::string call, int code, std::string name);
    int code() const { return code_; }

private:
    int code_;
};

}  // namespace gpuvet
