// The itemized memory a workload needs on each of N GPUs: weights, gradients, optimizer,
// activations, KV cache, overheads and the safety margin.
#pragma once
#include <string>
#include <vector>

#include "plan/model_arch.hpp"
#include "plan/workload.hpp"

namespace gpuvet {

// When an item is alive during a training step. The peak is the largest of three moments, not the
// sum of every item: at the loss (end of forward: activations and logits saved, gradients set to
// None by zero_grad), at the start of backward (the saved activations, the first recomputed
// block) and at its end (every gradient made, one block's tensors). Memory in between is linear
// in the layer reached, so these end points bound it. Paged optimizer states live outside
// PyTorch's allocator and are in none.
enum class Phase {
    Always,
    Loss,       // the loss's logits: at the loss only
    Saved,      // activations saved in forward: at the loss and the start of backward
    Backward,   // one block's working set, one layer's gradient: all through backward
    Gradients,  // the full gradient set: at the end of backward
    Pageable,
};
enum class Moment { Loss, BackwardStart, BackwardEnd };
bool alive_at(Phase phase, Moment moment);

struct MemoryItem {
    std::string key;  // "weights", "gradients", "optimizer", "activations", "logits", "kv_cache", ...
    std::string label;
    double bytes_per_gpu = 0;
    std::string how;  // the formula, in words and numbers
    Phase phase = Phase::Always;
};

struct MemoryPlan {
    int gpus = 1;
    int zero_stage = 0;  // training only
    std::int64_t params = 0, trainable_params = 0, active_params = 0;
    double bytes_per_param = 0;  // weights + gradients + optimizer, before sharding
    std::string bytes_per_param_how;
    std::vector<MemoryItem> items;   // per GPU, before the margin
    double subtotal_per_gpu = 0;     // the peak: the largest of the three moments
    double forward_peak = 0;         // at the loss (training)
    double backward_start_peak = 0;  // at the start of backward (training)
    double backward_peak = 0;        // at the end of backward (training)
    double pageable_bytes = 0;       // paged optimizer states: on the GPU while it has room
    double margin_bytes = 0;         // subtotal × margin
    double need_per_gpu = 0;         // subtotal + margin
    double cpu_bytes = 0;            // offloaded states (host RAM)
    std::string cpu_how;             // how cpu_bytes is counted, when not DeepSpeed's estimate
    // Per-GPU shards the collectives move, where the items do not show them (FSDP CPU offload,
    // optimizer in backward: every gradient is still reduced, one layer at a time). 0: the items.
    double exchanged_weight_bytes = 0, exchanged_gradient_bytes = 0;
    std::vector<std::string> notes;

    double total() const { return need_per_gpu * gpus; }
    Moment peak_moment() const;
    double item(const std::string& key) const;
};

// Throws Input for settings that cannot apply (ZeRO on inference, QLoRA on a fixed model...).
MemoryPlan plan_memory(const ModelArch& m, const Workload& w, int gpus);

// Bytes per stored weight for an inference dtype name.
double dtype_bytes(const std::string& dtype);
// Whether a --lora-targets name selects the linear layer `linear` ("gate_proj" also selects
// "experts.gate_proj").
bool lora_target_matches(const std::string& target, const std::string& linear);

}  // namespace gpuvet
