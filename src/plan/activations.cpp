#include "plan/activations.hpp"

#include <algorithm>
#include <vector>

#include "core/error.hpp"

namespace gpuvet {

namespace {

// MLP width one token passes through: the dense MLP, or its routed + shared experts.
double active_mlp_width(const ModelArch& m) {
    if (!m.is_moe()) return double(m.intermediate);
    double shared =
        double(m.shared_experts) * double(m.shared_intermediate > 0 ? m.shared_intermediate : m.moe_intermediate);
    return double(m.experts_per_token) * double(m.moe_intermediate) + shared;
}

// Width of the query projection, and of K and V as attention saves them: PyTorch SDPA and eager
// implementations (torchtune, torchtitan, HF "sdpa"/"eager") repeat the K/V heads of grouped-query
// attention to every query head before the kernel, so the saved K and V have the queries' width.
double q_width(const ModelArch& m) {
    return m.is_mla() ? double(m.heads * (m.qk_nope_head_dim + m.qk_rope_head_dim)) : double(m.heads * m.head_dim);
}
double saved_kv_width(const ModelArch& m) {
    return m.is_mla() ? double(m.heads * (m.qk_nope_head_dim + m.qk_rope_head_dim + m.v_head_dim))
                      : 2.0 * double(m.heads * m.head_dim);
}

// Bytes saved per token per block.
double per_token_block_bytes(const ModelArch& m, const Workload& w, double e) {
    const double h = double(m.hidden);
    double q = q_width(m), kv = saved_kv_width(m);
    double attn_out = m.is_mla() ? double(m.heads * m.v_head_dim) : q;
    bool dropout = m.dropout > 0;
    // A norm upcasts its input to fp32 and, run eagerly, autograd keeps that copy; a compiled
    // (fused) norm keeps only its 16-bit input.
    double norm_in = (w.compiled || e >= 4) ? e : 4.0;
    double b = 2 * norm_in * h;                // two norm inputs
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

// torchtitan's selective (op) checkpointing keeps the block input, the attention output and the
// output of every other matmul in call order (1st, 3rd, ...: q, v, gate, down for a gated MLP;
// torchtitan apply_ac, _save_list with "do not save every other mm"); the rest is recomputed.
double per_token_selective_bytes(const ModelArch& m, double e) {
    const double h = double(m.hidden), inter = active_mlp_width(m);
    double kv_one = m.is_mla() ? double(m.kv_lora_rank) : double(m.kv_heads * m.head_dim);
    std::vector<double> mm = {q_width(m), kv_one, kv_one, h};  // q, k, v, o
    if (m.mlp == MlpKind::Gated) mm.insert(mm.end(), {inter, inter, h});
    else mm.insert(mm.end(), {inter, h});
    double b = e * h + e * q_width(m);  // block input, attention output
    for (std::size_t i = 0; i < mm.size(); i += 2) b += e * mm[i];
    return b;
}

}  // namespace

double logits_bytes_per_value(const std::string& loss, double e) {
    // Full: in the loss's backward the fp32 log-softmax it saved, the fp32 gradient arriving and
    // the fp32 gradient it makes (12 B); the forward's 16-bit logits + fp32 copy + log-softmax
    // (e + 8 B) are no more.
    if (loss == "full") return std::max(e + 8.0, 12.0);
    if (loss == "chunked") return e + 4.0 / kLossChunks;
    if (loss == "fused") return 0;
    throw usage_error("unknown --loss '" + loss + "'",
                      "choose full (fp32 loss over all logits), chunked (8 chunks) or fused (Liger/cut cross-entropy)");
}

ActivationEstimate training_activations(const ModelArch& m, const Workload& w, double e) {
    ActivationEstimate a;
    if (m.is_fixed()) return a;
    const double tokens = double(w.batch) * double(w.seq);
    const double block = per_token_block_bytes(m, w, e) * tokens;
    double kept_per_layer = block;  // what each block leaves saved for its backward
    if (w.selective_checkpointing) kept_per_layer = per_token_selective_bytes(m, e) * tokens;
    else if (w.checkpointing) kept_per_layer = e * double(m.hidden) * tokens;
    // At the loss, what the blocks left saved; a recomputed block exists only later, in backward
    // (block_bytes). Offloaded, the saved tensors go to host as they are made: the current block's
    // and the one in flight stay.
    a.layers_bytes = (w.offload_activations ? 2.0 : double(m.layers)) * kept_per_layer;
    a.block_bytes = block;
    if (!m.encoder) {
        const std::string loss = w.loss.value_or("full");
        // Fused linear cross-entropy (Liger, cut cross-entropy) keeps only the hidden states'
        // gradient it computes during the forward.
        a.logits_bytes = loss == "fused" ? tokens * double(m.hidden) * e
                                         : tokens * double(m.vocab) * logits_bytes_per_value(loss, e);
    }
    double tp = std::max(1, w.tp);
    a.layers_bytes /= tp;
    a.logits_bytes /= tp;
    a.block_bytes /= tp;
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
