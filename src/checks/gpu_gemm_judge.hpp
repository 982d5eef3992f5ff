// gpu.gemm's judge: each precision's shape sweep on one GPU, as measured (rates, sampled outputs
// compared with the CPU, absent reasons), turned into the GPU's result: the best rate per
// precision against the datasheet, and FAIL for any wrong output whatever the rate. No GPU, no I/O.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "core/result.hpp"
#include "gpu/gemm_plan.hpp"
#include "gpu/gemm_run.hpp"

namespace gpuvet::gemm {

// One precision on one GPU: its sweep, or none when the GPU's compute capability is too low (or,
// on AMD, why the precision is not measured: `absent_reason`).
struct PrecisionOutcome {
    const PrecisionInfo* info = nullptr;  // an entry of precisions()
    std::optional<PrecisionRun> run;
    std::string absent_reason{};  // set: the reason shown instead of the compute capability one
};

struct GpuGemmRun {
    int gpu = 0;
    int cc_x10 = 0;                            // 90 for compute capability 9.0
    std::string lib_text;                      // "<path>, cuBLASLt <version>"
    std::vector<PrecisionOutcome> precisions;  // in precisions() order
    std::string library = "cuBLASLt";          // or "hipBLASLt" on AMD GPUs
};

// The stable measurement key of a precision's best rate: "bf16_tflops", "int8_tops".
std::string rate_key(const PrecisionInfo& p);

// The GPU's result. `spec` null: rates without a verdict on speed.
CheckResult judge_gemm(const GpuGemmRun& run, const GpuSpec* spec);

}  // namespace gpuvet::gemm
