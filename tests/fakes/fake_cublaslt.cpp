// Fake cuBLASLt built against NVIDIA's cublasLt.h. Matmuls run on the fake libcuda's memory and
// clock: each charges 2*M*N*K / (scenario gemm_<precision>_tflops) to its stream, so a rate timed
// with events equals the scenario's figure. Results are computed lazily: when a copy reads device
// memory that a matmul wrote, exactly those elements are computed (double-precision dot products of
// the inputs as they are then), so sweeps over 8192^3 shapes stay cheap. Only beta = 0 is supported.
#pragma GCC visibility push(default)
#include <cublasLt.h>
#pragma GCC visibility pop

#include <cmath>
#include <cstring>
#include <map>
#include <mutex>

#include "fake_hooks.hpp"

struct cublasLtContext {
    int dev = 0;
};

namespace {

struct Desc {
    cublasComputeType_t compute;
    cudaDataType_t scale;
    cublasOperation_t ta = CUBLAS_OP_N, tb = CUBLAS_OP_N;
};
struct Layout {
    cudaDataType_t type;
    uint64_t rows, cols;
    int64_t ld;
};
// A matmul whose output is computed when read.
struct Pending {
    Desc desc;
    Layout a, b, d;
    unsigned long long pa, pb, pd;
    double alpha;
    bool wrong;
};

std::recursive_mutex g_mu;
std::map<unsigned long long, Pending> g_pending;  // by D's address

size_t type_bytes(cudaDataType_t t) {
    switch (t) {
        case CUDA_R_32F:
        case CUDA_R_32I: return 4;
        case CUDA_R_16F:
        case CUDA_R_16BF: return 2;
        case CUDA_R_8F_E4M3:
        case CUDA_R_8I: return 1;
        default: return 0;
    }
}

double load(cudaDataType_t t, const unsigned char* p) {
    switch (t) {
        case CUDA_R_32F: {
            float f;
            std::memcpy(&f, p, 4);
            return f;
        }
        case CUDA_R_32I: {
            int32_t i;
            std::memcpy(&i, p, 4);
            return i;
        }
        case CUDA_R_16F: {
            _Float16 h;
            std::memcpy(&h, p, 2);
            return static_cast<double>(h);
        }
        case CUDA_R_16BF: {
            uint32_t u = uint32_t(p[0] | (p[1] << 8)) << 16;
            float f;
            std::memcpy(&f, &u, 4);
            return f;
        }
        case CUDA_R_8I: return static_cast<int8_t>(*p);
        case CUDA_R_8F_E4M3: {
            int e = (*p >> 3) & 15, m = *p & 7;
            double v = e == 0 ? std::ldexp(m, -9) : std::ldexp(8 + m, e - 10);
            return (*p & 0x80) ? -v : v;
        }
        default: return NAN;
    }
}

void store(cudaDataType_t t, unsigned char* p, double v) {
    switch (t) {
        case CUDA_R_32F: {
            float f = float(v);
            std::memcpy(p, &f, 4);
            break;
        }
        case CUDA_R_32I: {
            int32_t i = int32_t(std::llround(v));
            std::memcpy(p, &i, 4);
            break;
        }
        case CUDA_R_16F: {
            _Float16 h = static_cast<_Float16>(float(v));
            std::memcpy(p, &h, 2);
            break;
        }
        case CUDA_R_16BF: {
            float f = float(v);
            uint32_t u;
            std::memcpy(&u, &f, 4);
            u += 0x7FFF + ((u >> 16) & 1);  // round to nearest even
            p[0] = (u >> 16) & 0xFF, p[1] = u >> 24;
            break;
        }
        default: break;
    }
}

// Element (r, c) of op(X) for a column-major layout.
double elem(const Layout& l, const unsigned char* base, cublasOperation_t op, uint64_t r, uint64_t c) {
    if (op != CUBLAS_OP_N) std::swap(r, c);
    return load(l.type, base + (r + c * uint64_t(l.ld)) * type_bytes(l.type));
}

void compute(const Pending& p, uint64_t first, uint64_t last) {  // element offsets in D, [first, last)
    const auto& h = fake::cuda_hooks();
    uint64_t k = p.desc.ta == CUBLAS_OP_N ? p.a.cols : p.a.rows;
    auto* a = static_cast<unsigned char*>(h.host_view(p.pa, p.a.cols * p.a.ld * type_bytes(p.a.type)));
    auto* b = static_cast<unsigned char*>(h.host_view(p.pb, p.b.cols * p.b.ld * type_bytes(p.b.type)));
    auto* d = static_cast<unsigned char*>(h.host_view(p.pd, p.d.cols * p.d.ld * type_bytes(p.d.type)));
    if (!a || !b || !d) return;
    for (uint64_t e = first; e < last; ++e) {
        uint64_t i = e % p.d.ld, j = e / p.d.ld;
        if (i >= p.d.rows || j >= p.d.cols) continue;
        double sum = 0;
        for (uint64_t x = 0; x < k; ++x) sum += elem(p.a, a, p.desc.ta, i, x) * elem(p.b, b, p.desc.tb, x, j);
        sum *= p.alpha;
        if (p.wrong) sum = 3 - sum;  // gemm_wrong_results: a plausible-looking wrong value
        store(p.d.type, d + e * type_bytes(p.d.type), sum);
    }
}

void on_read(unsigned long long ptr, size_t n) {
    std::lock_guard<std::recursive_mutex> lock(g_mu);
    for (const auto& [pd, p] : g_pending) {
        size_t w = type_bytes(p.d.type);
        unsigned long long end = pd + p.d.cols * p.d.ld * w;
        if (ptr >= end || ptr + n <= pd) continue;
        unsigned long long lo = std::max(ptr, pd), hi = std::min<unsigned long long>(ptr + n, end);
        compute(p, (lo - pd) / w, (hi - pd + w - 1) / w);
    }
}

double rate_tflops(const fake::Gpu& g, const Layout& a, cublasComputeType_t c) {
    if (a.type == CUDA_R_8I) return g.gemm_int8_tops;
    if (a.type == CUDA_R_8F_E4M3) return g.gemm_fp8_tflops;
    if (a.type == CUDA_R_16BF) return g.gemm_bf16_tflops;
    if (a.type == CUDA_R_16F) return g.gemm_fp16_tflops;
    if (c == CUBLAS_COMPUTE_32F_FAST_TF32) return g.gemm_tf32_tflops;
    return 0;  // plain FP32 GEMM: not emulated
}

// The precisions the check uses, as cuBLASLt's tables list them (A/B type -> D type, compute).
bool supported(const Desc& d, const Layout& a, const Layout& b, const Layout& out) {
    if (a.type != b.type) return false;
    bool tn = d.ta == CUBLAS_OP_T && d.tb == CUBLAS_OP_N;
    switch (a.type) {
        case CUDA_R_32F: return out.type == CUDA_R_32F && d.compute == CUBLAS_COMPUTE_32F_FAST_TF32;
        case CUDA_R_16F:
        case CUDA_R_16BF: return out.type == a.type && d.compute == CUBLAS_COMPUTE_32F;
        case CUDA_R_8F_E4M3: return tn && d.compute == CUBLAS_COMPUTE_32F && out.type == CUDA_R_32F;
        case CUDA_R_8I: return tn && d.compute == CUBLAS_COMPUTE_32I && out.type == CUDA_R_32I && d.scale == CUDA_R_32I;
        default: return false;
    }
}

}  // namespace

