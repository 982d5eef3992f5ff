// host.balance: is the host big enough for its GPUs? CPU cores, RAM, disk and network per GPU,
// held against rules of thumb with their reasoning, and advice in plain words.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "core/check.hpp"
#include "core/fact.hpp"

namespace gpuvet {

class RunFacts;
class PriorResults;

struct GpuSpec;

// Dense BF16 tensor TFLOPS of an A100 SXM (NVIDIA A100 datasheet): the GPU the data-loading
// rules of thumb were measured on. A faster GPU consumes data proportionally faster.
inline constexpr double kA100DenseBf16Tflops = 312;

// The GPUs' tensor throughput in A100s (dense BF16, FP16 where a SKU has no BF16 tensor path),
// or absent with the reason when a GPU is unidentified or its spec lacks the figure.
Fact<double> a100_equivalents(const std::vector<const GpuSpec*>& specs);

struct BalanceInputs {
    int gpus = 0;
    std::optional<double> usable_cpus;
    std::optional<double> ram_bytes;          // host RAM (the cgroup limit when lower)
    std::optional<double> gpu_memory_bytes;   // all GPUs together
    std::optional<double> storage_read_gbps;  // host.storage seq_read_gbps
    std::optional<double> network_gbitps;     // host.network, the lower direction
    Fact<double> a100_equivalents = Fact<double>::absent("GPUs not identified");
};

// Rules (per GPU): CPUs WARN < 4, FAIL < 2; RAM WARN < 1x total GPU memory (2x advised);
// storage read WARN below 0.3 GB/s per A100 of tensor throughput (1 GB/s per GPU when the GPUs'
// throughput is unknown); network advice only. Sources in the References.
CheckResult balance_result(const BalanceInputs& in);

// Reads the inputs from the report: machine facts, GPUs, and earlier host.* results.
BalanceInputs balance_inputs(const RunFacts& facts, const PriorResults& prior);

class HostBalanceCheck final : public Check {
public:
    std::string_view key() const override { return "host.balance"; }
    std::string_view title() const override { return "Host balance per GPU"; }
    std::optional<std::string> unmet_requirement(const CheckContext& ctx) const override;
    std::vector<std::string> reads() const override { return {"host.cpu", "host.storage", "host.network"}; }
    std::vector<CheckResult> run(CheckContext& ctx) override;
};

}  // namespace gpuvet
