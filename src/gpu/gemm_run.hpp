// One precision's GEMM sweep on one GPU through cuBLASLt: random inputs, warm-up, the median of
// event-timed runs per shape, and a CPU check of sampled outputs of every shape.
#pragma once
#include <atomic>
#include <optional>
#include <string>
#include <vector>

#include "gpu/gemm_plan.hpp"

namespace gpuvet {
class GpuSession;
}

namespace gpuvet::gemm {

struct ShapeResult {
    Shape shape;
    std::optional<double> rate;  // TFLOPS (TOPS for INT8)
    double median_ms = 0;
    std::string absent_reason;   // when no rate (no algorithm for this shape)
    std::size_t checked = 0;     // outputs compared with the CPU
    std::vector<Mismatch> mismatches;
};

struct PrecisionRun {
    std::vector<ShapeResult> shapes;
    std::string absent_reason;  // set when nothing was measured (no shape fits, none supported)
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

// Throws CublasError / CudaError for failures that are not "this shape has no algorithm".
PrecisionRun run_precision(const CublasLtApi& lt, LtHandle& handle, GpuSession& s, const PrecisionInfo& p,
                           const RunSettings& rs);

}  // namespace gpuvet::gemm