extern "C" {

cublasStatus_t cublasLtCreate(cublasLtHandle_t* h) {
    fake::hang_point(__func__, -1);
    const auto& hooks = fake::cuda_hooks();
    if (!h) return CUBLAS_STATUS_INVALID_VALUE;
    if (!hooks.ok()) return CUBLAS_STATUS_NOT_INITIALIZED;  // no fake libcuda in this process
    int dev = hooks.stream_device(nullptr);
    if (dev < 0) return CUBLAS_STATUS_NOT_INITIALIZED;  // no current context
    hooks.on_device_read(&on_read);
    *h = new cublasLtContext{dev};
    return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtDestroy(cublasLtHandle_t h) {
    fake::hang_point(__func__, -1);
    delete h;
    return CUBLAS_STATUS_SUCCESS;
}
const char* cublasLtGetStatusName(cublasStatus_t s) {
    fake::hang_point(__func__, -1);
    switch (s) {
        case CUBLAS_STATUS_SUCCESS: return "CUBLAS_STATUS_SUCCESS";
        case CUBLAS_STATUS_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED";
        case CUBLAS_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
        case CUBLAS_STATUS_NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED";
        default: return "CUBLAS_STATUS_UNKNOWN";
    }
}
size_t cublasLtGetVersion(void) {
    fake::hang_point(__func__, -1);
    return CUBLAS_VERSION;
}
// The CUDA version this "build" targets: scenario driver.cublaslt_cuda_version, else the driver's.
size_t cublasLtGetCudartVersion(void) {
    fake::hang_point(__func__, -1);
    const auto& h = fake::cuda_hooks();
    if (const char* v = std::getenv("GPUVET_FAKE_CUBLASLT_CUDA_VERSION"); v && *v) return std::strtoul(v, nullptr, 10);
    if (h.ok())
        if (const fake::Scenario* sc = h.sc())
            return sc->cublaslt_cuda_version ? sc->cublaslt_cuda_version : sc->cuda_driver_version;
    return 12080;
}

cublasStatus_t cublasLtMatmulDescCreate(cublasLtMatmulDesc_t* d, cublasComputeType_t c, cudaDataType_t scale) {
    fake::hang_point(__func__, -1);
    if (!d) return CUBLAS_STATUS_INVALID_VALUE;
    *d = reinterpret_cast<cublasLtMatmulDesc_t>(new Desc{c, scale});
    return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t d, cublasLtMatmulDescAttributes_t attr,
                                              const void* buf, size_t size) {
    fake::hang_point(__func__, -1);
    auto* x = reinterpret_cast<Desc*>(d);
    if (!x || !buf) return CUBLAS_STATUS_INVALID_VALUE;
    switch (attr) {
        case CUBLASLT_MATMUL_DESC_TRANSA:
        case CUBLASLT_MATMUL_DESC_TRANSB:
            if (size != sizeof(int32_t)) return CUBLAS_STATUS_INVALID_VALUE;
            std::memcpy(attr == CUBLASLT_MATMUL_DESC_TRANSA ? &x->ta : &x->tb, buf, 4);
            return CUBLAS_STATUS_SUCCESS;
        default: return CUBLAS_STATUS_NOT_SUPPORTED;  // not emulated
    }
}
cublasStatus_t cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t d) {
    fake::hang_point(__func__, -1);
    delete reinterpret_cast<Desc*>(d);
    return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t* l, cudaDataType t, uint64_t rows, uint64_t cols,
                                          int64_t ld) {
    fake::hang_point(__func__, -1);
    if (!l || type_bytes(t) == 0 || ld < int64_t(rows)) return CUBLAS_STATUS_INVALID_VALUE;
    *l = reinterpret_cast<cublasLtMatrixLayout_t>(new Layout{t, rows, cols, ld});
    return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t l) {
    fake::hang_point(__func__, -1);
    delete reinterpret_cast<Layout*>(l);
    return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtMatmulPreferenceCreate(cublasLtMatmulPreference_t* p) {
    fake::hang_point(__func__, -1);
    if (!p) return CUBLAS_STATUS_INVALID_VALUE;
    *p = reinterpret_cast<cublasLtMatmulPreference_t>(new uint64_t(0));
    return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtMatmulPreferenceSetAttribute(cublasLtMatmulPreference_t p,
                                                    cublasLtMatmulPreferenceAttributes_t attr, const void* buf,
                                                    size_t size) {
    fake::hang_point(__func__, -1);
    if (!p || !buf) return CUBLAS_STATUS_INVALID_VALUE;
    if (attr != CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES || size != 8) return CUBLAS_STATUS_NOT_SUPPORTED;
    std::memcpy(reinterpret_cast<uint64_t*>(p), buf, 8);
    return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtMatmulPreferenceDestroy(cublasLtMatmulPreference_t p) {
    fake::hang_point(__func__, -1);
    delete reinterpret_cast<uint64_t*>(p);
    return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtMatmulAlgoGetHeuristic(cublasLtHandle_t h, cublasLtMatmulDesc_t op, cublasLtMatrixLayout_t a,
                                              cublasLtMatrixLayout_t b, cublasLtMatrixLayout_t,
                                              cublasLtMatrixLayout_t d, cublasLtMatmulPreference_t, int requested,
                                              cublasLtMatmulHeuristicResult_t results[], int* count) {
    fake::hang_point(__func__, -1);
    if (!h || !op || !a || !b || !d || !results || !count || requested < 1) return CUBLAS_STATUS_INVALID_VALUE;
    const auto& x = *reinterpret_cast<Desc*>(op);
    *count = 0;
    if (!supported(x, *reinterpret_cast<Layout*>(a), *reinterpret_cast<Layout*>(b), *reinterpret_cast<Layout*>(d)))
        return CUBLAS_STATUS_NOT_SUPPORTED;
    std::memset(&results[0], 0, sizeof results[0]);
    results[0].state = CUBLAS_STATUS_SUCCESS;
    results[0].wavesCount = 1;
    *count = 1;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmul(cublasLtHandle_t h, cublasLtMatmulDesc_t op, const void* alpha, const void* A,
                              cublasLtMatrixLayout_t Adesc, const void* B, cublasLtMatrixLayout_t Bdesc,
                              const void* beta, const void* C, cublasLtMatrixLayout_t, void* D,
                              cublasLtMatrixLayout_t Ddesc, const cublasLtMatmulAlgo_t*, void*, size_t,
                              cudaStream_t stream) {
    fake::hang_point(__func__, fake::stream_gpu(stream));
    // g_mu is taken only around g_pending: the hooks take libcuda's lock, and libcuda calls back
    // into this library (on_device_read) with its lock held, so holding g_mu across a hook call
    // would deadlock two threads (the burn drives GPUs from one thread each).
    const auto& hooks = fake::cuda_hooks();
    if (!h || !op || !alpha || !beta || !A || !B || !D || !Adesc || !Bdesc || !Ddesc)
        return CUBLAS_STATUS_INVALID_VALUE;
    Pending p{*reinterpret_cast<Desc*>(op),
              *reinterpret_cast<Layout*>(Adesc),
              *reinterpret_cast<Layout*>(Bdesc),
              *reinterpret_cast<Layout*>(Ddesc),
              reinterpret_cast<unsigned long long>(A),
              reinterpret_cast<unsigned long long>(B),
              reinterpret_cast<unsigned long long>(D),
              1,
              false};
    if (!supported(p.desc, p.a, p.b, p.d)) return CUBLAS_STATUS_NOT_SUPPORTED;
    bool int_scale = p.desc.scale == CUDA_R_32I;
    double al = int_scale ? *static_cast<const int32_t*>(alpha) : *static_cast<const float*>(alpha);
    double be = int_scale ? *static_cast<const int32_t*>(beta) : *static_cast<const float*>(beta);
    if (be != 0 || (C != D && C)) return CUBLAS_STATUS_NOT_SUPPORTED;  // lazy results need D = alpha*op(A)op(B)
    p.alpha = al;
    uint64_t m = p.d.rows, n = p.d.cols, k = p.desc.ta == CUBLAS_OP_N ? p.a.cols : p.a.rows;
    uint64_t kb = p.desc.tb == CUBLAS_OP_N ? p.b.rows : p.b.cols, ma = p.desc.ta == CUBLAS_OP_N ? p.a.rows : p.a.cols;
    if (kb != k || ma != m) return CUBLAS_STATUS_INVALID_VALUE;
    int dev = hooks.stream_device(stream);
    const fake::Gpu* g = dev >= 0 ? hooks.gpu(dev) : nullptr;
    if (!g) return CUBLAS_STATUS_EXECUTION_FAILED;
    // Every operand must lie inside a device allocation, as on the GPU (else it would fault).
    if (!hooks.host_view(p.pa, p.a.cols * p.a.ld * type_bytes(p.a.type)) ||
        !hooks.host_view(p.pb, p.b.cols * p.b.ld * type_bytes(p.b.type)) ||
        !hooks.host_view(p.pd, p.d.cols * p.d.ld * type_bytes(p.d.type)))
        return CUBLAS_STATUS_EXECUTION_FAILED;
    p.wrong = g->gemm_wrong_results;
    double rate = rate_tflops(*g, p.a, p.desc.compute);
    if (rate <= 0) return CUBLAS_STATUS_NOT_SUPPORTED;
    {
        std::lock_guard<std::recursive_mutex> lock(g_mu);
        g_pending[p.pd] = p;
    }
    return hooks.charge(stream, 2.0 * double(m) * double(n) * double(k) / (rate * 1e12)) == 0
               ? CUBLAS_STATUS_SUCCESS
               : CUBLAS_STATUS_EXECUTION_FAILED;
}

}  // extern "C"
