// Fake hipBLASLt on the HIP double's memory and simulated clock (fake_hip.cpp's gpuvet_fake_hip_*
// hooks, found in the libamdhip64 gpuvet loaded, as the RCCL double finds them). Declared with gpuvet's
// own binding (no hipblaslt.h on Debian; tests/abi holds the binding to the header's recorded facts).
// Each matmul charges 2*M*N*K / (the scenario's [hip] hipblaslt_tflops for its precision) to its
// stream, so the rate timed with HIP events equals the scenario's figure. Results are computed lazily,
// when a copy reads D: exactly the elements read, as double-precision dot products of the inputs as
// they are then (8192^3 sweeps stay cheap). FP16 and BF16 in and out, FP32 compute and scale, beta 0.
#include <dlfcn.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>

#include "fake_hang.hpp"
#include "gpu/bindings/hipblaslt_api.hpp"

using namespace gpuvet::hiplt;

namespace {

struct Hooks {
    void* (*host_view)(unsigned long long, size_t) = nullptr;
    int (*charge)(void*, double) = nullptr;
    int (*stream_device)(void*) = nullptr;
    double (*tflops)(int, int) = nullptr;
    int (*wrong)(int) = nullptr;
    void (*on_device_read)(void (*)(unsigned long long, size_t)) = nullptr;
    bool ok() const { return host_view && charge && stream_device && tflops && wrong && on_device_read; }
};
const Hooks& hooks() {
    static Hooks h = [] {
        Hooks x;
        const char* lib = std::getenv("GPUVET_LIBHIP");
        void* d = dlopen(lib && *lib ? lib : "libamdhip64.so", RTLD_NOW | RTLD_NOLOAD);
        if (!d) return x;
        x.host_view = reinterpret_cast<decltype(x.host_view)>(dlsym(d, "gpuvet_fake_hip_host_view"));
        x.charge = reinterpret_cast<decltype(x.charge)>(dlsym(d, "gpuvet_fake_hip_charge"));
        x.stream_device = reinterpret_cast<decltype(x.stream_device)>(dlsym(d, "gpuvet_fake_hip_stream_device"));
        x.tflops = reinterpret_cast<decltype(x.tflops)>(dlsym(d, "gpuvet_fake_hip_hipblaslt_tflops"));
        x.wrong = reinterpret_cast<decltype(x.wrong)>(dlsym(d, "gpuvet_fake_hip_hipblaslt_wrong"));
        x.on_device_read = reinterpret_cast<decltype(x.on_device_read)>(dlsym(d, "gpuvet_fake_hip_on_device_read"));
        return x;
    }();
    return h;
}

struct Desc {
    hipblasComputeType_t compute;
    hipDataType scale;
    hipblasOperation_t ta = HIPBLAS_OP_N, tb = HIPBLAS_OP_N;
};
struct Layout {
    hipDataType type;
    uint64_t rows, cols;
    int64_t ld;
};
struct Pending {  // a matmul whose output is computed when read
    Desc desc;
    Layout a, b, d;
    unsigned long long pa, pb, pd;
    bool wrong;
};

std::recursive_mutex g_mu;
std::map<unsigned long long, Pending> g_pending;  // by D's address

constexpr size_t kElemBytes = 2;  // FP16 and BF16 only

double load(hipDataType t, const unsigned char* p) {
    if (t == HIP_R_16F) {
        _Float16 h;
        std::memcpy(&h, p, 2);
        return static_cast<double>(h);
    }
    uint32_t u = uint32_t(p[0] | (p[1] << 8)) << 16;  // BF16: the high half of an FP32
    float f;
    std::memcpy(&f, &u, 4);
    return f;
}

void store(hipDataType t, unsigned char* p, double v) {
    if (t == HIP_R_16F) {
        _Float16 h = static_cast<_Float16>(float(v));
        std::memcpy(p, &h, 2);
        return;
    }
    float f = float(v);
    uint32_t u;
    std::memcpy(&u, &f, 4);
    u += 0x7FFF + ((u >> 16) & 1);  // round to nearest even
    p[0] = (u >> 16) & 0xFF, p[1] = u >> 24;
}

double elem(const Layout& l, const unsigned char* base, hipblasOperation_t op, uint64_t r, uint64_t c) {
    if (op != HIPBLAS_OP_N) std::swap(r, c);
    return load(l.type, base + (r + c * uint64_t(l.ld)) * kElemBytes);
}

void compute(const Pending& p, uint64_t first, uint64_t last) {  // element offsets in D, [first, last)
    const auto& h = hooks();
    const uint64_t k = p.desc.ta == HIPBLAS_OP_N ? p.a.cols : p.a.rows;
    auto* a = static_cast<unsigned char*>(h.host_view(p.pa, p.a.cols * p.a.ld * kElemBytes));
    auto* b = static_cast<unsigned char*>(h.host_view(p.pb, p.b.cols * p.b.ld * kElemBytes));
    auto* d = static_cast<unsigned char*>(h.host_view(p.pd, p.d.cols * p.d.ld * kElemBytes));
    if (!a || !b || !d) return;
    for (uint64_t e = first; e < last; ++e) {
        const uint64_t i = e % p.d.ld, j = e / p.d.ld;
        if (i >= p.d.rows || j >= p.d.cols) continue;
        double sum = 0;
        for (uint64_t x = 0; x < k; ++x) sum += elem(p.a, a, p.desc.ta, i, x) * elem(p.b, b, p.desc.tb, x, j);
        if (p.wrong) sum = 3 - sum;  // hipblaslt_wrong: a plausible-looking wrong value
        store(p.d.type, d + e * kElemBytes, sum);
    }
}

void on_read(unsigned long long ptr, size_t n) {
    std::lock_guard<std::recursive_mutex> lock(g_mu);
    for (const auto& [pd, p] : g_pending) {
        const unsigned long long end = pd + p.d.cols * p.d.ld * kElemBytes;
        if (ptr >= end || ptr + n <= pd) continue;
        const unsigned long long lo = std::max(ptr, pd), hi = std::min<unsigned long long>(ptr + n, end);
        compute(p, (lo - pd) / kElemBytes, (hi - pd + kElemBytes - 1) / kElemBytes);
    }
}

// What this double runs: FP16 or BF16 A, B and D of one type, FP32 compute and scale.
bool supported(const Desc& d, const Layout& a, const Layout& b, const Layout& out) {
    return (a.type == HIP_R_16F || a.type == HIP_R_16BF) && b.type == a.type && out.type == a.type &&
           d.compute == HIPBLAS_COMPUTE_32F && d.scale == HIP_R_32F;
}

}  // namespace

