#include "gpu/bindings/nccl_api.hpp"

#include <string_view>

namespace gpuvet {

// One communicator per device of the list (the list is held too).
template <>
struct DriverArgs<&NcclApi::ncclCommInitAll> : ArrayArgs<1, 0, 2> {};
template <>
struct DriverArgs<&RcclApi::ncclCommInitAll> : ArrayArgs<1, 0, 2> {};

namespace {

constexpr Need R = Need::Required;
constexpr Need O = Need::Optional;

template <class A, auto M>
constexpr void (*set)(A&, void*, const char*, DriverLib*) = &assign_member<M, A>;

template <class A>
const SymbolEntry<A> kTable[] = {
    {{"ncclGetVersion"}, R, set<A, &A::ncclGetVersion>},
    {{"ncclCommInitAll"}, R, set<A, &A::ncclCommInitAll>},
    {{"ncclCommDestroy"}, R, set<A, &A::ncclCommDestroy>},
    {{"ncclAllReduce"}, R, set<A, &A::ncclAllReduce>},
    {{"ncclGroupStart"}, R, set<A, &A::ncclGroupStart>},
    {{"ncclGroupEnd"}, R, set<A, &A::ncclGroupEnd>},
    {{"ncclGetErrorString"}, O, set<A, &A::ncclGetErrorString>},
    {{"ncclCommGetAsyncError"}, O, set<A, &A::ncclCommGetAsyncError>},
    // Optional: the in-box all-reduce (ncclCommInitAll) runs without them; the fleet's multi-node
    // all-reduce says the library lacks them.
    {{"ncclGetUniqueId"}, O, set<A, &A::ncclGetUniqueId>},
    {{"ncclCommInitRank"}, O, set<A, &A::ncclCommInitRank>},
    {{"ncclGetLastError"}, O, set<A, &A::ncclGetLastError>},
};

struct StatusInfo {
    int code;
    const char* name;
    const char* advice;
};

// Values from nccl.h (ncclResult_t); the advice is ours.
const StatusInfo kStatus[] = {
    {0, "ncclSuccess", ""},
    {1, "ncclUnhandledCudaError",
     "a CUDA call inside NCCL failed: check dmesg for Xid errors; an NCCL built for a newer CUDA than the driver fails "
     "here"},
    {2, "ncclSystemError",
     "the system refused NCCL (shared memory, /dev/shm size, ulimits): rerun with NCCL_DEBUG=WARN"},
    {3, "ncclInternalError", "rerun with NCCL_DEBUG=INFO and report the output"},
    {4, "ncclInvalidArgument", "this is a gpuvet bug: please report it"},
    {5, "ncclInvalidUsage", "this is a gpuvet bug: please report it"},
    {6, "ncclRemoteError", "a peer failed: check dmesg and the other GPUs"},
    {7, "ncclInProgress", ""},
};

const StatusInfo* find_status(int code) {
    for (const auto& s : kStatus)
        if (s.code == code) return &s;
    return nullptr;
}

}  // namespace

std::span<const SymbolEntry<NcclApi>> nccl_symbol_table() { return kTable<NcclApi>; }

LibrarySearch nccl_search() { return {kEnvLibNccl, {"libnccl.so.2"}, {"nvidia/nccl/lib", "torch/lib"}}; }

LibrarySearch NcclLib::search() { return nccl_search(); }
DriverLib& NcclLib::driver() { return nccl_driver_lib(); }
// ROCm installs librccl.so.1 in /opt/rocm/lib (on the loader's path once ROCm is set up); PyTorch's
// ROCm wheels carry their own in torch/lib.
LibrarySearch RcclLib::search() {
    return {kEnvLibRccl, {"librccl.so.1", "librccl.so", "/opt/rocm/lib/librccl.so.1"}, {"torch/lib"}};
}
DriverLib& RcclLib::driver() { return driver_lib("RCCL", GpuFrom::Handle); }

std::string nccl_status_name(int code) {
    if (code == kNcclNoAnswer) return last_driver_no_answer();
    if (auto* s = find_status(code)) return s->name;
    return "ncclResult_" + std::to_string(code);
}

std::string nccl_advice(int code, const char* lib) {
    if (code == kNcclNoAnswer) return driver_no_answer_advice(lib);
    // rccl.h: ncclUnhandledCudaError is an unhandled HIP error there.
    if (code == nccl::ncclUnhandledCudaError && std::string_view(lib) == RcclLib::kName)
        return "a HIP call inside RCCL failed: check dmesg for amdgpu errors; an RCCL built for another ROCm than the "
               "installed one fails here";
    if (auto* s = find_status(code)) return s->advice;
    return "rerun with NCCL_DEBUG=INFO";
}

template <class Lib>
std::string BasicNcclApi<Lib>::version_text() const {
    // NCCL_VERSION(X,Y,Z) is X*10000+Y*100+Z since 2.9 (X*1000+Y*100+Z before).
    int major = version >= 10000 ? version / 10000 : version / 1000;
    int minor = version >= 10000 ? (version / 100) % 100 : (version / 100) % 10;
    return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(version % 100);
}

template <class Lib>
std::string BasicNcclApi<Lib>::error_text(int code) const {
    if (code == kNcclNoAnswer) return last_driver_no_answer();
    std::string s = nccl_status_name(code);
    if (ncclGetErrorString)
        if (const char* t = ncclGetErrorString(static_cast<nccl::ncclResult_t>(code)); t && *t)
            s += ": " + std::string(t);
    return s;
}

template <class Lib>
std::string BasicNcclApi<Lib>::error_text(int code, nccl::ncclComm_t comm) const {
    std::string s = error_text(code);
    if (code == kNcclNoAnswer || !ncclGetLastError) return s;
    if (const char* t = ncclGetLastError(comm); t && *t) s += " (" + std::string(t) + ")";
    return s;
}

template <class Lib>
BasicNcclApi<Lib> BasicNcclApi<Lib>::load_file(const std::string& file) {
    BasicNcclApi api;
    DynLib lib = DynLib::open("", {file});
    if (!lib) {
        api.error = file + " could not be loaded: " + lib.error();
        return api;
    }
    api.path = lib.path();
    api.symbols = resolve_symbols<BasicNcclApi>(
        std::span<const SymbolEntry<BasicNcclApi>>(kTable<BasicNcclApi>), api,
        [&lib](const char* n) { return lib.symbol(n); }, &Lib::driver());
    if (!api.symbols.complete()) {
        std::string names;
        for (const auto& m : api.symbols.missing_required) names += (names.empty() ? "" : ", ") + m;
        api.error = api.path + " lacks " + names;
        return api;
    }
    if (api.ncclGetVersion(&api.version) != nccl::ncclSuccess) api.error = api.path + ": ncclGetVersion failed";
    return api;
}

template <class Lib>
BasicNcclApi<Lib> BasicNcclApi<Lib>::load() {
    return load_first_usable<BasicNcclApi>(
        Lib::search(), [](const std::string& path) { return load_file(path); },
        std::string("no usable lib") + (std::string_view(Lib::kName) == "RCCL" ? "rccl" : "nccl"));
}

template struct BasicNcclApi<NcclLib>;
template struct BasicNcclApi<RcclLib>;

NcclError::NcclError(std::string call, int code, std::string text, const char* lib)
    : Error(ErrorKind::Driver, call + " failed: " + text + " (" + lib + " result " + std::to_string(code) + ")",
            nccl_advice(code, lib)),
      code_(code) {}

}  // namespace gpuvet
