// hipBLASLt (ROCm's libhipblaslt.so.0), loaded at run time for gpu.gemm on AMD GPUs. Our own
// declarations of the few types, constants and signatures the GEMM uses, so no ROCm headers are
// needed to build. Sources (tests/abi/hipblaslt_facts.hpp holds them to these values):
//   ROCm/hipBLASLt library/include/hipblaslt.h (commit 007c1b57): the attribute ids, the opaque
//     descriptor and algorithm structs, hipblasLtMatmulHeuristicResult_t and the signatures;
//   ROCm/hipBLAS-common library/include/hipblas-common.h (commit 6b7748e2): hipblasStatus_t,
//     hipblasOperation_t (cblas' 111/112), hipblasComputeType_t;
//   HIP's library_types.h (ROCm 6): hipDataType (HIP_R_16BF 14, HIP_R_8F_E4M3_FNUZ 1000 beside
//     Debian's ROCm 5.2 header, which has only the 16F/32F/64F ones).
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "gpu/bindings/driver_deadline.hpp"
#include "gpu/bindings/hip_api.hpp"
#include "gpu/bindings/lib_search.hpp"
#include "gpu/bindings/symbol_table.hpp"

namespace gpuvet::hiplt {

enum hipblasStatus_t {
    HIPBLAS_STATUS_SUCCESS = 0,
    HIPBLAS_STATUS_NOT_INITIALIZED = 1,
    HIPBLAS_STATUS_ALLOC_FAILED = 2,
    HIPBLAS_STATUS_INVALID_VALUE = 3,
    HIPBLAS_STATUS_MAPPING_ERROR = 4,
    HIPBLAS_STATUS_EXECUTION_FAILED = 5,
    HIPBLAS_STATUS_INTERNAL_ERROR = 6,
    HIPBLAS_STATUS_NOT_SUPPORTED = 7,
    HIPBLAS_STATUS_ARCH_MISMATCH = 8,
    HIPBLAS_STATUS_HANDLE_IS_NULLPTR = 9,
    HIPBLAS_STATUS_INVALID_ENUM = 10,
    HIPBLAS_STATUS_UNKNOWN = 11
};

enum hipblasOperation_t { HIPBLAS_OP_N = 111, HIPBLAS_OP_T = 112, HIPBLAS_OP_C = 113 };

// Only the compute types the GEMM uses (hipblas-common.h has more).
enum hipblasComputeType_t {
    HIPBLAS_COMPUTE_32F = 2,
    HIPBLAS_COMPUTE_32F_FAST_TF32 = 6,
    HIPBLAS_COMPUTE_32I = 9,
    HIPBLAS_COMPUTE_32F_FAST_8F_FNUZ = 100
};

// Only the element types the GEMM uses.
enum hipDataType {
    HIP_R_32F = 0,
    HIP_R_16F = 2,
    HIP_R_8I = 3,
    HIP_R_32I = 10,
    HIP_R_16BF = 14,
    HIP_R_8F_E4M3 = 28,
    HIP_R_8F_E4M3_FNUZ = 1000
};

enum hipblasLtMatmulDescAttributes_t { HIPBLASLT_MATMUL_DESC_TRANSA = 0, HIPBLASLT_MATMUL_DESC_TRANSB = 1 };
enum hipblasLtMatmulPreferenceAttributes_t { HIPBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES = 1 };

struct hipblasLtMatmulDescOpaque_t {
    uint64_t data[4];
};
struct hipblasLtMatrixLayoutOpaque_t {
    uint64_t data[4];
};
struct hipblasLtMatmulPreferenceOpaque_t {
    uint64_t data[5];
};
struct hipblasLtMatmulAlgo_t {
    uint8_t data[16];
    std::size_t max_workspace_bytes;
};
struct hipblasLtMatmulHeuristicResult_t {
    hipblasLtMatmulAlgo_t algo;
    std::size_t workspaceSize;
    hipblasStatus_t state;
    float wavesCount;
    int reserved[4];
};

using hipblasLtHandle_t = void*;
using hipblasLtMatmulDesc_t = hipblasLtMatmulDescOpaque_t*;
using hipblasLtMatrixLayout_t = hipblasLtMatrixLayoutOpaque_t*;
using hipblasLtMatmulPreference_t = hipblasLtMatmulPreferenceOpaque_t*;
using hipStream_t = hip::hipStream_t;  // struct ihipStream_t*

using hipblasLtCreate_fn = hipblasStatus_t (*)(hipblasLtHandle_t*);
using hipblasLtDestroy_fn = hipblasStatus_t (*)(hipblasLtHandle_t);
using hipblasLtGetVersion_fn = hipblasStatus_t (*)(hipblasLtHandle_t, int*);
using hipblasLtMatmulDescCreate_fn = hipblasStatus_t (*)(hipblasLtMatmulDesc_t*, hipblasComputeType_t, hipDataType);
using hipblasLtMatmulDescSetAttribute_fn = hipblasStatus_t (*)(hipblasLtMatmulDesc_t, hipblasLtMatmulDescAttributes_t,
                                                               const void*, std::size_t);
using hipblasLtMatmulDescDestroy_fn = hipblasStatus_t (*)(hipblasLtMatmulDesc_t);
using hipblasLtMatrixLayoutCreate_fn = hipblasStatus_t (*)(hipblasLtMatrixLayout_t*, hipDataType, uint64_t, uint64_t,
                                                           int64_t);
using hipblasLtMatrixLayoutDestroy_fn = hipblasStatus_t (*)(hipblasLtMatrixLayout_t);
using hipblasLtMatmulPreferenceCreate_fn = hipblasStatus_t (*)(hipblasLtMatmulPreference_t*);
using hipblasLtMatmulPreferenceSetAttribute_fn = hipblasStatus_t (*)(hipblasLtMatmulPreference_t,
                                                                     hipblasLtMatmulPreferenceAttributes_t, const void*,
                                                                     std::size_t);
using hipblasLtMatmulPreferenceDestroy_fn = hipblasStatus_t (*)(hipblasLtMatmulPreference_t);
using hipblasLtMatmulAlgoGetHeuristic_fn = hipblasStatus_t (*)(hipblasLtHandle_t, hipblasLtMatmulDesc_t,
                                                               hipblasLtMatrixLayout_t, hipblasLtMatrixLayout_t,
                                                               hipblasLtMatrixLayout_t, hipblasLtMatrixLayout_t,
                                                               hipblasLtMatmulPreference_t, int,
                                                               hipblasLtMatmulHeuristicResult_t*, int*);
using hipblasLtMatmul_fn = hipblasStatus_t (*)(hipblasLtHandle_t, hipblasLtMatmulDesc_t, const void*, const void*,
                                               hipblasLtMatrixLayout_t, const void*, hipblasLtMatrixLayout_t,
                                               const void*, const void*, hipblasLtMatrixLayout_t, void*,
                                               hipblasLtMatrixLayout_t, const hipblasLtMatmulAlgo_t*, void*,
                                               std::size_t, hipStream_t);

}  // namespace gpuvet::hiplt

