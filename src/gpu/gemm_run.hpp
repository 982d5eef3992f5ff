// One precision's GEMM sweep on one GPU through cuBLASLt: random inputs, warm-up, the median of
// event-timed runs per shape, and a CPU check of sampled outputs of every shape.
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gpu/gemm_plan.hpp"
#include "gpu/session.hpp"

namespace gpuvet::gemm {

struct ShapeResult {
    Shape shape;
    std::optional<double> rate{};  // TFLOPS (TOPS for INT8); {}: built as ShapeResult{shape}
    double median_ms = 0;
    std::string absent_reason{};  // when no rate (no algorithm for this shape)
    std::size_t checked = 0;      // outputs compared with the CPU
    std::vector<Mismatch> mismatches{};
};

struct PrecisionRun {
    std::vector<ShapeResult> shapes;
    std::string absent_reason;  // set when nothing was measured (no shape fits, none supported)
    bool interrupted = false;   // a stop ended the sweep early: the best rate so far is not the best
    const ShapeResult* best() const;
    std::size_t mismatches() const;
    std::size_t checked() const;
};

struct RunSettings {
    Tier tier = Tier::Standard;
    int warmup = 3;
    int timed = 10;
    std::size_t samples = 48;  // outputs verified per shape
    const std::atomic<bool>* stop = nullptr;
};
RunSettings settings_for(Tier tier);

// A cuBLASLt handle in the session's context, destroyed with it.
class LtHandle {
public:
    LtHandle(const CublasLtApi& lt, GpuSession& s);
    ~LtHandle();
    LtHandle(const LtHandle&) = delete;
    LtHandle& operator=(const LtHandle&) = delete;
    lt::cublasLtHandle_t get() const { return h_; }

private:
    const CublasLtApi& lt_;
    lt::cublasLtHandle_t h_ = nullptr;
};

struct GemmDescs;  // cuBLASLt descriptors (gemm_run.cpp)

// One shape of one precision made ready on a GPU: A and B filled from the tiles, D allocated, the
// cuBLASLt descriptors made and an algorithm chosen. The sweep times it once per shape; the burn
// runs it batch after batch and checks the same sampled outputs against a reference computed once.
// Throws CublasError / CudaError (an allocation that does not fit, a failing cuBLASLt call).
class PreparedGemm {
public:
    // `stop`, when given, is polled while the inputs are filled (throws Interrupted).
    PreparedGemm(const CublasLtApi& lt, LtHandle& handle, GpuSession& s, const PrecisionInfo& p, const Shape& shape,
                 const InputTile& a, const InputTile& b, const std::atomic<bool>* stop = nullptr);
    ~PreparedGemm();
    PreparedGemm(const PreparedGemm&) = delete;
    PreparedGemm& operator=(const PreparedGemm&) = delete;

    // False when cuBLASLt has no algorithm for this shape and precision (nothing can run).
    bool has_algorithm() const { return has_algo_; }
    const Shape& shape() const { return shape_; }
    const PrecisionInfo& precision() const { return p_; }
    // Enqueues one D = A^T B on `st` (asynchronous).
    void enqueue(const Stream& st) const;
    // Copies the sampled outputs of D back (after the stream's work is done) and decodes them.
    std::vector<double> read(const std::vector<Sample>& where) const;

private:
    const CublasLtApi& lt_;
    LtHandle& handle_;
    GpuSession& s_;
    const PrecisionInfo& p_;
    Shape shape_;
    DeviceBuffer a_, b_, d_, workspace_;
    std::unique_ptr<GemmDescs> ds_;
    bool has_algo_ = false;
    lt::cublasLtMatmulAlgo_t algo_{};
};

// What A, B and D of one shape may take of `free_bytes` (80%, less the workspace).
std::uint64_t budget_bytes(std::uint64_t free_bytes);

// The random input tiles of a precision (the same for the sweep and the burn). Made once per
// process and shared by every GPU's thread: a million random elements each, they take a CPU
// tenths of a second.
const InputTile& tile_a(const PrecisionInfo& p);
const InputTile& tile_b(const PrecisionInfo& p);

// Throws CublasError / CudaError for failures that are not "this shape has no algorithm".
PrecisionRun run_precision(const CublasLtApi& lt, LtHandle& handle, GpuSession& s, const PrecisionInfo& p,
                           const RunSettings& rs);

}  // namespace gpuvet::gemm
