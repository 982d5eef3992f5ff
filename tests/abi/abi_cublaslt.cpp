// gpuvet's cuBLASLt declarations against cublasLt.h (with cublas_api.h and library_types.h).
#include "gpu/bindings/cublaslt_api.hpp"
// clang-format off
#include <cublasLt.h>
// clang-format on
#include <cstddef>

#include "official_map.hpp"

namespace abi {
namespace l = gpuvet::lt;
ABI_ENUM(l::cublasStatus_t, ::cublasStatus_t);
ABI_ENUM(l::cublasOperation_t, ::cublasOperation_t);
ABI_ENUM(l::cublasComputeType_t, ::cublasComputeType_t);
ABI_ENUM(l::cudaDataType_t, ::cudaDataType_t);
ABI_ENUM(l::cublasLtMatmulDescAttributes_t, ::cublasLtMatmulDescAttributes_t);
ABI_ENUM(l::cublasLtMatmulPreferenceAttributes_t, ::cublasLtMatmulPreferenceAttributes_t);
ABI_MAP(l::cublasLtMatrixLayoutOpaque_t, ::cublasLtMatrixLayoutOpaque_t);
ABI_MAP(l::cublasLtMatmulDescOpaque_t, ::cublasLtMatmulDescOpaque_t);
ABI_MAP(l::cublasLtMatmulPreferenceOpaque_t, ::cublasLtMatmulPreferenceOpaque_t);
ABI_MAP(l::cublasLtMatmulAlgo_t, ::cublasLtMatmulAlgo_t);
ABI_MAP(l::cublasLtMatmulHeuristicResult_t, ::cublasLtMatmulHeuristicResult_t);
}  // namespace abi

namespace l = gpuvet::lt;

static_assert(std::is_same_v<l::cublasLtHandle_t, ::cublasLtHandle_t>);
static_assert(std::is_same_v<l::cudaStream_t, ::cudaStream_t>);
static_assert(std::is_same_v<abi::official_t<l::cublasLtMatmulDesc_t>, ::cublasLtMatmulDesc_t>);
static_assert(std::is_same_v<abi::official_t<l::cublasLtMatrixLayout_t>, ::cublasLtMatrixLayout_t>);
static_assert(std::is_same_v<abi::official_t<l::cublasLtMatmulPreference_t>, ::cublasLtMatmulPreference_t>);

ABI_SAME_OFFSET(l::cublasLtMatmulHeuristicResult_t, ::cublasLtMatmulHeuristicResult_t, algo);
ABI_SAME_OFFSET(l::cublasLtMatmulHeuristicResult_t, ::cublasLtMatmulHeuristicResult_t, workspaceSize);
ABI_SAME_OFFSET(l::cublasLtMatmulHeuristicResult_t, ::cublasLtMatmulHeuristicResult_t, state);
ABI_SAME_OFFSET(l::cublasLtMatmulHeuristicResult_t, ::cublasLtMatmulHeuristicResult_t, wavesCount);
ABI_SAME_OFFSET(l::cublasLtMatmulHeuristicResult_t, ::cublasLtMatmulHeuristicResult_t, reserved);
ABI_SAME_OFFSET(l::cublasLtMatmulAlgo_t, ::cublasLtMatmulAlgo_t, data);

ABI_SAME_FN(l::cublasLtCreate_fn, cublasLtCreate);
ABI_SAME_FN(l::cublasLtDestroy_fn, cublasLtDestroy);
ABI_SAME_FN(l::cublasLtGetVersion_fn, cublasLtGetVersion);
ABI_SAME_FN(l::cublasLtGetCudartVersion_fn, cublasLtGetCudartVersion);
ABI_SAME_FN(l::cublasLtGetStatusName_fn, cublasLtGetStatusName);
ABI_SAME_FN(l::cublasLtMatmulDescCreate_fn, cublasLtMatmulDescCreate);
ABI_SAME_FN(l::cublasLtMatmulDescSetAttribute_fn, cublasLtMatmulDescSetAttribute);
ABI_SAME_FN(l::cublasLtMatmulDescDestroy_fn, cublasLtMatmulDescDestroy);
ABI_SAME_FN(l::cublasLtMatrixLayoutCreate_fn, cublasLtMatrixLayoutCreate);
ABI_SAME_FN(l::cublasLtMatrixLayoutDestroy_fn, cublasLtMatrixLayoutDestroy);
ABI_SAME_FN(l::cublasLtMatmulPreferenceCreate_fn, cublasLtMatmulPreferenceCreate);
ABI_SAME_FN(l::cublasLtMatmulPreferenceSetAttribute_fn, cublasLtMatmulPreferenceSetAttribute);
ABI_SAME_FN(l::cublasLtMatmulPreferenceDestroy_fn, cublasLtMatmulPreferenceDestroy);
ABI_SAME_FN(l::cublasLtMatmulAlgoGetHeuristic_fn, cublasLtMatmulAlgoGetHeuristic);
ABI_SAME_FN(l::cublasLtMatmul_fn, cublasLtMatmul);

