// host.balance: is the host big enough for its GPUs? CPU cores, RAM, disk and network per GPU,
// held against rules of thumb with their reasoning, and advice in plain words.
#pragma once
#include <optional>

#include "core/check.hpp"

namespace gpuvet {

struct BalanceInputs {
    int gpus = 0;
    std::optional<double> usable_cpus;
    std::optional<double> ram_bytes;           // host RAM (the cgroup limit when lower)
    std::optional<double> gpu_memory_bytes;    // all GPUs together
    std::optional<double> storage_read_gbps;   // host.storage seq_read_gbps
    std::optional<double> network_gbitps;      // host.network, the lower direction
};

// Rules (per GPU): CPUs WARN < 4, FAIL < 2; RAM WARN < 1x total GPU memory (2x advised);
// storage read WARN < 1 GB/s; network advice only. Sources in the References.
CheckResult balance_result(const BalanceInputs& in);

// Reads the inputs from the report: machine facts, GPUs, and earlier host.* results.
BalanceInputs balance_inputs(const Report& r);

class HostBalanceCheck final : public Check {
public:
    std::string_view key() const override { return "host.balance"; }
    std::string_view title() const override { return "Host balance per GPU"; }
    std::optional<std::string> unmet_requirement(const CheckContext& ctx) const override;
    std::vector<CheckResult> run(CheckContext& ctx) override;
};

}  // namespace gpuvet
