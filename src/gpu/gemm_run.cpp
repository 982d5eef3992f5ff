#include "gpu/gemm_run.hpp"
#include "core/stats.hpp"

#include <algorithm>
#include <cstring>
#include <map>
#include <mutex>

#include "core/error.hpp"
#include "core/result.hpp"
#include "gpu/device_fill.hpp"
#include "gpu/session.hpp"

namespace gpuvet::gemm {

using namespace lt;

namespace {

constexpr std::size_t kWorkspaceBytes = 32u << 20;  // what cuBLAS recommends for Hopper
constexpr std::size_t kTileElements = (1u << 20) | 1;

void lt_check(const CublasLtApi& lt, cublasStatus_t st, const char* call) {
    if (st != CUBLAS_STATUS_SUCCESS) throw CublasError(call, st, lt.status_name(st));
}

void fill(GpuSession& s, const DeviceBuffer& buf, const InputTile& t, const std::atomic<bool>* stop) {
    fill_repeating(s, buf.ptr(), buf.bytes(), t.bytes.data(), t.bytes.size(), stop);
}

}  // namespace

// Owners of the cuBLASLt descriptors.
struct GemmDescs {
    const CublasLtApi& lt;
    cublasLtMatmulDesc_t op = nullptr;
    cublasLtMatrixLayout_t a = nullptr, b = nullptr, d = nullptr;
    cublasLtMatmulPreference_t pref = nullptr;
    ~GemmDescs() {
        if (pref) lt.cublasLtMatmulPreferenceDestroy(pref);
        for (auto* l : {a, b, d})
            if (l) lt.cublasLtMatrixLayoutDestroy(l);
        if (op) lt.cublasLtMatmulDescDestroy(op);
    }
};

std::uint64_t budget_bytes(std::uint64_t free_bytes) {
    std::uint64_t budget = free_bytes * 8 / 10;
    return budget > kWorkspaceBytes ? budget - kWorkspaceBytes : 0;
}

namespace {
// Tiles by (precision, operand); std::map keeps references stable as tiles are added.
const InputTile& shared_tile(const PrecisionInfo& p, int operand, std::size_t elements, std::uint64_t seed) {
    static std::mutex mu;
    static std::map<std::pair<int, int>, InputTile> tiles;
    std::lock_guard<std::mutex> lock(mu);  // a second GPU's thread waits and takes the same tile
    const auto key = std::make_pair(int(p.precision), operand);
    auto it = tiles.find(key);
    if (it == tiles.end()) it = tiles.emplace(key, random_tile(p, elements, seed)).first;
    return it->second;
}
}  // namespace

const InputTile& tile_a(const PrecisionInfo& p) { return shared_tile(p, 0, kTileElements, 0xA11CE + int(p.precision)); }
const InputTile& tile_b(const PrecisionInfo& p) {
    return shared_tile(p, 1, kTileElements + 2, 0xB0B + int(p.precision));
}

PreparedGemm::PreparedGemm(const CublasLtApi& lt, LtHandle& handle, GpuSession& s, const PrecisionInfo& p,
                           const Shape& sh, const InputTile& ta, const InputTile& tb, const std::atomic<bool>* stop)
    : lt_(lt), handle_(handle), s_(s), p_(p), shape_(sh) {
    s.make_current();
    a_ = s.alloc(sh.m * sh.k * p.ab_bytes);
    b_ = s.alloc(sh.k * sh.n * p.ab_bytes);
    d_ = s.alloc(sh.m * sh.n * p.d_bytes);
    workspace_ = s.alloc(kWorkspaceBytes);
    fill(s, a_, ta, stop);
    fill(s, b_, tb, stop);

    ds_ = std::make_unique<GemmDescs>(GemmDescs{lt});
    GemmDescs& ds = *ds_;
    lt_check(lt, lt.cublasLtMatmulDescCreate(&ds.op, p.compute, p.scale_type), "cublasLtMatmulDescCreate");
    // "TN": the form FP8 and INT8 (IMMA) kernels require, used for every precision alike.
    cublasOperation_t ta_op = CUBLAS_OP_T, tb_op = CUBLAS_OP_N;
    lt_check(lt, lt.cublasLtMatmulDescSetAttribute(ds.op, CUBLASLT_MATMUL_DESC_TRANSA, &ta_op, sizeof ta_op),
             "cublasLtMatmulDescSetAttribute");
    lt_check(lt, lt.cublasLtMatmulDescSetAttribute(ds.op, CUBLASLT_MATMUL_DESC_TRANSB, &tb_op, sizeof tb_op),
             "cublasLtMatmulDescSetAttribute");
    lt_check(lt, lt.cublasLtMatrixLayoutCreate(&ds.a, p.ab_type, sh.k, sh.m, sh.k), "cublasLtMatrixLayoutCreate");
    lt_check(lt, lt.cublasLtMatrixLayoutCreate(&ds.b, p.ab_type, sh.k, sh.n, sh.k), "cublasLtMatrixLayoutCreate");
    lt_check(lt, lt.cublasLtMatrixLayoutCreate(&ds.d, p.d_type, sh.m, sh.n, sh.m), "cublasLtMatrixLayoutCreate");
    lt_check(lt, lt.cublasLtMatmulPreferenceCreate(&ds.pref), "cublasLtMatmulPreferenceCreate");
    std::uint64_t ws = kWorkspaceBytes;
    lt_check(lt,
             lt.cublasLtMatmulPreferenceSetAttribute(ds.pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws),
             "cublasLtMatmulPreferenceSetAttribute");
    cublasLtMatmulHeuristicResult_t heur{};
    int found = 0;
    cublasStatus_t hs =
        lt.cublasLtMatmulAlgoGetHeuristic(handle.get(), ds.op, ds.a, ds.b, ds.d, ds.d, ds.pref, 1, &heur, &found);
    if (hs == CUBLAS_STATUS_NOT_SUPPORTED || (hs == CUBLAS_STATUS_SUCCESS && found == 0)) return;
    lt_check(lt, hs, "cublasLtMatmulAlgoGetHeuristic");
    algo_ = heur.algo;
    has_algo_ = true;
}

PreparedGemm::~PreparedGemm() = default;

void PreparedGemm::enqueue(const Stream& st) const {
    float alpha_f = 1, beta_f = 0;
    std::int32_t alpha_i = 1, beta_i = 0;
    const void* alpha = p_.scale_type == CUDA_R_32I ? static_cast<const void*>(&alpha_i) : &alpha_f;
    const void* beta = p_.scale_type == CUDA_R_32I ? static_cast<const void*>(&beta_i) : &beta_f;
    const GemmDescs& ds = *ds_;
    lt_check(lt_,
             lt_.cublasLtMatmul(handle_.get(), ds.op, alpha, reinterpret_cast<const void*>(a_.ptr()), ds.a,
                                reinterpret_cast<const void*>(b_.ptr()), ds.b, beta,
                                reinterpret_cast<const void*>(d_.ptr()), ds.d, reinterpret_cast<void*>(d_.ptr()), ds.d,
                                &algo_, reinterpret_cast<void*>(workspace_.ptr()), kWorkspaceBytes, st.get()),
             "cublasLtMatmul");
}

std::vector<double> PreparedGemm::read(const std::vector<Sample>& where) const {
    // One element at a time: the samples are scattered, and a few small copies cost microseconds.
    std::vector<double> got;
    got.reserve(where.size());
    for (const auto& w : where) {
        std::uint8_t bytes[8] = {};
        s_.download(bytes, d_.ptr() + (w.i + w.j * shape_.m) * p_.d_bytes, p_.d_bytes);
        got.push_back(decode_output(p_, bytes));
    }
    return got;
}

const ShapeResult* PrecisionRun::best() const {
    const ShapeResult* b = nullptr;
    for (const auto& s : shapes)
        if (s.rate && (!b || *s.rate > *b->rate)) b = &s;
    return b;
}
std::size_t PrecisionRun::mismatches() const {
    std::size_t n = 0;
    for (const auto& s : shapes) n += s.mismatches.size();
    return n;
}
std::size_t PrecisionRun::checked() const {
    std::size_t n = 0;
    for (const auto& s : shapes) n += s.checked;
    return n;
}

RunSettings settings_for(Tier tier) {
    RunSettings r;
    r.tier = tier;
    if (tier == Tier::Quick) r.warmup = 2, r.timed = 5;
    if (tier == Tier::Full) r.warmup = 5, r.timed = 20;
    return r;
}

LtHandle::LtHandle(const CublasLtApi& lt, GpuSession& s) : lt_(lt) {
    s.make_current();
    lt_check(lt_, lt_.cublasLtCreate(&h_), "cublasLtCreate");
}
LtHandle::~LtHandle() {
    if (h_) lt_.cublasLtDestroy(h_);
}

PrecisionRun run_precision(const CublasLtApi& lt, LtHandle& handle, GpuSession& s, const PrecisionInfo& p,
                           const RunSettings& rs) {
    PrecisionRun run;
    if (rs.stop && rs.stop->load()) {  // before the input tiles: making them takes a while on a CPU
        run.interrupted = true;
        run.absent_reason = kInterrupted;
        return run;
    }
    s.make_current();
    auto mem = s.mem_info();
    std::vector<Shape> shapes = sweep(rs.tier, p, budget_bytes(mem.free_bytes));
    if (shapes.empty()) {
        run.absent_reason = "not enough free GPU memory for a 1024^3 GEMM";
        return run;
    }
    Stream stream = s.stream();
    const InputTile &ta = tile_a(p), &tb = tile_b(p);

    auto stopped = [&] { return rs.stop && rs.stop->load(); };
    try {
        for (const Shape& sh : shapes) {
            if (stopped()) throw Interrupted{};
            ShapeResult r{sh};
            PreparedGemm g(lt, handle, s, p, sh, ta, tb, rs.stop);
            if (!g.has_algorithm()) {
                r.absent_reason = "cuBLASLt has no algorithm for this shape and precision";
                run.shapes.push_back(r);
                continue;
            }
            // One GEMM per poll: milliseconds on a GPU; the work in flight is waited for before the buffers go.
            auto matmul = [&] {
                if (stopped()) {
                    stream.synchronize();
                    throw Interrupted{};
                }
                g.enqueue(stream);
            };
            for (int i = 0; i < rs.warmup; ++i) matmul();
            std::vector<double> ms;
            for (int i = 0; i < rs.timed; ++i) ms.push_back(s.time_ms(stream, matmul));
            stream.synchronize();
            r.median_ms = median(ms).value();
            if (r.median_ms > 0) r.rate = sh.flops() / (r.median_ms * 1e-3) / 1e12;

            // Read back sampled outputs and compare with the CPU in double precision.
            auto where = sample_positions(sh, rs.samples, 0x5EED + sh.m + sh.n + sh.k);
            r.checked = where.size();
            r.mismatches = verify(p, ta, tb, sh, where, g.read(where));
            run.shapes.push_back(r);
        }
    } catch (const Interrupted&) {
        run.interrupted = true;
        run.absent_reason = kInterrupted;
    }
    if (!run.best() && run.absent_reason.empty()) run.absent_reason = run.shapes.front().absent_reason;
    return run;
}

}  // namespace gpuvet::gemm
