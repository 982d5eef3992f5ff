// A model's architecture as far as memory and speed depend on it, and the counts derived from it:
// parameters (total and active per token), KV-cache bytes per token, LoRA-targetable shapes.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace gpuvet {

struct VisionArch;    // plan/vision_arch.hpp
struct Quantization;  // plan/quantization.hpp

enum class MlpKind { Gated, Plain };     // SwiGLU (gate, up, down) or GELU (fc, proj)
enum class NormKind { Rms, LayerNorm };  // RMSNorm has a weight, LayerNorm a weight and a bias

struct ModelArch {
    std::string key, name, model_type, source;
    std::vector<std::string> aliases;
    std::optional<std::int64_t> published_params;  // as the source states it

    // model_type "fixed": parameters given, structure not modelled.
    std::int64_t fixed_params = 0;

    std::int64_t hidden = 0, layers = 0, heads = 0, kv_heads = 0, head_dim = 0;
    std::int64_t intermediate = 0, vocab = 0, max_positions = 0;
    bool tied_embeddings = false;
    MlpKind mlp = MlpKind::Gated;
    NormKind norm = NormKind::Rms;
    bool qkv_bias = false, o_bias = false, mlp_bias = false;
    bool qk_norm = false;            // Qwen3: an RMSNorm weight of head_dim on q and on k per layer
    bool learned_positions = false;  // GPT-2, BERT
    std::int64_t type_vocab = 0;     // BERT token types
    bool pooler = false, embedding_norm = false;
    bool encoder = false;  // bidirectional (BERT): no KV cache
    double dropout = 0;    // >0: dropout masks are kept for backward

    // Mixture of experts.
    std::int64_t experts = 0, experts_per_token = 0, shared_experts = 0;
    std::int64_t moe_intermediate = 0, shared_intermediate = 0, first_dense_layers = 0;
    bool router_bias = false;  // DeepSeek-V3 e_score_correction_bias

    // Multi-head latent attention (DeepSeek-V2/V3).
    std::int64_t q_lora_rank = 0, kv_lora_rank = 0, qk_nope_head_dim = 0, qk_rope_head_dim = 0, v_head_dim = 0;

    // Sliding-window attention: the KV cache of those layers holds at most `sliding_window` tokens.
    std::int64_t sliding_window = 0;
    std::int64_t sliding_layers = 0;  // how many layers use it (all when the config says so)

    // Weights as stored when a quantization_config is present: the method, its formats and which
    // modules it leaves unconverted, laid out module by module.
    std::shared_ptr<const Quantization> quant;

    // What reading the config assumed (a family read as a llama-style decoder, a tower not counted).
    std::vector<std::string> notes;

    // Image and vision models (diffusion pipelines, CNNs, ViTs): fixed_params is the trained
    // network's count, and the shapes the planner uses are here, not in the transformer fields.
    std::shared_ptr<const VisionArch> vision;

    bool is_fixed() const { return model_type == "fixed" || vision != nullptr; }
    bool is_moe() const { return experts > 0; }
    bool is_mla() const { return kv_lora_rank > 0; }
};

// One linear layer kind inside a block, for LoRA and for quantization.
struct LinearShape {
    std::string name;  // "q_proj", "gate_proj", "experts.gate_proj"...
    std::int64_t in = 0, out = 0;
    std::int64_t count_per_layer = 1;  // experts: one per expert
    std::int64_t layers = 0;           // blocks that have it
};

std::int64_t parameter_count(const ModelArch& m);
// Parameters one token passes through (MoE: routed experts per token + shared), for FLOPs and decode.
std::int64_t active_parameter_count(const ModelArch& m);
// Parameters of the embedding and output matrices (not quantized, not LoRA targets).
std::int64_t embedding_parameter_count(const ModelArch& m);
// The largest single module's parameters (DeepSpeed's "largest layer"), e.g. the embedding.
std::int64_t largest_layer_params(const ModelArch& m);
// Every linear layer inside the blocks.
std::vector<LinearShape> block_linears(const ModelArch& m);
// Bytes of KV cache for one token of one sequence at `bytes_per_value`, for a context of
// `context_tokens` (sliding-window layers hold at most their window). MLA caches the latent.
double kv_cache_bytes(const ModelArch& m, std::int64_t context_tokens, double bytes_per_value);
// Bytes per token across all layers for a full context (no window), for display.
double kv_bytes_per_token(const ModelArch& m, double bytes_per_value);

}  // namespace gpuvet
