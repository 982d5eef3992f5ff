// The itemized memory a workload needs on each of N GPUs: weights, gradients, optimizer,
// activations, KV cache, overheads and the safety margin.
#pragma once
#include <string>
#include <vector>

#include "plan/model_arch.hpp"
#include "plan/workload.hpp"

namespace gpuvet {

// When an item is alive during a training step. The peak is the larger of two moments, not the
// sum of every item: the loss (end of forward: activations and logits saved, gradients set to
// None by zero_grad) and the end of backward (every gradient made, activations freed but one
// block's). Paged optimizer states live outside PyTorch's allocator and are in neither.
enum class Phase { Always, Forward, Backward, Pageable };

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
    std::vector<MemoryItem> items;  // per GPU, before the margin
    double subtotal_per_gpu = 0;  // the peak: the larger of the two phase totals
    double forward_peak = 0;      // Always + Forward items (training)
    double backward_peak = 0;     // Always + Backward items (training)
    double pageable_bytes = 0;    // paged optimizer states: on the GPU while it has room
    double margin_bytes = 0;  // subtotal × margin
    double need_per_gpu = 0;  // subtotal + margin
    double cpu_bytes = 0;     // offloaded states (host RAM)
    std::vector<std::string> notes;

    double total() const { return need_per_gpu * gpus; }
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
