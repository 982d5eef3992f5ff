// Expected speed from a card's rates: decode bounded by memory bandwidth (every active weight and
// the KV cache read once per token); prefill and training by dense tensor TFLOPS × a stated
// utilization (training FLOPs 6·N·D, 8·N·D with checkpointing's recomputation; LoRA 4·N·D).
#pragma once
#include <optional>
#include <string>

#include "plan/memory_model.hpp"

namespace gpuvet {

struct CardRates {
    std::optional<double> bandwidth_gbps;  // decimal GB/s
    std::optional<double> tflops;          // dense, the dtype the workload computes in
    std::string source;                    // "datasheet" or "measured (REPORT)"
};

struct SpeedAssumptions {
    double mfu = 0.40;        // training/prefill utilization: Llama 3 paper reports 38-43% BF16 MFU
    double bandwidth_eff = 0.80;  // fraction of datasheet bandwidth decode reaches
};

struct SpeedEstimate {
    std::optional<double> decode_tokens_per_s;   // all sequences of the batch together
    std::optional<double> prefill_tokens_per_s;
    std::optional<double> train_tokens_per_s;
    std::optional<double> hours_for_budget;
    std::string absent_reason;
};

SpeedEstimate estimate_speed(const ModelArch& m, const Workload& w, const MemoryPlan& p, const CardRates& r,
                             const SpeedAssumptions& a);

}  // namespace gpuvet
