#include "plan/recipes.hpp"

#include "core/error.hpp"

namespace gpuvet {

const std::vector<Recipe>& training_recipes() {
    static const std::vector<Recipe> r = {
        {"mixed-adamw", "bf16 weights and gradients, fp32 master weights + Adam m, v (ZeRO/Megatron layout)", 2, 2, 12,
         2, "ZeRO paper arXiv:1910.02054 §3.1: 2+2+K(12) bytes per parameter"},
        {"amp-adamw", "fp32 weights + autocast half copies, fp32 gradients, AdamW (HF Trainer --bf16/--fp16)", 6, 4, 8,
         2, "HF transformers docs, model_memory_anatomy: 6 + 4 + 8 bytes per parameter"},
        {"fp32-adamw", "everything fp32, AdamW", 4, 4, 8, 4, "HF model_memory_anatomy: 4 + 4 + 8 bytes"},
        {"bf16-adamw", "pure bf16: weights, gradients and Adam m, v in bf16 (torchtune default)", 2, 2, 4, 2,
         "torchtune full_finetune recipes, dtype=bf16"},
        {"adamw-8bit", "pure bf16 weights and gradients, 8-bit Adam states (bitsandbytes)", 2, 2, 2, 2,
         "bitsandbytes 8-bit optimizers, arXiv:2110.02861: 2 bytes of state per parameter"},
        {"sgd", "fp32 SGD with momentum", 4, 4, 4, 4, "HF model_memory_anatomy: SGD momentum 4 bytes"},
        {"fsdp-mixed-adamw", "fp32 sharded weights, gradients and Adam m, v; bf16 gathered layers compute (FSDP2)", 4,
         4, 8, 2, "torchtitan: FSDP2 MixedPrecisionPolicy(param_dtype=bf16, reduce_dtype=fp32), fp32 AdamW"},
        {"paged-adamw", "pure bf16 weights and gradients, fp32 Adam m, v paged to host under pressure", 2, 2, 8, 2,
         "bitsandbytes PagedAdamW (optim_bits=32): cudaMallocManaged states", true},
        {"paged-adamw-8bit", "pure bf16 weights and gradients, 8-bit Adam m, v paged to host under pressure", 2, 2, 2,
         2, "bitsandbytes PagedAdamW8bit: 8-bit states in cudaMallocManaged memory", true},
    };
    return r;
}

const Recipe& find_recipe(std::string_view key) {
    std::string list;
    for (auto& r : training_recipes()) {
        if (r.key == key) return r;
        list += (list.empty() ? "" : ", ") + r.key;
    }
    throw usage_error("unknown recipe '" + std::string(key) + "'", "choose one of: " + list);
}

}  // namespace gpuvet
