// gpu.allreduce: NCCL all-reduce across all selected GPUs from one process (ncclCommInitAll),
// bus bandwidth per message size as nccl-tests reports it, with every result verified. On an AMD-only
// box the same through RCCL (amd_allreduce.cpp).
#pragma once
#include "core/check.hpp"

namespace gpuvet {

class GpuAllReduceCheck final : public Check {
public:
    std::string_view key() const override { return "gpu.allreduce"; }
    std::string_view title() const override { return "All-reduce bandwidth (NCCL, RCCL)"; }
    std::optional<std::string> unmet_requirement(const CheckContext& ctx) const override;
    std::vector<CheckResult> run(CheckContext& ctx) override;
};

}  // namespace gpuvet
