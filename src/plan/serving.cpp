#include "plan/serving.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

#include "core/error.hpp"
#include "core/strings.hpp"
#include "plan/memory_model.hpp"
#include "specs/driver_memory.hpp"
#include "core/units.hpp"

namespace gpuvet {

namespace {

// Memory outside PyTorch that appears during the profile run on one GPU: kernel modules loaded
// lazily by the first forward (CUDA_MODULE_LOADING=LAZY) and library handles. 0.16 GiB is
// vLLM's own log on an H100 at TP 1 (PR #12126, "non_torch_memory takes 0.16GiB", research VL-5).
constexpr double kProfileKernelsGib = 0.16;
// NCCL buffers per GPU at TP > 1. With NVLink SHARP (NVSwitch, Hopper HGX) NCCL allocates NVLS
// buffers per rank of the domain (NCCL src/transport/nvls.cc: nvlsPerRankSize × nHeads), so
// they grow with TP: fitted to vLLM's logged non-torch memory at TP 2 (H100, 3.58 − 1.79 GiB
// at TP 1 of the same build, PR #10511) and TP 8 (H200, 5.68 − 0.5 GiB context, issue #10702).
constexpr double kNvlsFixedGib = 0.66, kNvlsPerRankGib = 0.565;
// Without NVLS, ring and tree buffers (two peers per channel, whatever the TP): 0.43 − 0.16 GiB
// logged on 4 × A100-40GB at TP 4 (vLLM 0.8.3, issue #16570, research VL-11).
constexpr double kRingBuffersGib = 0.27;

std::string gib(double b) { return fmt::format("{:.2f} GiB", b / kGiB); }

// MLP width one token passes through, per rank, in vLLM's kernels: the dense gate/up/down, or
// the routed experts' fused-MoE caches (top-k copies of the token) plus shared experts.
double mlp_live_values(const ModelArch& m, int tp) {
    const double h = double(m.hidden);
    if (!m.is_moe()) return 3.0 * double(m.intermediate) / tp;
    double shared =
        double(m.shared_experts) * double(m.shared_intermediate > 0 ? m.shared_intermediate : m.moe_intermediate);
    return double(m.experts_per_token) * (3.0 * double(m.moe_intermediate) / tp + h) + 3.0 * shared / tp;
}

// Bytes live per token at the forward's peak (no KV cache in the profile): the residual, the
// normed input and the MLP's output (3 × hidden) beside gate/up (2 × I) and the activation
// (I), which Python keeps bound until the MLP returns; or, if larger, the attention's q/k/v and
// output. 2 B per value (bf16/fp16 activations).
double forward_bytes_per_token(const ModelArch& m, int tp) {
    const double e = 2, h = double(m.hidden);
    double mlp = 3 * h + mlp_live_values(m, tp);
    double q = double(m.heads * (m.is_mla() ? m.qk_nope_head_dim + m.qk_rope_head_dim : m.head_dim)) / tp;
    double kv = m.is_mla() ? double(m.heads * (m.qk_nope_head_dim + m.v_head_dim)) / tp
                           : 2.0 * double(m.kv_heads * m.head_dim) / std::min<double>(tp, double(m.kv_heads));
    double attn = 3 * h + q + kv + q;
    return e * std::max(mlp, attn);
}

void add(ServingCapacity& c, std::string key, std::string label, double bytes, std::string how) {
    c.terms.push_back({std::move(key), std::move(label), bytes, std::move(how)});
}

void add_weights(ServingCapacity& c, const ModelArch& m, const Workload& w, int gpus) {
    Workload one = w;
    one.batch = 1;
    MemoryPlan p = plan_memory(m, one, gpus);
    for (auto& i : p.items)
        if (i.key == "weights") add(c, "weights", i.label, i.bytes_per_gpu, i.how);  // one per storage when quantized
}

void add_profile_peak(ServingCapacity& c, const ModelArch& m, int gpus, const ServingEngine& e) {
    c.profile_tokens = e.chunked_prefill ? e.max_batched_tokens : std::max(e.max_batched_tokens, c.seq);
    double per_token = forward_bytes_per_token(m, gpus);
    double forward = per_token * double(c.profile_tokens);
    std::int64_t rows = std::min(e.max_num_seqs, c.profile_tokens);
    double sampler = double(rows) * double(m.vocab) * e.sampler_bytes_per_logit;
    bool fwd = forward >= sampler;
    add(c, "profile_activations", "profile activation peak", std::max(forward, sampler),
        fmt::format("larger of forward {} tokens × {:.0f} B = {} and sampler {} seq × vocab {} × {} B = {}{}",
                    c.profile_tokens, per_token, gib(forward), rows, m.vocab, e.sampler_bytes_per_logit, gib(sampler),
                    fwd ? "" : " (the sampler)"));
}

void add_non_torch(ServingCapacity& c, const Workload& w, const ServingCard& card, int gpus, const ServingEngine& e) {
    if (e.counts_cuda_context)
        add(c, "cuda_context", "CUDA context + kernels", w.cuda_context_gib * kGiB,
            fmt::format("{} GiB (--cuda-context-gib): this vLLM counted all memory outside PyTorch",
                        w.cuda_context_gib));
    else
        add(c, "non_torch", "kernels loaded by the profile", kProfileKernelsGib * kGiB,
            fmt::format("{} GiB, vLLM's log at TP 1 (the context before it is outside the budget)",
                        kProfileKernelsGib));
    if (gpus <= 1) return;
    if (card.nvlink_sharp)
        add(c, "collectives", "NCCL (NVLS) + custom all-reduce", (kNvlsFixedGib + kNvlsPerRankGib * gpus) * kGiB,
            fmt::format("{} + {} GiB × {} ranks (NVLink SHARP buffers grow with TP)", kNvlsFixedGib, kNvlsPerRankGib,
                        gpus));
    else
        add(c, "collectives", "NCCL + custom all-reduce", kRingBuffersGib * kGiB,
            fmt::format("{} GiB of ring/tree buffers (no NVLink SHARP on this card)", kRingBuffersGib));
}

// Tokens at which a sliding window stops growing a sequence's cache are not counted by vLLM's
// token figure; the concurrency below uses the real per-sequence bytes.
void size_cache(ServingCapacity& c, const ModelArch& m, const Workload& w) {
    for (auto& t : c.terms) c.kv_bytes -= t.bytes_per_gpu;
    c.blocks =
        c.kv_bytes > 0 ? std::int64_t(std::floor(c.kv_bytes / (c.kv_bytes_per_token * c.engine.block_tokens))) : 0;
    c.kv_tokens = c.blocks * c.engine.block_tokens;
    if (m.sliding_window > 0 && c.kv_bytes > 0) {
        double per_seq = kv_cache_bytes(m, c.seq, dtype_bytes(w.kv_dtype)) * c.kv_bytes_per_token /
                         kv_bytes_per_token(m, dtype_bytes(w.kv_dtype));
        c.max_concurrency = c.kv_bytes / per_seq;
        c.notes.push_back(fmt::format("sliding window of {} tokens on {} layers: a request of {} tokens needs {} of KV",
                                      m.sliding_window, m.sliding_layers, c.seq, gib(per_seq)));
    } else {
        c.max_concurrency = double(c.kv_tokens) / double(c.seq);
    }
    c.fits = c.max_concurrency >= 1.0;
}

ServingCapacity capacity(const ModelArch& m, const Workload& w, const ServingCard& card, int gpus,
                         const ServingEngine& e) {
    if (m.is_fixed() || m.encoder)
        throw usage_error("serving capacity needs a decoder's shapes",
                          "use --model or --config for a decoder LLM, not --params or an encoder");
    if (gpus < 1 || card.total_bytes <= 0 || e.block_tokens < 1 || e.max_batched_tokens < 1)
        throw usage_error("serving capacity needs a card with memory and at least one GPU", "pass --gpus 1 or more");
    ServingCapacity c;
    c.card = card.name;
    c.gpus = gpus;
    c.engine = e;
    c.fraction = w.engine_memory_fraction;
    c.seq = w.seq;
    c.total_bytes = card.total_bytes;
    c.budget_bytes = c.kv_bytes = card.total_bytes * w.engine_memory_fraction;
    double kv_b = dtype_bytes(w.kv_dtype);
    c.kv_bytes_per_token = kv_bytes_per_token_per_gpu(m, kv_b, gpus);
    std::int64_t heads =
        m.is_mla() ? 1 : std::max<std::int64_t>(1, m.kv_heads / std::min<std::int64_t>(gpus, m.kv_heads));
    c.kv_how = m.is_mla() ? fmt::format("{} layers × latent {} × {} B ({}), on every rank", m.layers,
                                        m.kv_lora_rank + m.qk_rope_head_dim, kv_b, w.kv_dtype)
                          : fmt::format("{} layers × {} KV heads{} × {} dim × 2 (K, V) × {} B ({})", m.layers, heads,
                                        gpus > 1 ? " per rank" : "", m.head_dim, kv_b, w.kv_dtype);
    add_weights(c, m, w, gpus);
    add_profile_peak(c, m, gpus, e);
    add_non_torch(c, w, card, gpus, e);
    size_cache(c, m, w);
    if (m.max_positions > 0 && w.seq > m.max_positions)
        c.notes.push_back(
            fmt::format("--seq {} is beyond {}'s {} positions: vLLM refuses such a max_model_len "
                        "unless RoPE scaling extends the context",
                        w.seq, m.name, m.max_positions));
    return c;
}

// The levers that each, alone, make room for one request, with the tokens they give; the card
// count is the fewest doubling that does (up to 64 cards).
void add_ideas(ServingCapacity& c, const ModelArch& m, const Workload& w, const ServingCard& card,
               const ServingEngine& e) {
    auto idea = [&](const std::string& what, const ServingCapacity& t) {
        c.ideas.push_back(
            fmt::format("{} ({} tokens, {:.2f} requests of --seq)", what, t.kv_tokens, t.max_concurrency));
    };
    std::optional<ServingCapacity> more;
    for (int n = c.gpus * 2; n <= 64 && !more; n *= 2)
        if (ServingCapacity t = capacity(m, w, card, n, e); t.fits) more = t;
    if (more) idea(fmt::format("{} cards", more->gpus), *more);
    else c.ideas.push_back("more than 64 cards");
    auto lever = [&](const std::string& what, Workload v) {
        if (ServingCapacity t = capacity(m, v, card, c.gpus, e); t.fits) idea(what, t);
    };
    if (dtype_bytes(w.kv_dtype) > 1) {
        Workload v = w;
        v.kv_dtype = "fp8";
        lever("--kv-dtype fp8", v);
    }
    if (!m.quant && dtype_bytes(w.weight_dtype) > 0.5) {
        Workload v = w;
        v.weight_dtype = "int4";
        lever("--dtype int4", v);
    }
    if (c.kv_tokens > 0) c.ideas.push_back(fmt::format("--seq {} or shorter", c.kv_tokens));
}

}  // namespace

double ServingCapacity::term(const std::string& key) const {
    double s = 0;
    for (auto& t : terms)
        if (t.key == key) s += t.bytes_per_gpu;
    return s;
}

ServingEngine vllm_server_defaults(double card_total_bytes, const std::string& card_name) {
    ServingEngine e;
    bool large = card_total_bytes >= 70 * kGiB && to_lower(card_name).find("a100") == std::string::npos;
    e.name = "vLLM V1 server defaults";
    e.max_batched_tokens = large ? 8192 : 2048;
    e.max_num_seqs = large ? 1024 : 256;
    e.chunked_prefill = true;
    // V1's profile samples one row per sequence (gpu_model_runner _dummy_sampler_run): bf16
    // logits from the LM head, the sampler's fp32 copy and its fp32 probabilities.
    e.sampler_bytes_per_logit = 2 + 4 + 4;
    return e;
}

ServingEngine vllm_v0_engine(std::int64_t max_model_len, bool counts_cuda_context) {
    ServingEngine e;
    e.name = counts_cuda_context ? "vLLM 0.6.4 (V0)" : "vLLM 0.6.5+ (V0)";
    e.chunked_prefill = max_model_len > 32768;
    e.max_batched_tokens = e.chunked_prefill ? 512 : 2048;
    e.max_num_seqs = 256;
    e.sampler_bytes_per_logit = 2;
    e.counts_cuda_context = counts_cuda_context;
    return e;
}

ServingCard serving_card_for(const GpuSpec& g) {
    ServingCard c;
    c.name = g.name;
    c.total_bytes = expected_driver_memory(g, std::nullopt).expected_mib * kMiB;
    c.nvlink_sharp = g.nvlink_generation.value_or(0) >= 4 && g.form_factor.rfind("SXM", 0) == 0;
    return c;
}

double kv_bytes_per_token_per_gpu(const ModelArch& m, double kv_value_bytes, int tp) {
    double all = kv_bytes_per_token(m, kv_value_bytes);
    if (m.is_mla() || tp <= 1) return all;
    return all / double(std::min<std::int64_t>(tp, std::max<std::int64_t>(1, m.kv_heads)));
}

std::int64_t kv_tokens_in(double kv_bytes, double bytes_per_token, std::int64_t block_tokens) {
    if (kv_bytes <= 0 || bytes_per_token <= 0 || block_tokens < 1) return 0;
    return std::int64_t(std::floor(kv_bytes / (bytes_per_token * double(block_tokens)))) * block_tokens;
}

ServingCapacity serving_capacity(const ModelArch& m, const Workload& w, const ServingCard& card, int gpus,
                                 const ServingEngine& e) {
    ServingCapacity c = capacity(m, w, card, gpus, e);
    if (!c.fits) {
        c.problem =
            c.kv_bytes <= 0
                ? fmt::format("nothing is left for the KV cache: the terms take {} of the {} budget",
                              gib(c.budget_bytes - c.kv_bytes), gib(c.budget_bytes))
                : fmt::format("the KV cache holds {} tokens, less than one request of --seq {}", c.kv_tokens, c.seq);
        add_ideas(c, m, w, card, e);
    }
    c.notes.push_back(
        "CUDA graphs are captured after the KV cache is sized: they come out of the 1 − fraction remainder");
    return c;
}

void add_serving_rates(ServingCapacity& c, const ModelArch& m, const Workload& w, const CardRates& r,
                       const SpeedAssumptions& a) {
    if (!c.fits) {
        c.rates_absent_reason = "no request of --seq fits";
        return;
    }
    Workload at = w;
    at.batch = std::max<std::int64_t>(1, std::int64_t(std::floor(c.max_concurrency)));
    c.rate_batch = at.batch;
    SpeedEstimate s = estimate_speed(m, at, plan_memory(m, at, c.gpus), r, a);
    c.decode_tokens_per_s = s.decode_tokens_per_s;
    c.prefill_tokens_per_s = s.prefill_tokens_per_s;
    c.rates_absent_reason = s.absent_reason;
}

}  // namespace gpuvet
