#include "plan/activations.hpp"

#include <algorithm>

namespace gpuvet {

namespace {

// MLP width one token passes through: the dense MLP, or its routed + shared experts.
double active_mlp_width(const ModelArch& m) {
    if (!m.is_moe()) return double(m.intermediate);
    double shared =
        double(m.shared_experts) * double(m.shared_intermediate > 0 ? m.shared_intermediate : m.moe_intermediate);
    return double(m.experts_per_token) * double(m.moe_intermediate) + shared;
}

// Bytes saved per token per block.
double per_token_block_bytes(const ModelArch& m, const Workload& w, double e) {
    const double h = double(m.hidden);
    double q = m.is_mla() ? double(m.heads * (m.qk_nope_head_dim + m.qk_rope_head_dim)) : double(m.heads * m.head_dim);
    double kv = m.is_mla() ? double(m.heads * (m.qk_nope_head_dim + m.qk_rope_head_dim + m.v_head_dim))
                           : 2.0 * double(m.kv_heads * m.head_dim);
    double attn_out = m.is_mla() ? double(m.heads * m.v_head_dim) : q;
    bool dropout = m.dropout > 0;
    double b = 2 * e * h;                      // two norm inputs
    b += e * h + e * (q + kv) + e * attn_out;  // qkv input; q, k, v; o_proj input
    if (dropout) b += h;                       // residual dropout mask (1 byte)
    if (!w.flash_attention) {
        double s = double(w.seq), a = double(m.heads);
        b += e * a * s;                       // softmax output
        if (dropout) b += a * s + e * a * s;  // its dropout mask and output
    }
    double inter = active_mlp_width(m);
    b += e * h;                                              // MLP input
    b += (m.mlp == MlpKind::Gated ? 4.0 : 2.0) * e * inter;  // gate, up, act, product / fc, act
    if (dropout) b += h;
    return b;
}

}  // namespace

ActivationEstimate training_activations(const ModelArch& m, const Workload& w, double e) {
    ActivationEstimate a;
    if (m.is_fixed()) return a;
    const double tokens = double(w.batch) * double(w.seq);
    const double block = per_token_block_bytes(m, w, e) * tokens;
    if (w.checkpointing)
        // Each block's input is kept; one block is recomputed at a time during backward.
        a.layers_bytes = double(m.layers) * e * double(m.hidden) * tokens + block;
    else a.layers_bytes = double(m.layers) * block;
    if (!m.encoder)
        // Logits in the activation dtype and the fp32 copy the cross-entropy works on.
        a.logits_bytes = tokens * double(m.vocab) * (e + 4.0);
    double tp = std::max(1, w.tp);
    a.layers_bytes /= tp;
    a.logits_bytes /= tp;
    return a;
}

double inference_activation_bytes(const ModelArch& m, const Workload& w) {
    if (m.is_fixed()) return 0;
    const double e = 2;
    double chunk = double(std::min<std::int64_t>(w.batch * w.seq, std::max<std::int64_t>(1, w.prefill_chunk)));
    // Live during one block of the prefill: residual, normed input, q/k/v, MLP intermediates.
    double live = chunk * e * (3.0 * double(m.hidden) + 2.0 * active_mlp_width(m));
    double logits = double(w.batch) * double(m.vocab) * 4.0;  // last-token logits, fp32
    return live + logits;
}

}  // namespace gpuvet
