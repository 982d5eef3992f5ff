// Activation memory of a transformer, generalised from Korthikanti et al. 2022 ("Reducing
// Activation Recomputation in Large Transformer Models", arXiv:2205.05198, eq. 1: 34·sbh + 5·as²b
// bytes per layer for GPT with dropout) to grouped-query attention, gated MLPs, MoE, flash
// attention (no s² term) and no dropout.
#pragma once
#include "plan/model_arch.hpp"
#include "plan/workload.hpp"

namespace gpuvet {

struct ActivationEstimate {
    double layers_bytes = 0;  // saved for backward across all blocks (or checkpoints + one block)
    double logits_bytes = 0;  // output logits and their fp32 copy for the loss
};

// Training: per GPU, for `w.batch` sequences of `w.seq` tokens at `bytes_per_value`.
ActivationEstimate training_activations(const ModelArch& m, const Workload& w, double bytes_per_value);
// Inference: the transient peak of one prefill chunk plus last-token logits.
double inference_activation_bytes(const ModelArch& m, const Workload& w);

}  // namespace gpuvet
