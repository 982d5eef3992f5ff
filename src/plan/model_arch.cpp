#include "plan/model_arch.hpp"

#include <algorithm>

namespace gpuvet {

namespace {

std::int64_t norm_params(const ModelArch& m, std::int64_t width) {
    return m.norm == NormKind::LayerNorm ? 2 * width : width;
}

std::int64_t q_width(const ModelArch& m) { return m.heads * m.head_dim; }
std::int64_t kv_width(const ModelArch& m) { return m.kv_heads * m.head_dim; }

std::int64_t attention_params(const ModelArch& m) {
    const std::int64_t h = m.hidden;
    if (m.is_mla()) {
        // DeepSeek-V3 modeling: q_a_proj, q_a_layernorm, q_b_proj, kv_a_proj_with_mqa,
        // kv_a_layernorm, kv_b_proj, o_proj (no biases).
        std::int64_t qk = m.qk_nope_head_dim + m.qk_rope_head_dim;
        std::int64_t q =
            m.q_lora_rank > 0 ? h * m.q_lora_rank + m.q_lora_rank + m.q_lora_rank * m.heads * qk : h * m.heads * qk;
        std::int64_t kv = h * (m.kv_lora_rank + m.qk_rope_head_dim) + m.kv_lora_rank +
                          m.kv_lora_rank * m.heads * (m.qk_nope_head_dim + m.v_head_dim);
        return q + kv + m.heads * m.v_head_dim * h;
    }
    std::int64_t p = h * q_width(m) + 2 * h * kv_width(m) + q_width(m) * h;
    if (m.qkv_bias) p += q_width(m) + 2 * kv_width(m);
    if (m.o_bias) p += h;
    if (m.qk_norm) p += 2 * m.head_dim;
    return p;
}

std::int64_t mlp_params(const ModelArch& m, std::int64_t inter) {
    const std::int64_t h = m.hidden;
    if (m.mlp == MlpKind::Gated) return 3 * h * inter + (m.mlp_bias ? 2 * inter + h : 0);
    return 2 * h * inter + (m.mlp_bias ? inter + h : 0);
}

// Routed experts of one MoE block; `active` counts only those one token uses.
std::int64_t moe_params(const ModelArch& m, bool active) {
    std::int64_t per_expert = mlp_params(m, m.moe_intermediate);
    std::int64_t routed = (active ? m.experts_per_token : m.experts) * per_expert;
    std::int64_t shared =
        m.shared_experts * mlp_params(m, m.shared_intermediate > 0 ? m.shared_intermediate : m.moe_intermediate);
    std::int64_t router = m.hidden * m.experts + (m.router_bias ? m.experts : 0);
    return routed + shared + router;
}

std::int64_t moe_layers(const ModelArch& m) { return m.is_moe() ? m.layers - m.first_dense_layers : 0; }

std::int64_t block_params(const ModelArch& m, bool active) {
    std::int64_t dense = m.layers - moe_layers(m);
    std::int64_t per_norms = 2 * norm_params(m, m.hidden);
    std::int64_t attn = attention_params(m);
    return dense * (attn + mlp_params(m, m.intermediate) + per_norms) +
           moe_layers(m) * (attn + moe_params(m, active) + per_norms);
}

}  // namespace

std::int64_t embedding_parameter_count(const ModelArch& m) {
    if (m.is_fixed()) return 0;
    std::int64_t e = m.vocab * m.hidden;
    if (!m.tied_embeddings && !m.encoder) e *= 2;
    if (m.learned_positions) e += m.max_positions * m.hidden;
    e += m.type_vocab * m.hidden;
    return e;
}

std::int64_t parameter_count(const ModelArch& m) {
    if (m.is_fixed()) return m.fixed_params;
    std::int64_t p = embedding_parameter_count(m) + block_params(m, false);
    if (m.embedding_norm) p += norm_params(m, m.hidden);
    if (!m.encoder) p += norm_params(m, m.hidden);  // final norm (BERT has none)
    if (m.pooler) p += m.hidden * m.hidden + m.hidden;
    return p;
}

std::int64_t active_parameter_count(const ModelArch& m) {
    if (!m.is_moe()) return parameter_count(m);
    return parameter_count(m) - block_params(m, false) + block_params(m, true);
}

std::int64_t largest_layer_params(const ModelArch& m) {
    if (m.is_fixed()) return m.fixed_params;  // unknown structure: the conservative bound
    std::int64_t largest = m.vocab * m.hidden;
    for (auto& l : block_linears(m)) largest = std::max(largest, l.in * l.out);
    return largest;
}

std::vector<LinearShape> block_linears(const ModelArch& m) {
    std::vector<LinearShape> v;
    if (m.is_fixed()) return v;
    const std::int64_t h = m.hidden, L = m.layers;
    if (m.is_mla()) {
        std::int64_t qk = m.qk_nope_head_dim + m.qk_rope_head_dim;
        if (m.q_lora_rank > 0) {
            v.push_back({"q_a_proj", h, m.q_lora_rank, 1, L});
            v.push_back({"q_b_proj", m.q_lora_rank, m.heads * qk, 1, L});
        } else {
            v.push_back({"q_proj", h, m.heads * qk, 1, L});
        }
        v.push_back({"kv_a_proj_with_mqa", h, m.kv_lora_rank + m.qk_rope_head_dim, 1, L});
        v.push_back({"kv_b_proj", m.kv_lora_rank, m.heads * (m.qk_nope_head_dim + m.v_head_dim), 1, L});
        v.push_back({"o_proj", m.heads * m.v_head_dim, h, 1, L});
    } else {
        v.push_back({"q_proj", h, q_width(m), 1, L});
        v.push_back({"k_proj", h, kv_width(m), 1, L});
        v.push_back({"v_proj", h, kv_width(m), 1, L});
        v.push_back({"o_proj", q_width(m), h, 1, L});
    }
    auto add_mlp = [&](const std::string& prefix, std::int64_t inter, std::int64_t count, std::int64_t layers) {
        if (layers <= 0 || inter <= 0 || count <= 0) return;
        if (m.mlp == MlpKind::Gated) {
            v.push_back({prefix + "gate_proj", h, inter, count, layers});
            v.push_back({prefix + "up_proj", h, inter, count, layers});
            v.push_back({prefix + "down_proj", inter, h, count, layers});
        } else {
            v.push_back({prefix + "up_proj", h, inter, count, layers});
            v.push_back({prefix + "down_proj", inter, h, count, layers});
        }
    };
    std::int64_t moe = moe_layers(m);
    add_mlp("", m.intermediate, 1, L - moe);
    if (moe > 0) {
        add_mlp("experts.", m.moe_intermediate, m.experts, moe);
        add_mlp("shared_experts.", m.shared_intermediate > 0 ? m.shared_intermediate : m.moe_intermediate,
                m.shared_experts, moe);
    }
    return v;
}

double kv_cache_bytes(const ModelArch& m, std::int64_t context_tokens, double bytes_per_value) {
    if (m.is_fixed() || m.encoder) return 0;
    // Values cached per token per layer: K and V for every KV head, or MLA's compressed latent
    // plus the shared rotary key (what vLLM and SGLang cache for DeepSeek-V3).
    double per_layer = m.is_mla() ? double(m.kv_lora_rank + m.qk_rope_head_dim) : 2.0 * double(m.kv_heads * m.head_dim);
    std::int64_t windowed = (m.sliding_window > 0) ? std::min(m.sliding_layers, m.layers) : 0;
    std::int64_t full = m.layers - windowed;
    double tokens_windowed = double(std::min(context_tokens, m.sliding_window > 0 ? m.sliding_window : context_tokens));
    return per_layer * bytes_per_value * (double(full) * double(context_tokens) + double(windowed) * tokens_windowed);
}

double kv_bytes_per_token(const ModelArch& m, double bytes_per_value) {
    if (m.is_fixed() || m.encoder) return 0;
    double per_layer = m.is_mla() ? double(m.kv_lora_rank + m.qk_rope_head_dim) : 2.0 * double(m.kv_heads * m.head_dim);
    return per_layer * bytes_per_value * double(m.layers);
}

}  // namespace gpuvet
