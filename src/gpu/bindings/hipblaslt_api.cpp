#include "gpu/bindings/hipblaslt_api.hpp"

namespace gpuvet {

// The heuristic's results: as many as were requested.
template <>
struct DriverArgs<&HipblasLtApi::hipblasLtMatmulAlgoGetHeuristic> : ArrayArgs<7, 8> {};

namespace {

using A = HipblasLtApi;
constexpr Need R = Need::Required;
constexpr Need O = Need::Optional;

template <auto M>
constexpr void (*set)(HipblasLtApi&, void*, const char*, DriverLib*) = &assign_member<M, HipblasLtApi>;

const SymbolEntry<HipblasLtApi> kTable[] = {
    {{"hipblasLtCreate"}, R, set<&A::hipblasLtCreate>},
    {{"hipblasLtDestroy"}, R, set<&A::hipblasLtDestroy>},
    {{"hipblasLtMatmulDescCreate"}, R, set<&A::hipblasLtMatmulDescCreate>},
    {{"hipblasLtMatmulDescSetAttribute"}, R, set<&A::hipblasLtMatmulDescSetAttribute>},
    {{"hipblasLtMatmulDescDestroy"}, R, set<&A::hipblasLtMatmulDescDestroy>},
    {{"hipblasLtMatrixLayoutCreate"}, R, set<&A::hipblasLtMatrixLayoutCreate>},
    {{"hipblasLtMatrixLayoutDestroy"}, R, set<&A::hipblasLtMatrixLayoutDestroy>},
    {{"hipblasLtMatmulPreferenceCreate"}, R, set<&A::hipblasLtMatmulPreferenceCreate>},
    {{"hipblasLtMatmulPreferenceSetAttribute"}, R, set<&A::hipblasLtMatmulPreferenceSetAttribute>},
    {{"hipblasLtMatmulPreferenceDestroy"}, R, set<&A::hipblasLtMatmulPreferenceDestroy>},
    {{"hipblasLtMatmulAlgoGetHeuristic"}, R, set<&A::hipblasLtMatmulAlgoGetHeuristic>},
    {{"hipblasLtMatmul"}, R, set<&A::hipblasLtMatmul>},
    {{"hipblasLtGetVersion"}, O, set<&A::hipblasLtGetVersion>},
};

struct StatusInfo {
    int code;
    const char* name;
    const char* advice;
};

// Values from hipblas-common.h (hipblasStatus_t); the advice is ours.
const StatusInfo kStatus[] = {
    {0, "HIPBLAS_STATUS_SUCCESS", ""},
    {1, "HIPBLAS_STATUS_NOT_INITIALIZED", "hipBLASLt could not start: check that its ROCm release matches HIP's"},
    {2, "HIPBLAS_STATUS_ALLOC_FAILED", "the GPU is out of memory: stop the processes using it"},
    {3, "HIPBLAS_STATUS_INVALID_VALUE", "this is a gpuvet bug: please report it"},
    {4, "HIPBLAS_STATUS_MAPPING_ERROR", "the GPU faulted: check dmesg for amdgpu errors"},
    {5, "HIPBLAS_STATUS_EXECUTION_FAILED", "the GPU faulted: check dmesg for amdgpu ring timeouts and GPU resets"},
    {6, "HIPBLAS_STATUS_INTERNAL_ERROR",
     "check dmesg for amdgpu errors; try another hipBLASLt through GPUVET_HIPBLASLT"},
    {7, "HIPBLAS_STATUS_NOT_SUPPORTED", "nothing to do: this hipBLASLt or GPU does not offer it"},
    {8, "HIPBLAS_STATUS_ARCH_MISMATCH", "nothing to do: this hipBLASLt has no kernels for this GPU"},
    {9, "HIPBLAS_STATUS_HANDLE_IS_NULLPTR", "this is a gpuvet bug: please report it"},
    {10, "HIPBLAS_STATUS_INVALID_ENUM", "this hipBLASLt is older than gpuvet expects: install ROCm 6 or later"},
    {11, "HIPBLAS_STATUS_UNKNOWN", "check dmesg for amdgpu errors"},
};

const StatusInfo* find_status(int code) {
    for (const auto& s : kStatus)
        if (s.code == code) return &s;
    return nullptr;
}

DriverLib& hipblaslt_driver_lib() { return driver_lib("hipBLASLt", GpuFrom::CurrentCtx); }

}  // namespace

std::span<const SymbolEntry<HipblasLtApi>> hipblaslt_symbol_table() { return kTable; }

// ROCm installs libhipblaslt.so.0 in /opt/rocm/lib; PyTorch's ROCm wheels carry their own in torch/lib.
LibrarySearch hipblaslt_search() {
    return {
        kEnvLibHipblasLt, {"libhipblaslt.so.0", "libhipblaslt.so", "/opt/rocm/lib/libhipblaslt.so.0"}, {"torch/lib"}};
}

std::string hipblas_status_name(int code) {
    if (code == kHipblasNoAnswer) return last_driver_no_answer();
    if (auto* s = find_status(code)) return s->name;
    return "HIPBLAS_STATUS_" + std::to_string(code);
}

namespace {
std::string hipblas_advice(int code) {
    if (code == kHipblasNoAnswer) return driver_no_answer_advice("hipBLASLt");
    if (auto* s = find_status(code)) return s->advice;
    return "check dmesg for amdgpu errors";
}
}  // namespace

std::string HipblasLtApi::text(hiplt::hipblasLtHandle_t handle) const {
    int v = 0;
    if (!hipblasLtGetVersion || hipblasLtGetVersion(handle, &v) != hiplt::HIPBLAS_STATUS_SUCCESS || v <= 0)
        return path + ", hipBLASLt (version not reported)";
    // hipblaslt.cpp: major * 100000 + minor * 100 + patch
    return path + ", hipBLASLt " + std::to_string(v / 100000) + "." + std::to_string((v / 100) % 1000) + "." +
           std::to_string(v % 100);
}

HipblasLtApi HipblasLtApi::load_file(const std::string& file) {
    HipblasLtApi api;
    DynLib lib = DynLib::open("", {file});
    if (!lib) {
        api.error = file + " could not be loaded: " + lib.error();
        return api;
    }
    api.path = lib.path();
    api.symbols = resolve_symbols<HipblasLtApi>(
        hipblaslt_symbol_table(), api, [&lib](const char* n) { return lib.symbol(n); }, &hipblaslt_driver_lib());
    if (!api.symbols.complete()) {
        std::string names;
        for (const auto& m : api.symbols.missing_required) names += (names.empty() ? "" : ", ") + m;
        api.error = api.path + " lacks " + names;
    }
    return api;
}

HipblasLtApi HipblasLtApi::load() {
    return load_first_usable<HipblasLtApi>(hipblaslt_search(), &HipblasLtApi::load_file, "no usable libhipblaslt");
}

HipblasError::HipblasError(std::string call, int code)
    : Error(ErrorKind::Driver,
            call + " failed: " + hipblas_status_name(code) + " (hipBLAS status " + std::to_string(code) + ")",
            hipblas_advice(code)),
      code_(code) {}

}  // namespace gpuvet