struct FakeHandle {
    int dev = 0;
};

extern "C" {

hipblasStatus_t hipblasLtCreate(hipblasLtHandle_t* h) {
    fake::hang_point(__func__, -1);
    const auto& hk = hooks();
    if (!h || !hk.ok()) return HIPBLAS_STATUS_NOT_INITIALIZED;
    hk.on_device_read(&on_read);
    *h = new FakeHandle{hk.stream_device(nullptr)};
    return HIPBLAS_STATUS_SUCCESS;
}
hipblasStatus_t hipblasLtDestroy(hipblasLtHandle_t h) {
    delete static_cast<FakeHandle*>(h);
    return HIPBLAS_STATUS_SUCCESS;
}
hipblasStatus_t hipblasLtGetVersion(hipblasLtHandle_t, int* v) {
    if (!v) return HIPBLAS_STATUS_INVALID_VALUE;
    *v = 1000;  // hipBLASLt 0.10.0 (major * 100000 + minor * 100 + patch, as hipblaslt.cpp writes it)
    return HIPBLAS_STATUS_SUCCESS;
}

hipblasStatus_t hipblasLtMatmulDescCreate(hipblasLtMatmulDesc_t* d, hipblasComputeType_t c, hipDataType scale) {
    *d = reinterpret_cast<hipblasLtMatmulDesc_t>(new Desc{c, scale});
    return HIPBLAS_STATUS_SUCCESS;
}
hipblasStatus_t hipblasLtMatmulDescSetAttribute(hipblasLtMatmulDesc_t d, hipblasLtMatmulDescAttributes_t attr,
                                                const void* buf, size_t size) {
    auto* desc = reinterpret_cast<Desc*>(d);
    if (size != sizeof(int32_t)) return HIPBLAS_STATUS_INVALID_VALUE;
    int32_t v;
    std::memcpy(&v, buf, sizeof v);
    if (attr == HIPBLASLT_MATMUL_DESC_TRANSA) desc->ta = hipblasOperation_t(v);
    else if (attr == HIPBLASLT_MATMUL_DESC_TRANSB) desc->tb = hipblasOperation_t(v);
    else return HIPBLAS_STATUS_INVALID_VALUE;
    return HIPBLAS_STATUS_SUCCESS;
}
hipblasStatus_t hipblasLtMatmulDescDestroy(hipblasLtMatmulDesc_t d) {
    delete reinterpret_cast<Desc*>(d);
    return HIPBLAS_STATUS_SUCCESS;
}
hipblasStatus_t hipblasLtMatrixLayoutCreate(hipblasLtMatrixLayout_t* l, hipDataType t, uint64_t rows, uint64_t cols,
                                            int64_t ld) {
    *l = reinterpret_cast<hipblasLtMatrixLayout_t>(new Layout{t, rows, cols, ld});
    return HIPBLAS_STATUS_SUCCESS;
}
hipblasStatus_t hipblasLtMatrixLayoutDestroy(hipblasLtMatrixLayout_t l) {
    delete reinterpret_cast<Layout*>(l);
    return HIPBLAS_STATUS_SUCCESS;
}
hipblasStatus_t hipblasLtMatmulPreferenceCreate(hipblasLtMatmulPreference_t* p) {
    *p = reinterpret_cast<hipblasLtMatmulPreference_t>(new uint64_t{0});
    return HIPBLAS_STATUS_SUCCESS;
}
hipblasStatus_t hipblasLtMatmulPreferenceSetAttribute(hipblasLtMatmulPreference_t p,
                                                      hipblasLtMatmulPreferenceAttributes_t attr, const void* buf,
                                                      size_t size) {
    if (attr != HIPBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES || size != sizeof(uint64_t))
        return HIPBLAS_STATUS_INVALID_VALUE;
    std::memcpy(reinterpret_cast<uint64_t*>(p), buf, sizeof(uint64_t));
    return HIPBLAS_STATUS_SUCCESS;
}
hipblasStatus_t hipblasLtMatmulPreferenceDestroy(hipblasLtMatmulPreference_t p) {
    delete reinterpret_cast<uint64_t*>(p);
    return HIPBLAS_STATUS_SUCCESS;
}
hipblasStatus_t hipblasLtMatmulAlgoGetHeuristic(hipblasLtHandle_t, hipblasLtMatmulDesc_t op, hipblasLtMatrixLayout_t a,
                                                hipblasLtMatrixLayout_t b, hipblasLtMatrixLayout_t,
                                                hipblasLtMatrixLayout_t d, hipblasLtMatmulPreference_t, int requested,
                                                hipblasLtMatmulHeuristicResult_t* results, int* found) {
    fake::hang_point(__func__, -1);
    if (requested < 1 || !results || !found) return HIPBLAS_STATUS_INVALID_VALUE;
    *found = 0;
    if (!supported(*reinterpret_cast<Desc*>(op), *reinterpret_cast<Layout*>(a), *reinterpret_cast<Layout*>(b),
                   *reinterpret_cast<Layout*>(d)))
        return HIPBLAS_STATUS_NOT_SUPPORTED;
    results[0] = hipblasLtMatmulHeuristicResult_t{};
    results[0].state = HIPBLAS_STATUS_SUCCESS;
    *found = 1;
    return HIPBLAS_STATUS_SUCCESS;
}

hipblasStatus_t hipblasLtMatmul(hipblasLtHandle_t, hipblasLtMatmulDesc_t op, const void* alpha, const void* A,
                                hipblasLtMatrixLayout_t ad, const void* B, hipblasLtMatrixLayout_t bd, const void* beta,
                                const void* C, hipblasLtMatrixLayout_t, void* D, hipblasLtMatrixLayout_t dd,
                                const hipblasLtMatmulAlgo_t*, void*, size_t, hipStream_t stream) {
    const auto& hk = hooks();
    const int dev = hk.ok() ? hk.stream_device(stream) : -1;
    fake::hang_point(__func__, dev);
    if (!hk.ok()) return HIPBLAS_STATUS_NOT_INITIALIZED;
    float al, be;
    std::memcpy(&al, alpha, 4);
    std::memcpy(&be, beta, 4);
    // The lazy results need D = op(A) op(B) exactly.
    if (al != 1 || be != 0 || (C != D && C)) return HIPBLAS_STATUS_NOT_SUPPORTED;
    Pending p{*reinterpret_cast<Desc*>(op),
              *reinterpret_cast<Layout*>(ad),
              *reinterpret_cast<Layout*>(bd),
              *reinterpret_cast<Layout*>(dd),
              reinterpret_cast<unsigned long long>(A),
              reinterpret_cast<unsigned long long>(B),
              reinterpret_cast<unsigned long long>(D),
              hk.wrong(dev) != 0};
    if (!supported(p.desc, p.a, p.b, p.d)) return HIPBLAS_STATUS_NOT_SUPPORTED;
    const double rate = hk.tflops(dev, p.a.type == HIP_R_16BF);
    if (!(rate > 0)) return HIPBLAS_STATUS_EXECUTION_FAILED;
    const uint64_t k = p.desc.ta == HIPBLAS_OP_N ? p.a.cols : p.a.rows;
    {
        std::lock_guard<std::recursive_mutex> lock(g_mu);
        g_pending[p.pd] = p;
    }
    hk.charge(stream, 2.0 * double(p.d.rows) * double(p.d.cols) * double(k) / (rate * 1e12));
    return HIPBLAS_STATUS_SUCCESS;
}

}  // extern "C"
