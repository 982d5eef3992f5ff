// What the user wants to run: the task and its knobs. Defaults are the common practice of each task.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gpuvet {

enum class Task { Inference, FullFinetune, Lora, Qlora, Pretrain };

struct Workload {
    Task task = Task::Inference;
    std::string recipe = "mixed-adamw";  // full fine-tuning and pre-training
    std::int64_t batch = 1;              // sequences per GPU (micro batch)
    std::int64_t seq = 2048;             // tokens per sequence (inference: prompt + output)
    std::string weight_dtype = "bf16";   // inference: bf16, fp16, fp32, fp8, int8, int4
    std::string kv_dtype = "bf16";       // bf16, fp16, fp8
    int lora_rank = 16;
    std::vector<std::string> lora_targets = {"all"};  // "all", or q_proj, v_proj, ...
    bool checkpointing = false;                       // activation (gradient) checkpointing
    bool flash_attention = true;                      // false: eager attention keeps b*a*s^2 scores
    std::optional<int> zero_stage;                    // 0..3; unset: 0 on one GPU, 3 on several
    bool offload_optimizer = false, offload_params = false;
    int tp = 1;                             // tensor-parallel degree for training
    std::optional<int> gpus;                // fixed card count; unset: the fewest that fit
    double margin = 0.20;                   // the seed articles' ×1.2
    double cuda_context_gib = 0.5;          // CUDA context + kernels per GPU
    double engine_memory_fraction = 1.0;    // vLLM gpu_memory_utilization (0.9 default there)
    std::optional<double> activations_gib;  // user figure for fixed (CNN/UNet) models
    std::int64_t prefill_chunk = 8192;      // tokens prefilled at once (vLLM max_num_batched_tokens)
    double token_budget = 0;                // training tokens (D) for the time estimate
    // Serving: the engine's max_num_batched_tokens (--max-batched-tokens); unset: vLLM's default
    // for each card (plan/serving.hpp). When set, prefill_chunk follows it.
    std::optional<std::int64_t> max_batched_tokens;

    // Training recipes beyond the optimizer (docs/plan.md, "Training recipes").
    int grad_accum = 1;                    // micro-steps per optimizer step: gradients persist across them
    bool optimizer_in_backward = false;    // step each parameter as its gradient is ready (torchtune)
    std::optional<std::string> loss;       // full (default), chunked (8 chunks), fused (no logits kept)
    bool selective_checkpointing = false;  // torchtitan op-level policy: every other matmul output kept
    bool offload_activations = false;      // saved activations to host, a block's worth stays
    bool compiled = false;                 // torch.compile: fused norms keep no fp32 copy
    // Image models (plan/vision_memory): pixels per side, 0 = the model's own resolution; --batch
    // is images per GPU.
    std::int64_t image_width = 0, image_height = 0;
    bool vae_slicing = false;          // decode one image at a time (diffusers enable_vae_slicing)
    std::optional<bool> guidance_cfg;  // classifier-free guidance (denoiser batch × 2); unset: the model's
};

const char* to_string(Task t);
bool is_training(Task t);

}  // namespace gpuvet
