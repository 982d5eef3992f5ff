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
    // Card-to-card link, one direction, decimal GB/s: NVLink when the card has it, else PCIe
    // generation × lanes. Absent: the spec lacks both.
    std::optional<double> link_gbps;
    std::string link;  // "NVLink 4" / "PCIe 4.0 x16"
};

// The link a card uses for collectives (see CardRates::link_gbps).
void set_link(CardRates& r, std::optional<int> nvlink_gen, std::optional<double> nvlink_bidir_gbps,
              std::optional<int> pcie_gen, std::optional<int> pcie_lanes);

struct SpeedAssumptions {
    double mfu = 0.40;            // training/prefill utilization: Llama 3 paper reports 38-43% BF16 MFU
    double bandwidth_eff = 0.80;  // fraction of datasheet bandwidth decode reaches
    // Beyond one box the ring crosses the network: one 400 Gb/s NIC per card (the DGX H100 / HGX
    // reference design's compute fabric), 50 GB/s one way, caps the link of every card.
    int cards_per_box = 8;
    double inter_box_gbps = 50;
};

struct SpeedEstimate {
    std::optional<double> decode_tokens_per_s;  // all sequences of the batch together
    std::optional<double> prefill_tokens_per_s;
    std::optional<double> train_tokens_per_s;
    std::optional<double> hours_for_budget;  // the token budget at the training (or decode) rate
    // Training across data-parallel cards: seconds per step computing and exchanging
    // (all-gather / reduce-scatter / all-reduce volume ÷ link bandwidth), for the whole box.
    std::optional<double> compute_s_per_step, comm_s_per_step;
    std::string absent_reason;
};

// Bytes each card sends per training step across `dp` data-parallel ranks (0 for one rank).
double comm_bytes_per_step(const MemoryPlan& p, double dp);

SpeedEstimate estimate_speed(const ModelArch& m, const Workload& w, const MemoryPlan& p, const CardRates& r,
                             const SpeedAssumptions& a);

}  // namespace gpuvet
