// Activation memory of a transformer, generalised from Korthikanti et al. 2022 ("Reducing
// Activation Recomputation in Large Transformer Models", arXiv:2205.05198, eq. 1: 34·sbh + 5·as²b
// bytes per layer for GPT with dropout) to grouped-query attention, gated MLPs, MoE, flash
// attention (no s² term) and no dropout.
#pragma once
#include <string>

#include "plan/model_arch.hpp"
#include "plan/workload.hpp"

namespace gpuvet {

struct ActivationEstimate {
    double layers_bytes = 0;  // saved for backward across all blocks (or checkpoints + one block)
    double logits_bytes = 0;  // the loss's logits path: 16-bit logits, fp32 copy, fp32 gradient
    double block_bytes = 0;   // one block's saved tensors: the backward transient of each block
};

// Logits bytes per (token × vocabulary entry) of a loss mode at `e` bytes per value: full
// (three fp32 tensors of the loss's backward), chunked (the 16-bit chunks kept, one chunk's fp32
// gradient at a time: torchtune compiles the per-chunk loss, so no fp32 copy is stored); fused keeps no logits (see
// training_activations). Throws Usage when unknown.
double logits_bytes_per_value(const std::string& loss, double e);
constexpr int kLossChunks = 8;  // torchtune CEWithChunkedOutputLoss num_output_chunks

// Training: per GPU, for `w.batch` sequences of `w.seq` tokens at `bytes_per_value`.
ActivationEstimate training_activations(const ModelArch& m, const Workload& w, double bytes_per_value);
// Inference: the transient peak of one prefill chunk plus last-token logits.
double inference_activation_bytes(const ModelArch& m, const Workload& w);

}  // namespace gpuvet
