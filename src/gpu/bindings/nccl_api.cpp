#include "gpu/bindings/nccl_api.hpp"

namespace gpuvet {

// One communicator per device of the list (the list is held too).
template <>
struct DriverArgs<&NcclApi::ncclCommInitAll> : ArrayArgs<1, 0, 2> {};

namespace {

using A = NcclApi;
constexpr Need R = Need::Required;
constexpr Need O = Need::Optional;

template <auto M>
constexpr void (*set)(NcclApi&, void*, const char*, DriverLib*) = &assign_member<M, NcclApi>;

const SymbolEntry<NcclApi> kTable[] = {
    {{"ncclGetVersion"}, R, set<&A::ncclGetVersion>},
    {{"ncclCommInitAll"}, R, set<&A::ncclCommInitAll>},
    {{"ncclCommDestroy"}, R, set<&A::ncclCommDestroy>},
    {{"ncclAllReduce"}, R, set<&A::ncclAllReduce>},
    {{"ncclGroupStart"}, R, set<&A::ncclGroupStart>},
    {{"ncclGroupEnd"}, R, set<&A::ncclGroupEnd>},
    {{"ncclGetErrorString"}, O, set<&A::ncclGetErrorString>},
    {{"ncclCommGetAsyncError"}, O, set<&A::ncclCommGetAsyncError>},
    // Optional: the in-box all-reduce (ncclCommInitAll) runs without them; the fleet's multi-node
    // all-reduce says the library lacks them.
    {{"ncclGetUniqueId"}, O, set<&A::ncclGetUniqueId>},
    {{"ncclCommInitRank"}, O, set<&A::ncclCommInitRank>},
    {{"ncclGetLastError"}, O, set<&A::ncclGetLastError>},
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

std::span<const SymbolEntry<NcclApi>> nccl_symbol_table() { return kTable; }

LibrarySearch nccl_search() { return {kEnvLibNccl, {"libnccl.so.2"}, {"nvidia/nccl/lib", "torch/lib"}}; }

std::string nccl_status_name(int code) {
    if (code == kNcclNoAnswer) return last_driver_no_answer();
    if (auto* s = find_status(code)) return s->name;
    return "ncclResult_" + std::to_string(code);
}

std::string nccl_advice(int code) {
    if (code == kNcclNoAnswer) return driver_no_answer_advice();
    if (auto* s = find_status(code)) return s->advice;
    return "rerun with NCCL_DEBUG=INFO";
}

std::string NcclApi::version_text() const {
    // NCCL_VERSION(X,Y,Z) is X*10000+Y*100+Z since 2.9 (X*1000+Y*100+Z before).
    int major = version >= 10000 ? version / 10000 : version / 1000;
    int minor = version >= 10000 ? (version / 100) % 100 : (version / 100) % 10;
    return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(version % 100);
}

std::string NcclApi::error_text(int code) const {
    if (code == kNcclNoAnswer) return last_driver_no_answer();
    std::string s = nccl_status_name(code);
    if (ncclGetErrorString)
        if (const char* t = ncclGetErrorString(static_cast<nccl::ncclResult_t>(code)); t && *t)
            s += ": " + std::string(t);
    return s;
}

std::string NcclApi::error_text(int code, nccl::ncclComm_t comm) const {
    std::string s = error_text(code);
    if (code == kNcclNoAnswer || !ncclGetLastError) return s;
    if (const char* t = ncclGetLastError(comm); t && *t) s += " (" + std::string(t) + ")";
    return s;
}

NcclApi NcclApi::load_file(const std::string& file) {
    NcclApi api;
    DynLib lib = DynLib::open("", {file});
    if (!lib) {
        api.error = file + " could not be loaded: " + lib.error();
        return api;
    }
    api.path = lib.path();
    api.symbols = resolve_symbols<NcclApi>(
        nccl_symbol_table(), api, [&lib](const char* n) { return lib.symbol(n); }, &nccl_driver_lib());
    if (!api.symbols.complete()) {
        std::string names;
        for (const auto& m : api.symbols.missing_required) names += (names.empty() ? "" : ", ") + m;
        api.error = api.path + " lacks " + names;
        return api;
    }
    if (api.ncclGetVersion(&api.version) != nccl::ncclSuccess) api.error = api.path + ": ncclGetVersion failed";
    return api;
}

NcclApi NcclApi::load() {
    return load_first_usable<NcclApi>(
        nccl_search(), [](const std::string& path) { return load_file(path); }, "no usable libnccl");
}

NcclError::NcclError(std::string call, int code, std::string text)
    : Error(ErrorKind::Driver, call + " failed: " + text + " (NCCL result " + std::to_string(code) + ")",
            nccl_advice(code)),
      code_(code) {}

}  // namespace gpuvet
