// gpu.memory_bandwidth, gpu.fp_peak, gpu.memtest, gpu.h2d_d2h, gpu.allreduce and gpu.gemm on AMD GPUs: gpuvet's kernels
// from the embedded code objects through HIP (amd_session.hpp), copies through hipMemcpyAsync,
// judged by the same pure verdicts as on NVIDIA (the *_judge files), each GPU held
// against its own datasheet. Each check's run() takes these when amd_measure::run_is_amd(ctx).
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/check.hpp"

namespace gpuvet::amd_measure {

std::vector<CheckResult> memory_bandwidth(CheckContext& ctx, std::string_view key, std::string_view title);
std::vector<CheckResult> fp_peak(CheckContext& ctx, std::string_view key, std::string_view title);
std::vector<CheckResult> memtest(CheckContext& ctx, std::string_view key, std::string_view title);
std::vector<CheckResult> host_copies(CheckContext& ctx, std::string_view key, std::string_view title);
// gpu.allreduce through RCCL (amd_allreduce.cpp): HIP and at least 2 GPUs, else why not.
std::optional<std::string> allreduce_requirement(const CheckContext& ctx);
std::vector<CheckResult> allreduce(CheckContext& ctx);
// gpu.gemm through hipBLASLt (amd_gemm.cpp): FP16 and BF16 GEMM rates and sampled outputs per GPU.
std::vector<CheckResult> gemm(CheckContext& ctx, std::string_view key, std::string_view title);

}  // namespace gpuvet::amd_measure
