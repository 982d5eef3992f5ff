// NCCL (libnccl.so.2) and RCCL (librccl.so.1, ROCm's build of the same API), loaded at run time. Our
// own declarations of what the all-reduce checks use; tests/abi proves them equal to nccl.h. RCCL's
// rccl.h (ROCm/rccl, src/nccl.h.in) declares the same names, result codes (ncclSuccess 0 ...
// ncclInProgress 7), data types, reduction ops, the 128-byte ncclUniqueId and the same signatures, the
// stream of ncclAllReduce being a hipStream_t instead of a cudaStream_t (both an opaque pointer): one
// set of declarations serves both, the stream type a parameter.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "gpu/bindings/cuda_api.hpp"
#include "gpu/bindings/hip_api.hpp"
#include "gpu/bindings/lib_search.hpp"
#include "gpu/bindings/symbol_table.hpp"

struct ncclComm;  // global scope: the very type nccl.h names

namespace gpuvet::nccl {

enum ncclResult_t {
    ncclSuccess = 0,
    ncclUnhandledCudaError = 1,
    ncclSystemError = 2,
    ncclInternalError = 3,
    ncclInvalidArgument = 4,
    ncclInvalidUsage = 5,
    ncclRemoteError = 6,
    ncclInProgress = 7,
    ncclNumResults = 8
};

// nccl.h sizes this enum to match its dummy enum; its largest value fixes the underlying type.
enum ncclRedOp_t { ncclSum = 0, ncclProd = 1, ncclMax = 2, ncclMin = 3, ncclAvg = 4, ncclMaxRedOp = 0x7fffffff };

enum ncclDataType_t {
    ncclInt8 = 0,
    ncclUint8 = 1,
    ncclInt32 = 2,
    ncclUint32 = 3,
    ncclInt64 = 4,
    ncclUint64 = 5,
    ncclFloat16 = 6,
    ncclFloat32 = 7,
    ncclFloat64 = 8,
    ncclBfloat16 = 9
};

using ncclComm_t = ::ncclComm*;
using cudaStream_t = cu::CUstream;

// The id ranks of a communicator share (ncclGetUniqueId on one rank, handed to the others): opaque
// bytes, passed by value.
inline constexpr std::size_t kNcclUniqueIdBytes = 128;
struct ncclUniqueId {
    char internal[kNcclUniqueIdBytes];
};

using ncclGetVersion_fn = ncclResult_t (*)(int*);
using ncclCommInitAll_fn = ncclResult_t (*)(ncclComm_t*, int, const int*);
using ncclGetUniqueId_fn = ncclResult_t (*)(ncclUniqueId*);
using ncclCommInitRank_fn = ncclResult_t (*)(ncclComm_t*, int, ncclUniqueId, int);
using ncclGetLastError_fn = const char* (*)(ncclComm_t);
using ncclCommDestroy_fn = ncclResult_t (*)(ncclComm_t);
template <class Stream>
using ncclAllReduceOn_fn = ncclResult_t (*)(const void*, void*, std::size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t,
                                            Stream);
using ncclAllReduce_fn = ncclAllReduceOn_fn<cudaStream_t>;
using ncclGroupStart_fn = ncclResult_t (*)();
using ncclGroupEnd_fn = ncclResult_t (*)();
using ncclGetErrorString_fn = const char* (*)(ncclResult_t);
using ncclCommGetAsyncError_fn = ncclResult_t (*)(ncclComm_t, ncclResult_t*);

}  // namespace gpuvet::nccl

namespace gpuvet {
// A wrapped NCCL call that got no answer (driver_deadline.hpp): no NCCL status, inside the enum's range.
inline constexpr int kNcclNoAnswer = 15;
template <>
struct NoAnswer<nccl::ncclResult_t> {
    static nccl::ncclResult_t value() { return static_cast<nccl::ncclResult_t>(kNcclNoAnswer); }
};

inline constexpr const char* kEnvLibNccl = "GPUVET_NCCL";
inline constexpr const char* kEnvLibRccl = "GPUVET_RCCL";

// Which library of the API: NCCL on CUDA streams, RCCL on HIP streams. Each is its own API type, so
// the deadline wrappers (driver_deadline.hpp, one per member) of the two never share a slot.
struct NcclLib {
    using Stream = nccl::cudaStream_t;
    static constexpr const char* kName = "NCCL";
    static LibrarySearch search();
    static DriverLib& driver();
};
struct RcclLib {
    using Stream = hip::hipStream_t;
    static constexpr const char* kName = "RCCL";
    static LibrarySearch search();
    static DriverLib& driver();
};

template <class Lib>
struct BasicNcclApi {
    nccl::ncclGetVersion_fn ncclGetVersion = nullptr;
    nccl::ncclCommInitAll_fn ncclCommInitAll = nullptr;
    nccl::ncclCommDestroy_fn ncclCommDestroy = nullptr;
    nccl::ncclAllReduceOn_fn<typename Lib::Stream> ncclAllReduce = nullptr;
    nccl::ncclGroupStart_fn ncclGroupStart = nullptr;
    nccl::ncclGroupEnd_fn ncclGroupEnd = nullptr;
    nccl::ncclGetErrorString_fn ncclGetErrorString = nullptr;
    nccl::ncclCommGetAsyncError_fn ncclCommGetAsyncError = nullptr;
    // Communicators whose ranks are separate processes (one per GPU, on several nodes).
    nccl::ncclGetUniqueId_fn ncclGetUniqueId = nullptr;
    nccl::ncclCommInitRank_fn ncclCommInitRank = nullptr;
    nccl::ncclGetLastError_fn ncclGetLastError = nullptr;  // NCCL 2.13 and later

    std::string path;
    int version = 0;  // ncclGetVersion: 22809 = 2.28.9
    std::string error;
    std::vector<std::string> tried;
    SymbolResolution symbols;

    bool ok() const { return error.empty(); }
    std::string version_text() const;  // "2.28.9"
    static BasicNcclApi load();
    static BasicNcclApi load_file(const std::string& file);
    std::string error_text(int code) const;  // "ncclSystemError: ..." when the library says more
    // error_text, then the library's own last message about `comm` (or the last failed call when null).
    std::string error_text(int code, nccl::ncclComm_t comm) const;
};
using NcclApi = BasicNcclApi<NcclLib>;
using RcclApi = BasicNcclApi<RcclLib>;
extern template struct BasicNcclApi<NcclLib>;
extern template struct BasicNcclApi<RcclLib>;

std::span<const SymbolEntry<NcclApi>> nccl_symbol_table();
LibrarySearch nccl_search();
std::string nccl_status_name(int code);
std::string nccl_advice(int code, const char* lib = NcclLib::kName);
inline constexpr const char* kNcclMissingAdvice =
    "libnccl not found: set GPUVET_NCCL or pip install nvidia-nccl-cu12 (or install libnccl2)";
inline constexpr const char* kRcclMissingAdvice =
    "librccl not found: install rccl (ROCm's librccl.so.1, e.g. apt install rccl from the ROCm repository) or set "
    "GPUVET_RCCL to its path";

class NcclError : public Error {
public:
    // `lib`: "NCCL" or "RCCL", as the message and the advice name it.
    NcclError(std::string call, int code, std::string text, const char* lib = NcclLib::kName);
    int code() const { return code_; }

private:
    int code_;
};

}  // namespace gpuvet