ABI_SAME_VALUE(l::CUBLAS_STATUS_SUCCESS, ::CUBLAS_STATUS_SUCCESS);
ABI_SAME_VALUE(l::CUBLAS_STATUS_NOT_INITIALIZED, ::CUBLAS_STATUS_NOT_INITIALIZED);
ABI_SAME_VALUE(l::CUBLAS_STATUS_ALLOC_FAILED, ::CUBLAS_STATUS_ALLOC_FAILED);
ABI_SAME_VALUE(l::CUBLAS_STATUS_INVALID_VALUE, ::CUBLAS_STATUS_INVALID_VALUE);
ABI_SAME_VALUE(l::CUBLAS_STATUS_ARCH_MISMATCH, ::CUBLAS_STATUS_ARCH_MISMATCH);
ABI_SAME_VALUE(l::CUBLAS_STATUS_MAPPING_ERROR, ::CUBLAS_STATUS_MAPPING_ERROR);
ABI_SAME_VALUE(l::CUBLAS_STATUS_EXECUTION_FAILED, ::CUBLAS_STATUS_EXECUTION_FAILED);
ABI_SAME_VALUE(l::CUBLAS_STATUS_INTERNAL_ERROR, ::CUBLAS_STATUS_INTERNAL_ERROR);
ABI_SAME_VALUE(l::CUBLAS_STATUS_NOT_SUPPORTED, ::CUBLAS_STATUS_NOT_SUPPORTED);
ABI_SAME_VALUE(l::CUBLAS_STATUS_LICENSE_ERROR, ::CUBLAS_STATUS_LICENSE_ERROR);
ABI_SAME_VALUE(l::CUBLAS_OP_N, ::CUBLAS_OP_N);
ABI_SAME_VALUE(l::CUBLAS_OP_T, ::CUBLAS_OP_T);
ABI_SAME_VALUE(l::CUBLAS_OP_C, ::CUBLAS_OP_C);
ABI_SAME_VALUE(l::CUBLAS_COMPUTE_32F, ::CUBLAS_COMPUTE_32F);
ABI_SAME_VALUE(l::CUBLAS_COMPUTE_32F_FAST_TF32, ::CUBLAS_COMPUTE_32F_FAST_TF32);
ABI_SAME_VALUE(l::CUBLAS_COMPUTE_32I, ::CUBLAS_COMPUTE_32I);
ABI_SAME_VALUE(l::CUDA_R_32F, ::CUDA_R_32F);
ABI_SAME_VALUE(l::CUDA_R_16F, ::CUDA_R_16F);
ABI_SAME_VALUE(l::CUDA_R_8I, ::CUDA_R_8I);
ABI_SAME_VALUE(l::CUDA_R_32I, ::CUDA_R_32I);
ABI_SAME_VALUE(l::CUDA_R_16BF, ::CUDA_R_16BF);
ABI_SAME_VALUE(l::CUDA_R_8F_E4M3, ::CUDA_R_8F_E4M3);
ABI_SAME_VALUE(l::CUBLASLT_MATMUL_DESC_COMPUTE_TYPE, ::CUBLASLT_MATMUL_DESC_COMPUTE_TYPE);
ABI_SAME_VALUE(l::CUBLASLT_MATMUL_DESC_SCALE_TYPE, ::CUBLASLT_MATMUL_DESC_SCALE_TYPE);
ABI_SAME_VALUE(l::CUBLASLT_MATMUL_DESC_TRANSA, ::CUBLASLT_MATMUL_DESC_TRANSA);
ABI_SAME_VALUE(l::CUBLASLT_MATMUL_DESC_TRANSB, ::CUBLASLT_MATMUL_DESC_TRANSB);
ABI_SAME_VALUE(l::CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, ::CUBLASLT_MATMUL_DESC_A_SCALE_POINTER);
ABI_SAME_VALUE(l::CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, ::CUBLASLT_MATMUL_DESC_B_SCALE_POINTER);
ABI_SAME_VALUE(l::CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, ::CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES);
