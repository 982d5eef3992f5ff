#include "gpu/bindings/cublaslt_api.hpp"
#include "core/strings.hpp"

namespace gpuvet {

// The heuristic's results: as many as were requested.
template <>
struct DriverArgs<&CublasLtApi::cublasLtMatmulAlgoGetHeuristic> : ArrayArgs<7, 8> {};

namespace {

using A = CublasLtApi;
constexpr Need R = Need::Required;
constexpr Need O = Need::Optional;

template <auto M>
constexpr void (*set)(CublasLtApi&, void*, const char*, DriverLib*) = &assign_member<M, CublasLtApi>;

const SymbolEntry<CublasLtApi> kTable[] = {
    {{"cublasLtCreate"}, R, set<&A::cublasLtCreate>},
    {{"cublasLtDestroy"}, R, set<&A::cublasLtDestroy>},
    {{"cublasLtGetVersion"}, R, set<&A::cublasLtGetVersion>},
    {{"cublasLtGetCudartVersion"}, R, set<&A::cublasLtGetCudartVersion>},
    {{"cublasLtMatmulDescCreate"}, R, set<&A::cublasLtMatmulDescCreate>},
    {{"cublasLtMatmulDescSetAttribute"}, R, set<&A::cublasLtMatmulDescSetAttribute>},
    {{"cublasLtMatmulDescDestroy"}, R, set<&A::cublasLtMatmulDescDestroy>},
    {{"cublasLtMatrixLayoutCreate"}, R, set<&A::cublasLtMatrixLayoutCreate>},
    {{"cublasLtMatrixLayoutDestroy"}, R, set<&A::cublasLtMatrixLayoutDestroy>},
    {{"cublasLtMatmulPreferenceCreate"}, R, set<&A::cublasLtMatmulPreferenceCreate>},
    {{"cublasLtMatmulPreferenceSetAttribute"}, R, set<&A::cublasLtMatmulPreferenceSetAttribute>},
    {{"cublasLtMatmulPreferenceDestroy"}, R, set<&A::cublasLtMatmulPreferenceDestroy>},
    {{"cublasLtMatmulAlgoGetHeuristic"}, R, set<&A::cublasLtMatmulAlgoGetHeuristic>},
    {{"cublasLtMatmul"}, R, set<&A::cublasLtMatmul>},
    {{"cublasLtGetStatusName"}, O, set<&A::cublasLtGetStatusName>},
};

struct StatusInfo {
    int code;
    const char* name;
    const char* advice;
};

// Values from cublas_api.h (cublasStatus_t); the advice is ours.
const StatusInfo kStatus[] = {
    {0, "CUBLAS_STATUS_SUCCESS", ""},
    {1, "CUBLAS_STATUS_NOT_INITIALIZED",
     "cuBLASLt could not initialise: its CUDA version may be newer than the driver's; set GPUVET_CUBLASLT to an older "
     "one"},
    {3, "CUBLAS_STATUS_ALLOC_FAILED", "the GPU is out of memory: stop the processes using it"},
    {7, "CUBLAS_STATUS_INVALID_VALUE", "this is a gpuvet bug: please report it"},
    {8, "CUBLAS_STATUS_ARCH_MISMATCH", "nothing to do: this GPU lacks the feature"},
    {11, "CUBLAS_STATUS_MAPPING_ERROR", "the GPU faulted: check dmesg for Xid errors"},
    {13, "CUBLAS_STATUS_EXECUTION_FAILED", "the GPU faulted: check dmesg for Xid errors, then reset it"},
    {14, "CUBLAS_STATUS_INTERNAL_ERROR", "check dmesg for Xid errors; try another cuBLASLt through GPUVET_CUBLASLT"},
    {15, "CUBLAS_STATUS_NOT_SUPPORTED", "nothing to do: this cuBLASLt or GPU does not offer it"},
    {16, "CUBLAS_STATUS_LICENSE_ERROR", "check the cuBLAS license setup"},
};

const StatusInfo* find_status(int code) {
    for (const auto& s : kStatus)
        if (s.code == code) return &s;
    return nullptr;
}

std::string version_of(std::size_t v) {  // 120804 -> 12.8.4
    return std::to_string(v / 10000) + "." + std::to_string((v / 100) % 100) + "." + std::to_string(v % 100);
}

}  // namespace

std::span<const SymbolEntry<CublasLtApi>> cublaslt_symbol_table() { return kTable; }

LibrarySearch cublaslt_search() {
    return {kEnvLibCublasLt,
            {"libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so.11"},
            {"nvidia/cublas/lib", "nvidia/cu13/lib", "torch/lib"}};
}

std::string cublas_status_name(int code) {
    if (code == kCublasNoAnswer) return last_driver_no_answer();
    if (auto* s = find_status(code)) return s->name;
    return "CUBLAS_STATUS_" + std::to_string(code);
}

std::string cublas_advice(int code) {
    if (code == kCublasNoAnswer) return driver_no_answer_advice("cuBLASLt");
    if (auto* s = find_status(code)) return s->advice;
    return "check dmesg for Xid errors";
}

std::string CublasLtApi::version_text() const {
    return version_of(version) + " (CUDA " + cuda_version_text(static_cast<long>(cudart_version)) + ")";
}

std::string CublasLtApi::status_name(int code) const {
    if (code == kCublasNoAnswer) return last_driver_no_answer();
    if (cublasLtGetStatusName)
        if (const char* s = cublasLtGetStatusName(static_cast<lt::cublasStatus_t>(code)); s && *s) return s;
    return cublas_status_name(code);
}

CublasLtApi CublasLtApi::load_file(const std::string& file, int driver_cuda_version) {
    CublasLtApi api;
    DynLib lib = DynLib::open("", {file});
    if (!lib) {
        api.error = file + " could not be loaded: " + lib.error();
        return api;
    }
    api.path = lib.path();
    api.symbols = resolve_symbols<CublasLtApi>(
        cublaslt_symbol_table(), api, [&lib](const char* n) { return lib.symbol(n); }, &cublaslt_driver_lib());
    if (!api.symbols.complete()) {
        std::string names;
        for (const auto& m : api.symbols.missing_required) names += (names.empty() ? "" : ", ") + m;
        api.error = api.path + " lacks " + names;
        return api;
    }
    // Both calls return constants compiled into the library: safe before any CUDA work.
    api.version = api.cublasLtGetVersion();
    api.cudart_version = api.cublasLtGetCudartVersion();
    // CUDA's minor-version compatibility: a library built for CUDA X.y runs on any X.* driver,
    // never on an older major (it fails to initialise).
    api.too_new = cuda_major(static_cast<long>(api.cudart_version)) > cuda_major(driver_cuda_version);
    if (api.too_new)
        api.error = api.path + " is cuBLASLt " + api.version_text() + ", too new for the driver's CUDA " +
                    cuda_version_text(driver_cuda_version);
    return api;
}

CublasLtApi CublasLtApi::load(int driver_cuda_version) {
    bool too_new = false;
    CublasLtApi api = load_first_usable<CublasLtApi>(
        cublaslt_search(),
        [&](const std::string& path) {
            CublasLtApi one = load_file(path, driver_cuda_version);
            too_new = too_new || one.too_new;
            return one;
        },
        "no usable libcublasLt");
    api.found_too_new = !api.ok() && too_new;
    return api;
}

CublasError::CublasError(std::string call, int code, std::string name)
    : Error(ErrorKind::Driver, call + " failed: " + name + " (cuBLAS status " + std::to_string(code) + ")",
            cublas_advice(code)),
      code_(code) {}

}  // namespace gpuvet
