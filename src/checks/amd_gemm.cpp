// gpu.gemm on AMD GPUs: hipBLASLt GEMMs on HIP device memory, the NVIDIA check's shape sweep, random
// input tiles, sampled outputs against the CPU reference and judge (judge_gemm: the best rate per
// precision against the SKU's dense matrix-core datasheet figure, FAIL for any wrong output). FP16
// and BF16 are measured; TF32, FP8 and INT8 are absent with the reason (below).
#include <algorithm>
#include <memory>

#include "checks/amd_checks.hpp"
#include "checks/amd_measurement.hpp"
#include "checks/gpu_gemm_judge.hpp"
#include "core/context.hpp"
#include "core/error.hpp"
#include "core/stats.hpp"
#include "gpu/bindings/hipblaslt_api.hpp"
#include "gpu/gemm_plan.hpp"
#include "gpu/gemm_run.hpp"

namespace gpuvet::amd_measure {

namespace {

using namespace gemm;
using namespace hiplt;

constexpr std::size_t kWorkspaceBytes = 32u << 20;

void lt_check(hipblasStatus_t st, const char* call) {
    if (st != HIPBLAS_STATUS_SUCCESS) throw HipblasError(call, st);
}

// The hipDataType of a measured precision (the values of FP16 and BF16 equal CUDA's, but the
// binding names its own), or why the precision is not measured on AMD GPUs.
struct AmdPrecision {
    hipDataType type = HIP_R_32F;
    const char* not_measured = nullptr;
};
AmdPrecision amd_precision(Precision p) {
    switch (p) {
        case Precision::fp16: return {HIP_R_16F};
        case Precision::bf16: return {HIP_R_16BF};
        case Precision::tf32:
            return {HIP_R_32F,
                    "hipBLASLt offers TF32 (HIPBLAS_COMPUTE_32F_FAST_TF32) on NVIDIA's backend only: not measured on "
                    "AMD GPUs"};
        case Precision::fp8:
            return {HIP_R_32F,
                    "MI300-class GPUs compute FP8 in the FNUZ encoding (HIP_R_8F_E4M3_FNUZ), which gpuvet's FP8 inputs "
                    "and CPU reference (OCP E4M3) do not cover: not measured on AMD GPUs"};
        case Precision::int8: return {HIP_R_32F, "INT8 through hipBLASLt is not measured on AMD GPUs"};
    }
    return {HIP_R_32F, "not measured on AMD GPUs"};
}

struct Handle {
    const HipblasLtApi& lt;
    hipblasLtHandle_t h = nullptr;
    Handle(const HipblasLtApi& api, HipSession& s) : lt(api) {
        s.make_current();
        lt_check(lt.hipblasLtCreate(&h), "hipblasLtCreate");
    }
    ~Handle() {
        if (h) lt.hipblasLtDestroy(h);
    }
};

struct Descs {
    const HipblasLtApi& lt;
    hipblasLtMatmulDesc_t op = nullptr;
    hipblasLtMatrixLayout_t a = nullptr, b = nullptr, d = nullptr;
    hipblasLtMatmulPreference_t pref = nullptr;
    ~Descs() {
        if (pref) lt.hipblasLtMatmulPreferenceDestroy(pref);
        for (auto* l : {a, b, d})
            if (l) lt.hipblasLtMatrixLayoutDestroy(l);
        if (op) lt.hipblasLtMatmulDescDestroy(op);
    }
};

// The tile repeated over the buffer, as fill_repeating does on NVIDIA.
void fill(CheckContext& ctx, HipSession& s, const HipBuffer& buf, const InputTile& t) {
    auto* base = static_cast<char*>(buf.get());
    for (std::uint64_t at = 0; at < buf.bytes(); at += t.bytes.size()) {
        ctx.throw_if_stopped();
        hip_check(
            s.api(),
            s.api().hipMemcpy(base + at, t.bytes.data(), std::min<std::uint64_t>(t.bytes.size(), buf.bytes() - at),
                              hip::hipMemcpyHostToDevice),
            "hipMemcpy(host to device)");
    }
}

// One shape: D = A^T B ("TN", as on NVIDIA), timed and its sampled outputs checked.
ShapeResult run_shape(CheckContext& ctx, const HipblasLtApi& lt, Handle& handle, HipSession& s, const PrecisionInfo& p,
                      hipDataType type, const Shape& sh, const RunSettings& rs) {
    ShapeResult r{sh};
    const InputTile &ta = tile_a(p), &tb = tile_b(p);
    HipBuffer a = s.alloc(sh.m * sh.k * p.ab_bytes), b = s.alloc(sh.k * sh.n * p.ab_bytes),
              d = s.alloc(sh.m * sh.n * p.d_bytes), ws = s.alloc(kWorkspaceBytes);
    fill(ctx, s, a, ta);
    fill(ctx, s, b, tb);
    Descs ds{lt};
    lt_check(lt.hipblasLtMatmulDescCreate(&ds.op, HIPBLAS_COMPUTE_32F, HIP_R_32F), "hipblasLtMatmulDescCreate");
    hipblasOperation_t op_a = HIPBLAS_OP_T, op_b = HIPBLAS_OP_N;
    lt_check(lt.hipblasLtMatmulDescSetAttribute(ds.op, HIPBLASLT_MATMUL_DESC_TRANSA, &op_a, sizeof op_a),
             "hipblasLtMatmulDescSetAttribute");
    lt_check(lt.hipblasLtMatmulDescSetAttribute(ds.op, HIPBLASLT_MATMUL_DESC_TRANSB, &op_b, sizeof op_b),
             "hipblasLtMatmulDescSetAttribute");
    lt_check(lt.hipblasLtMatrixLayoutCreate(&ds.a, type, sh.k, sh.m, sh.k), "hipblasLtMatrixLayoutCreate");
    lt_check(lt.hipblasLtMatrixLayoutCreate(&ds.b, type, sh.k, sh.n, sh.k), "hipblasLtMatrixLayoutCreate");
    lt_check(lt.hipblasLtMatrixLayoutCreate(&ds.d, type, sh.m, sh.n, sh.m), "hipblasLtMatrixLayoutCreate");
    lt_check(lt.hipblasLtMatmulPreferenceCreate(&ds.pref), "hipblasLtMatmulPreferenceCreate");
    std::uint64_t ws_bytes = kWorkspaceBytes;
    lt_check(lt.hipblasLtMatmulPreferenceSetAttribute(ds.pref, HIPBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws_bytes,
                                                      sizeof ws_bytes),
             "hipblasLtMatmulPreferenceSetAttribute");
    hipblasLtMatmulHeuristicResult_t heur{};
    int found = 0;
    hipblasStatus_t hs =
        lt.hipblasLtMatmulAlgoGetHeuristic(handle.h, ds.op, ds.a, ds.b, ds.d, ds.d, ds.pref, 1, &heur, &found);
    if (hs == HIPBLAS_STATUS_NOT_SUPPORTED || (hs == HIPBLAS_STATUS_SUCCESS && found == 0)) {
        r.absent_reason = "hipBLASLt has no algorithm for this shape and precision";
        return r;
    }
    lt_check(hs, "hipblasLtMatmulAlgoGetHeuristic");

    HipStream stream = s.stream();
    const float alpha = 1, beta = 0;
    auto matmul = [&] {
        if (ctx.stop_requested()) {  // the work in flight is waited for before the buffers go
            stream.synchronize();
            throw Interrupted{};
        }
        lt_check(lt.hipblasLtMatmul(handle.h, ds.op, &alpha, a.get(), ds.a, b.get(), ds.b, &beta, d.get(), ds.d,
                                    d.get(), ds.d, &heur.algo, ws.get(), kWorkspaceBytes, stream.get()),
                 "hipblasLtMatmul");
    };
    for (int i = 0; i < rs.warmup; ++i) matmul();
    std::vector<double> ms;
    for (int i = 0; i < rs.timed; ++i) ms.push_back(s.time_ms(stream, matmul));
    stream.synchronize();
    r.median_ms = median(ms).value();
    if (r.median_ms > 0) r.rate = sh.flops() / (r.median_ms * 1e-3) / 1e12;

    // Sampled outputs, one element at a time (scattered), against the CPU in double precision.
    auto where = sample_positions(sh, rs.samples, 0x5EED + sh.m + sh.n + sh.k);
    std::vector<double> got;
    for (const auto& w : where) {
        std::uint8_t bytes[8] = {};
        hip_check(s.api(),
                  s.api().hipMemcpy(bytes, static_cast<const char*>(d.get()) + (w.i + w.j * sh.m) * p.d_bytes,
                                    p.d_bytes, hip::hipMemcpyDeviceToHost),
                  "hipMemcpy(device to host)");
        got.push_back(decode_output(p, bytes));
    }
    r.checked = where.size();
    r.mismatches = verify(p, ta, tb, sh, where, got);
    return r;
}

PrecisionRun run_precision(CheckContext& ctx, const HipblasLtApi& lt, Handle& handle, HipSession& s,
                           const PrecisionInfo& p, hipDataType type, const RunSettings& rs) {
    PrecisionRun run;
    std::vector<Shape> shapes = sweep(rs.tier, p, budget_bytes(s.mem_info().free_bytes));
    if (shapes.empty()) {
        run.absent_reason = "not enough free GPU memory for a 1024^3 GEMM";
        return run;
    }
    try {
        for (const Shape& sh : shapes) {
            ctx.throw_if_stopped();
            run.shapes.push_back(run_shape(ctx, lt, handle, s, p, type, sh, rs));
        }
    } catch (const Interrupted&) {
        run.interrupted = true;
        run.absent_reason = kInterrupted;
    }
    if (!run.best() && run.absent_reason.empty()) run.absent_reason = run.shapes.front().absent_reason;
    return run;
}

}  // namespace

std::vector<CheckResult> gemm(CheckContext& ctx, std::string_view key, std::string_view title) {
    HipblasLtApi lt = HipblasLtApi::load();
    if (!lt.ok()) {
        CheckResult r;
        r.key = std::string(key);
        r.title = std::string(title);
        r.verdict = Verdict::Skip;
        r.summary = kHipblasLtMissingAdvice;
        r.details.push_back("tried (" + std::to_string(lt.tried.size()) + "):");
        for (const auto& t : lt.tried) r.details.push_back("  " + t);
        return {r};
    }
    RunSettings rs = settings_for(ctx.options.tier);
    rs.stop = ctx.stop;
    return for_each_gpu(ctx, key, title, [&](Member& m, CheckResult& r) {
        HipSession& s = *m.session;
        Handle handle(lt, s);
        GpuGemmRun g{m.index, 0, lt.text(handle.h), {}, "hipBLASLt"};
        for (const auto& p : precisions()) {
            AmdPrecision ap = amd_precision(p.precision);
            if (ap.not_measured) {
                g.precisions.push_back({&p, std::nullopt, ap.not_measured});
                continue;
            }
            if (ctx.progress) ctx.progress->update("GPU " + std::to_string(m.index) + ": " + p.label);
            g.precisions.push_back({&p, run_precision(ctx, lt, handle, s, p, ap.type, rs)});
        }
        CheckResult j = judge_gemm(g, m.spec);
        j.key = r.key;
        j.title = r.title;
        r = std::move(j);
    });
}

}  // namespace gpuvet::amd_measure
