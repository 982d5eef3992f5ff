// gpuvet's NCCL declarations against nccl.h.
#include "gpu/bindings/nccl_api.hpp"
// clang-format off
#include <nccl.h>
// clang-format on
#include <cstddef>

#include "official_map.hpp"

namespace abi {
namespace n = gpuvet::nccl;
ABI_ENUM(n::ncclResult_t, ::ncclResult_t);
ABI_ENUM(n::ncclRedOp_t, ::ncclRedOp_t);
ABI_ENUM(n::ncclDataType_t, ::ncclDataType_t);
ABI_MAP(n::ncclUniqueId, ::ncclUniqueId);
}  // namespace abi

namespace n = gpuvet::nccl;

static_assert(std::is_same_v<n::ncclComm_t, ::ncclComm_t>);
static_assert(std::is_same_v<n::cudaStream_t, ::cudaStream_t>);

ABI_SAME_FN(n::ncclGetVersion_fn, ncclGetVersion);
ABI_SAME_FN(n::ncclCommInitAll_fn, ncclCommInitAll);
ABI_SAME_FN(n::ncclCommDestroy_fn, ncclCommDestroy);
ABI_SAME_FN(n::ncclAllReduce_fn, ncclAllReduce);
ABI_SAME_FN(n::ncclGroupStart_fn, ncclGroupStart);
ABI_SAME_FN(n::ncclGroupEnd_fn, ncclGroupEnd);
ABI_SAME_FN(n::ncclGetErrorString_fn, ncclGetErrorString);
ABI_SAME_FN(n::ncclCommGetAsyncError_fn, ncclCommGetAsyncError);
ABI_SAME_FN(n::ncclGetUniqueId_fn, ncclGetUniqueId);
ABI_SAME_FN(n::ncclCommInitRank_fn, ncclCommInitRank);
ABI_SAME_FN(n::ncclGetLastError_fn, ncclGetLastError);
ABI_SAME_VALUE(n::kNcclUniqueIdBytes, NCCL_UNIQUE_ID_BYTES);
ABI_SAME_OFFSET(n::ncclUniqueId, ::ncclUniqueId, internal);

ABI_SAME_VALUE(n::ncclSuccess, ::ncclSuccess);
ABI_SAME_VALUE(n::ncclUnhandledCudaError, ::ncclUnhandledCudaError);
ABI_SAME_VALUE(n::ncclSystemError, ::ncclSystemError);
ABI_SAME_VALUE(n::ncclInternalError, ::ncclInternalError);
ABI_SAME_VALUE(n::ncclInvalidArgument, ::ncclInvalidArgument);
ABI_SAME_VALUE(n::ncclInvalidUsage, ::ncclInvalidUsage);
ABI_SAME_VALUE(n::ncclRemoteError, ::ncclRemoteError);
ABI_SAME_VALUE(n::ncclInProgress, ::ncclInProgress);
ABI_SAME_VALUE(n::ncclNumResults, ::ncclNumResults);
ABI_SAME_VALUE(n::ncclSum, ::ncclSum);
ABI_SAME_VALUE(n::ncclProd, ::ncclProd);
ABI_SAME_VALUE(n::ncclMax, ::ncclMax);
ABI_SAME_VALUE(n::ncclMin, ::ncclMin);
ABI_SAME_VALUE(n::ncclAvg, ::ncclAvg);
ABI_SAME_VALUE(n::ncclMaxRedOp, ::ncclMaxRedOp);
ABI_SAME_VALUE(n::ncclInt8, ::ncclInt8);
ABI_SAME_VALUE(n::ncclUint8, ::ncclUint8);
ABI_SAME_VALUE(n::ncclInt32, ::ncclInt32);
ABI_SAME_VALUE(n::ncclUint32, ::ncclUint32);
ABI_SAME_VALUE(n::ncclInt64, ::ncclInt64);
ABI_SAME_VALUE(n::ncclUint64, ::ncclUint64);
ABI_SAME_VALUE(n::ncclFloat16, ::ncclFloat16);
ABI_SAME_VALUE(n::ncclFloat32, ::ncclFloat32);
ABI_SAME_VALUE(n::ncclFloat64, ::ncclFloat64);
ABI_SAME_VALUE(n::ncclBfloat16, ::ncclBfloat16);
