// What every GPU check needs before it can run, in one place so that all of them SKIP with the
// same words: no driver, no inventory, no GPU, no usable CUDA.
#pragma once
#include <optional>
#include <string>

namespace gpuvet {

struct CheckContext;

enum class GpuNeed {
    Inventory,  // NVML facts are enough (identity, tenancy, health, links)
    Cuda,       // kernels, copies, cuBLASLt, NCCL
};

// Why GPU checks cannot run here, or nullopt. The scorecard shows gpu.driver's full reason once;
// the others say "see gpu.driver" unless `full_reason` asks for the loader's words (order.*).
std::optional<std::string> gpu_requirement(const CheckContext& ctx, GpuNeed need = GpuNeed::Inventory,
                                           bool full_reason = false);

}  // namespace gpuvet