namespace gpuvet {
// The descriptors are the library's objects: a wrapped call passes these handles as they are.
template <>
struct OpaqueHandle<hiplt::hipblasLtMatmulDescOpaque_t> : std::true_type {};
template <>
struct OpaqueHandle<hiplt::hipblasLtMatrixLayoutOpaque_t> : std::true_type {};
template <>
struct OpaqueHandle<hiplt::hipblasLtMatmulPreferenceOpaque_t> : std::true_type {};
// A wrapped hipBLASLt call that got no answer (driver_deadline.hpp): no hipBLAS status.
inline constexpr int kHipblasNoAnswer = 31;
template <>
struct NoAnswer<hiplt::hipblasStatus_t> {
    static hiplt::hipblasStatus_t value() { return static_cast<hiplt::hipblasStatus_t>(kHipblasNoAnswer); }
};

inline constexpr const char* kEnvLibHipblasLt = "GPUVET_HIPBLASLT";

struct HipblasLtApi {
    hiplt::hipblasLtCreate_fn hipblasLtCreate = nullptr;
    hiplt::hipblasLtDestroy_fn hipblasLtDestroy = nullptr;
    hiplt::hipblasLtMatmulDescCreate_fn hipblasLtMatmulDescCreate = nullptr;
    hiplt::hipblasLtMatmulDescSetAttribute_fn hipblasLtMatmulDescSetAttribute = nullptr;
    hiplt::hipblasLtMatmulDescDestroy_fn hipblasLtMatmulDescDestroy = nullptr;
    hiplt::hipblasLtMatrixLayoutCreate_fn hipblasLtMatrixLayoutCreate = nullptr;
    hiplt::hipblasLtMatrixLayoutDestroy_fn hipblasLtMatrixLayoutDestroy = nullptr;
    hiplt::hipblasLtMatmulPreferenceCreate_fn hipblasLtMatmulPreferenceCreate = nullptr;
    hiplt::hipblasLtMatmulPreferenceSetAttribute_fn hipblasLtMatmulPreferenceSetAttribute = nullptr;
    hiplt::hipblasLtMatmulPreferenceDestroy_fn hipblasLtMatmulPreferenceDestroy = nullptr;
    hiplt::hipblasLtMatmulAlgoGetHeuristic_fn hipblasLtMatmulAlgoGetHeuristic = nullptr;
    hiplt::hipblasLtMatmul_fn hipblasLtMatmul = nullptr;
    hiplt::hipblasLtGetVersion_fn hipblasLtGetVersion = nullptr;  // optional: the version shown

    std::string path;                // the library used
    std::string error;               // why no library is usable; empty when ok()
    std::vector<std::string> tried;  // "path: why it was not used", in search order
    SymbolResolution symbols;

    bool ok() const { return error.empty(); }
    // "<path>, hipBLASLt 0.12.1" (hipblasLtGetVersion needs a handle), or without the version when the
    // library lacks the call or it fails.
    std::string text(hiplt::hipblasLtHandle_t handle) const;
    // Searches GPUVET_HIPBLASLT, libhipblaslt.so.0, libhipblaslt.so, /opt/rocm/lib and torch/lib. Never throws.
    static HipblasLtApi load();
    static HipblasLtApi load_file(const std::string& file);
};

std::span<const SymbolEntry<HipblasLtApi>> hipblaslt_symbol_table();
LibrarySearch hipblaslt_search();
std::string hipblas_status_name(int code);

inline constexpr const char* kHipblasLtMissingAdvice =
    "libhipblaslt not found: install hipblaslt (ROCm's libhipblaslt.so.0, e.g. apt install hipblaslt from the ROCm "
    "repository) or set GPUVET_HIPBLASLT";

class HipblasError : public Error {
public:
    HipblasError(std::string call, int code);
    int code() const { return code_; }

private:
    int code_;
};

}  // namespace gpuvet
