#include "plan/memory_model.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

#include "core/error.hpp"
#include "plan/activations.hpp"
#include "plan/quantization.hpp"
#include "plan/recipe_checks.hpp"
#include "plan/recipes.hpp"
#include "plan/vision_memory.hpp"
#include "plan/zero_estimator.hpp"
#include "core/units.hpp"

namespace gpuvet {

const char* to_string(Task t) {
    switch (t) {
        case Task::Inference: return "inference";
        case Task::FullFinetune: return "full fine-tuning";
        case Task::Lora: return "LoRA";
        case Task::Qlora: return "QLoRA";
        case Task::Pretrain: return "pre-training";
    }
    return "?";
}
bool is_training(Task t) { return t != Task::Inference; }

double dtype_bytes(const std::string& d) {
    if (d == "fp32" || d == "float32") return 4;
    if (d == "bf16" || d == "fp16" || d == "float16" || d == "bfloat16") return 2;
    if (d == "fp8" || d == "int8") return 1;
    if (d == "int4" || d == "nf4" || d == "fp4") return 0.5;
    throw usage_error("unknown dtype '" + d + "'", "use fp32, bf16, fp16, fp8, int8 or int4");
}

bool alive_at(Phase phase, Moment moment) {
    switch (phase) {
        case Phase::Always: return true;
        case Phase::Loss: return moment == Moment::Loss;
        case Phase::Saved: return moment != Moment::BackwardEnd;
        case Phase::Backward: return moment != Moment::Loss;
        case Phase::Gradients: return moment == Moment::BackwardEnd;
        case Phase::Pageable: return false;
    }
    return false;
}

Moment MemoryPlan::peak_moment() const {
    if (forward_peak >= backward_start_peak && forward_peak >= backward_peak) return Moment::Loss;
    return backward_start_peak >= backward_peak ? Moment::BackwardStart : Moment::BackwardEnd;
}

double MemoryPlan::item(const std::string& key) const {
    double s = 0;
    for (auto& i : items)
        if (i.key == key) s += i.bytes_per_gpu;
    return s;
}

bool lora_target_matches(const std::string& target, const std::string& linear) {
    // "gate_proj" also matches experts' gate_proj.
    return linear == target ||
           (linear.size() > target.size() && linear.compare(linear.size() - target.size(), target.size(), target) == 0);
}

namespace {

// NF4 with double quantization: 4 + 8/64 + 32/(64·256) bits (QLoRA paper §3).
constexpr double kNf4DqBits = 4.0 + 8.0 / 64 + 32.0 / (64 * 256);

bool targeted(const Workload& w, const std::string& linear) {
    for (auto& t : w.lora_targets)
        if (t == "all" || lora_target_matches(t, linear)) return true;
    return false;
}

std::int64_t lora_params(const ModelArch& m, const Workload& w) {
    std::int64_t p = 0;
    for (auto& l : block_linears(m))
        if (targeted(w, l.name)) p += std::int64_t(w.lora_rank) * (l.in + l.out) * l.count_per_layer * l.layers;
    return p;
}

// Weights of the quantizable block linears vs the rest (embeddings, norms, biases).
std::int64_t linear_params(const ModelArch& m) {
    std::int64_t p = 0;
    for (auto& l : block_linears(m)) p += l.in * l.out * l.count_per_layer * l.layers;
    return p;
}

void add(MemoryPlan& p, std::string key, std::string label, double bytes, std::string how,
         Phase phase = Phase::Always) {
    p.items.push_back({std::move(key), std::move(label), bytes, std::move(how), phase});
}

// Gradients are made during backward and freed by zero_grad(set_to_none=True), PyTorch's default
// since 2.0; accumulated over micro-steps they persist and meet the next forward's activations.
Phase gradient_phase(const Workload& w) { return w.grad_accum > 1 ? Phase::Always : Phase::Gradients; }

std::string gib(double b) { return fmt::format("{:.2f} GiB", b / kGiB); }

std::string tp_split(int gpus) { return gpus > 1 ? fmt::format(", ÷ {} (tensor parallel)", gpus) : ""; }

// A quantized checkpoint, one item per storage: each quantized format, the modules the config
// leaves unconverted, and the weights no method quantizes (embeddings, norms).
void add_quantized_weights(const Quantization& q, MemoryPlan& p) {
    for (const WeightPart& part : q.parts) {
        if (part.params <= 0) continue;
        std::string label, how;
        switch (part.kind) {
            case WeightPart::Quantized:
                label = fmt::format("weights, {} ({})", part.dtype, q.method);
                how = fmt::format("{} params × {:.3f} bits: {}; {}", part.params, part.bytes * 8 / double(part.params),
                                  part.modules, part.why);
                break;
            case WeightPart::Unconverted:
                label = fmt::format("weights kept in {}", part.dtype);
                how = fmt::format("{} params × {} B: {} ({})", part.params, q.dtype_bytes, part.modules, part.why);
                break;
            case WeightPart::Rest:
                label = fmt::format("other weights ({})", part.dtype);
                how = fmt::format("{} params × {} B: {} ({})", part.params, q.dtype_bytes, part.modules, part.why);
                break;
        }
        add(p, "weights", label, part.bytes / p.gpus, how + tp_split(p.gpus));
    }
}

void plan_inference(const ModelArch& m, const Workload& w, MemoryPlan& p) {
    const double n = p.gpus;
    if (m.quant) {
        add_quantized_weights(*m.quant, p);
    } else {
        double b = dtype_bytes(w.weight_dtype);
        std::int64_t keep16 = b < 2 ? embedding_parameter_count(m) : 0;  // embeddings stay 16-bit
        double weights = double(p.params - keep16) * b + double(keep16) * 2;
        std::string how = fmt::format("{} params × {} B ({})", p.params, b, w.weight_dtype) +
                          (keep16 ? fmt::format(", embeddings {} × 2 B", keep16) : "");
        add(p, "weights", "weights", weights / n, how + tp_split(p.gpus));
    }

    double kv_b = dtype_bytes(w.kv_dtype);
    double kv = kv_cache_bytes(m, w.seq, kv_b) * double(w.batch);
    // K/V heads split across tensor-parallel ranks; fewer heads than ranks are replicated, and
    // MLA's single latent is replicated on every rank.
    double kv_split = m.is_mla() ? 1.0 : std::min<double>(n, double(std::max<std::int64_t>(1, m.kv_heads)));
    if (kv > 0)
        add(p, "kv_cache", "KV cache", kv / kv_split,
            fmt::format("{} seq × {} tokens × {:.0f} B/token ({})", w.batch, w.seq, kv_bytes_per_token(m, kv_b),
                        m.is_mla() ? "MLA latent" : fmt::format("{} KV heads × {} dim", m.kv_heads, m.head_dim)) +
                (m.sliding_window ? fmt::format(", window {}", m.sliding_window) : "") +
                (kv_split > 1 ? fmt::format(" ÷ {}", kv_split) : ""));
    double act = w.activations_gib ? *w.activations_gib * kGiB : inference_activation_bytes(m, w);
    add(p, "activations", "activations + workspace", act / n,
        w.activations_gib ? "given with --activations-gib"
                          : fmt::format("prefill chunk of {} tokens + last-token logits",
                                        std::min<std::int64_t>(w.batch * w.seq, w.prefill_chunk)));
}

// LoRA/QLoRA: a frozen (possibly NF4) base, FSDP-sharded across data-parallel ranks, plus fp32
// adapters with their gradients and AdamW state.
void plan_adapters(const ModelArch& m, const Workload& w, MemoryPlan& p, int tp, int dp) {
    if (m.is_fixed())
        throw usage_error("LoRA needs a transformer's shapes", "use --model or --config, not a fixed model");
    p.zero_stage = dp > 1 ? 3 : 0;  // FSDP shards the frozen base across data-parallel ranks
    std::int64_t lin = linear_params(m);
    double base;
    std::string how;
    if (m.quant) {
        // Adapters over a quantized checkpoint keep its frozen weights as stored (PEFT over GPTQ,
        // AWQ, bitsandbytes or FP8 checkpoints), whichever of LoRA and QLoRA is asked.
        base = m.quant->weight_bytes();
        how = fmt::format("{} frozen params as the checkpoint stores them: {} quantized ({}), the rest × {} B",
                          p.params, m.quant->quantized_params(), m.quant->method, m.quant->dtype_bytes);
    } else if (w.task == Task::Qlora) {
        base = double(lin) * kNf4DqBits / 8 + double(p.params - lin) * 2;
        how = fmt::format("{} linear weights × NF4+double-quant {:.3f} bits + {} others × 2 B", lin, kNf4DqBits,
                          p.params - lin);
    } else {
        base = double(p.params) * 2;
        how = fmt::format("{} frozen params × 2 B (bf16)", p.params);
    }
    add(p, "weights", "frozen base weights", base / p.gpus, how + (p.gpus > 1 ? fmt::format(" ÷ {}", p.gpus) : ""));
    if (dp > 1)
        add(p, "gather_buffer", "FSDP gather buffers", 2.0 * 2.0 * double(largest_layer_params(m)) / tp,
            "2 prefetched largest layers × 2 B");
    p.trainable_params = lora_params(m, w);
    double T = double(p.trainable_params) / p.gpus;
    const Recipe& r = find_recipe(w.recipe);
    // The default keeps adapters in fp32 as PEFT upcasts them (4 + 4 + 8 B: the same 16 B as
    // mixed-adamw); another recipe gives its own bytes (bf16-adamw: torchtune's pure bf16, 8 B).
    const bool peft = r.key == "mixed-adamw";
    const double wb = peft ? 4 : r.weight_bytes, gb = peft ? 4 : r.grad_bytes, ob = peft ? 8 : r.optimizer_bytes;
    add(p, "lora_weights", "LoRA adapter weights", T * wb, fmt::format("{} trainable × {} B", p.trainable_params, wb));
    add(p, "gradients", "gradients", T * gb, fmt::format("trainable × {} B", gb), gradient_phase(w));
    add(p, "optimizer", peft ? "optimizer (AdamW)" : "optimizer (" + r.key + ")", T * ob,
        fmt::format("trainable × {} B{}", ob, r.pageable_optimizer ? ", paged" : ""),
        r.pageable_optimizer ? Phase::Pageable : Phase::Always);
    p.bytes_per_param = m.quant                 ? base / double(std::max<std::int64_t>(1, p.params))
                        : w.task == Task::Qlora ? kNf4DqBits / 8
                                                : 2;
    p.bytes_per_param_how =
        fmt::format("{:.3f} B per frozen parameter + {} B per trainable one", p.bytes_per_param, wb + gb + ob);
}

// ZeRO-1/2 with mixed-precision AdamW, itemized so the total is what DeepSpeed's estimator prints.
void add_zero2_states(const Workload& w, MemoryPlan& p, int stage, double P, int dp) {
    ZeroEstimate z = deepspeed_zero2_estimate(std::int64_t(P), dp, 1, w.offload_optimizer);
    add(p, "weights", "weights (bf16)", 2 * P, "2 B × params");
    if (!w.offload_optimizer) {
        add(p, "gradients", "gradients (bf16)", 2 * P, "2 B × params");
        add(p, "optimizer", "optimizer (fp32 master, m, v, fp32 grads)", double(z.gpu_bytes) - 4 * P,
            fmt::format("16 B × params ÷ {} GPUs", dp));
    }
    p.cpu_bytes = double(z.cpu_bytes);
    p.notes.push_back(fmt::format("ZeRO-{} model states = DeepSpeed estimate_zero2_model_states_mem_needs: {}", stage,
                                  gib(double(z.gpu_bytes))));
}

// ZeRO-3 with mixed-precision AdamW, itemized the same way; L is the largest layer per TP rank.
void add_zero3_states(const Workload& w, MemoryPlan& p, double P, std::int64_t L, int dp) {
    ZeroEstimate z = deepspeed_zero3_estimate(std::int64_t(P), L, dp, 1, w.offload_optimizer, w.offload_params);
    add(p, "gather_buffer", "largest layer, gathered (fp32)", double(z.largest_layer_bytes),
        fmt::format("4 B × {} (largest layer)", L));
    if (!w.offload_params) {
        add(p, "weights", "weights shard (bf16)", 2 * P / dp, fmt::format("2 B × params ÷ {}", dp));
        if (!w.offload_optimizer) {
            double rest = double(z.gpu_bytes) - double(z.largest_layer_bytes) - 2 * P / dp;
            add(p, "gradients", "gradients shard (bf16)", 2 * P / dp, fmt::format("2 B × params ÷ {}", dp));
            add(p, "optimizer", "optimizer shard (fp32 master, m, v + buffers)", rest - 2 * P / dp,
                fmt::format("14 B × params ÷ {}", dp));
        }
    }
    p.cpu_bytes = double(z.cpu_bytes);
    p.notes.push_back(fmt::format("ZeRO-3 model states = DeepSpeed estimate_zero3_model_states_mem_needs: {}",
                                  gib(double(z.gpu_bytes))));
}

// Any other recipe or stage 0 (PyTorch-native training, FSDP for stage 3): the recipe's bytes per
// parameter, each part divided by the ranks its stage shards it over. FSDP CPU offload
// (--offload-params, torchtune fsdp_cpu_offload) keeps weights, gradients and states on the host:
// the GPU holds the gathered layers and one layer's gradient on its way out.
void add_recipe_states(const Workload& w, const Recipe& r, MemoryPlan& p, int stage, double P, std::int64_t L, int dp) {
    double ws = stage == 3 ? dp : 1, gs = stage >= 2 ? dp : 1, os = stage >= 1 ? dp : 1;
    auto shard = [&](double s) { return s > 1 ? fmt::format(" ÷ {}", dp) : std::string(); };
    const bool host_params = w.offload_params, host_states = w.offload_optimizer || w.offload_params;
    p.exchanged_weight_bytes = r.weight_bytes * P / ws;
    p.exchanged_gradient_bytes = r.grad_bytes * P / gs;
    if (host_params) p.cpu_bytes += (r.weight_bytes + r.grad_bytes) * P / dp;
    else
        add(p, "weights", "weights", r.weight_bytes * P / ws,
            fmt::format("{} B × params{}", r.weight_bytes, shard(ws)));
    if (w.optimizer_in_backward || host_params)
        // Each gradient is stepped (or sent to host) as soon as backward makes it: one layer's.
        add(p, "gradients", "gradients (one layer at a time)", r.grad_bytes * double(L),
            fmt::format("{} B × largest layer {}{}", r.grad_bytes, L,
                        w.optimizer_in_backward ? ", optimizer in backward" : ", offloaded"),
            Phase::Backward);
    else
        add(p, "gradients", "gradients", r.grad_bytes * P / gs, fmt::format("{} B × params{}", r.grad_bytes, shard(gs)),
            gradient_phase(w));
    if (host_states) p.cpu_bytes += r.optimizer_bytes * P / dp;
    else if (r.pageable_optimizer)
        add(p, "optimizer", "optimizer, paged (not in need)", r.optimizer_bytes * P / os,
            fmt::format("{} B × params{}, unified memory: host when short", r.optimizer_bytes, shard(os)),
            Phase::Pageable);
    else
        add(p, "optimizer", "optimizer", r.optimizer_bytes * P / os,
            fmt::format("{} B × params{}", r.optimizer_bytes, shard(os)));
    if (p.cpu_bytes > 0) p.cpu_how = "recipe bytes offloaded × params ÷ ranks";
    if (stage == 3)
        // Layers are gathered in the compute dtype (FSDP2 param_dtype), the current and the prefetched one.
        add(p, "gather_buffer", "gather buffers", 2.0 * r.activation_bytes * double(L),
            fmt::format("2 prefetched largest layers × {} B", r.activation_bytes));
}

// Full training: check the ZeRO/offload options, then the model states of the recipe.
void plan_full(const ModelArch& m, const Workload& w, MemoryPlan& p, const Recipe& r, int tp, int dp) {
    const double P = double(p.params) / tp;  // parameters each tensor-parallel rank owns
    p.trainable_params = p.params;
    int stage = w.zero_stage.value_or(dp > 1 ? 3 : 0);
    if (stage < 0 || stage > 3)
        throw usage_error("--zero must be 0, 1, 2 or 3", "2 shards gradients and optimizer, 3 also the weights");
    if ((w.offload_optimizer || w.offload_params) && stage == 0)
        throw usage_error("offload needs ZeRO", "add --zero 2 or --zero 3");
    if (w.offload_params && stage != 3)
        throw usage_error("--offload-params needs --zero 3",
                          "add --zero 3, or offload only the optimizer with --offload-optimizer");
    p.zero_stage = stage;
    p.bytes_per_param = r.bytes_per_param();
    p.bytes_per_param_how = fmt::format("{}: {} weights + {} gradients + {} optimizer = {} B per parameter", r.key,
                                        r.weight_bytes, r.grad_bytes, r.optimizer_bytes, r.bytes_per_param()) +
                            (r.pageable_optimizer ? " (optimizer paged: not in the GPU need)" : "") +
                            (w.optimizer_in_backward ? "; optimizer in backward: one layer's gradient alive" : "") +
                            (w.grad_accum > 1 ? fmt::format("; gradients kept over {} micro-steps", w.grad_accum) : "");
    std::int64_t L = largest_layer_params(m) / tp;
    // DeepSpeed's estimators model mixed-precision AdamW only.
    if (stage >= 1 && r.key == "mixed-adamw" && !w.optimizer_in_backward) {
        if (stage <= 2) add_zero2_states(w, p, stage, P, dp);
        else add_zero3_states(w, p, P, L, dp);
    } else {
        add_recipe_states(w, r, p, stage, P, L, dp);
    }
}

// Activations and logits at `e` bytes per value; a bare parameter count has no shapes to model.
void add_training_activations(const ModelArch& m, const Workload& w, MemoryPlan& p, double e) {
    if (m.is_fixed()) {
        if (!w.activations_gib)
            p.notes.push_back("activations of " + m.name + " are not modelled: give --activations-gib for the batch");
        else add(p, "activations", "activations", *w.activations_gib * kGiB, "given with --activations-gib");
        return;
    }
    ActivationEstimate a = training_activations(m, w, e);
    std::string kept = w.selective_checkpointing ? ", every other matmul output"
                       : w.checkpointing         ? ", block inputs"
                                                 : "";
    if (w.offload_activations) kept += ", offloaded to host: two blocks' worth stay";
    add(p, "activations",
        w.selective_checkpointing ? "activations (selective checkpointing)"
        : w.checkpointing         ? "activations (checkpointed)"
                                  : "activations",
        a.layers_bytes,
        fmt::format("{} seq × {} tokens, {} layers, {} B/value{}{}{}", w.batch, w.seq, m.layers, e, kept,
                    w.flash_attention ? "" : ", eager attention", w.compiled ? ", compiled" : ""),
        Phase::Saved);
    const std::string loss = w.loss.value_or("full");
    if (a.logits_bytes > 0)
        add(p, "logits", "logits (" + loss + " cross-entropy)", a.logits_bytes,
            loss == "fused" ? fmt::format("tokens × hidden {} × {} B (hidden-state gradient only)", m.hidden, e)
                            : fmt::format("tokens × vocab {} × {} B{}", m.vocab, logits_bytes_per_value(loss, e),
                                          loss == "chunked" ? fmt::format(" ({} chunks)", kLossChunks)
                                                            : " (fp32 log-softmax + 2 gradients)"),
            Phase::Loss);
    const bool recomputed = w.checkpointing || w.selective_checkpointing;
    add(p, "backward_block", "one block in backward", a.block_bytes,
        recomputed ? "recomputed: its saved tensors" : "its saved tensors", Phase::Backward);
}

void plan_training(const ModelArch& m, const Workload& w, MemoryPlan& p) {
    const int tp = std::max(1, w.tp);
    if (p.gpus % tp != 0)
        throw usage_error(fmt::format("{} GPUs cannot hold tensor-parallel degree {}", p.gpus, tp),
                          "make --gpus a multiple of --tp");
    const int dp = p.gpus / tp;
    const bool adapters = w.task == Task::Lora || w.task == Task::Qlora;
    const Recipe& r = find_recipe(w.recipe);
    if (adapters) plan_adapters(m, w, p, tp, dp);
    else plan_full(m, w, p, r, tp, dp);
    if (m.quant && !adapters)
        p.notes.push_back("the checkpoint is stored " + m.quant->method +
                          "-quantized; full training plans every weight in the recipe's dtype (dequantized)");
    add_training_activations(m, w, p, r.activation_bytes);
}

}  // namespace

MemoryPlan plan_memory(const ModelArch& m, const Workload& w, int gpus) {
    if (gpus < 1) throw usage_error("the GPU count must be at least 1", "pass --gpus 1 or more");
    if (w.batch < 1 || w.seq < 1)
        throw usage_error("--batch and --seq must be at least 1", "e.g. --batch 8 --seq 2048");
    if (w.margin < 0 || w.margin > 10)
        throw usage_error("--margin must be between 0 and 10", "0.2 is the default, a 20% margin");
    MemoryPlan p;
    p.gpus = gpus;
    p.params = parameter_count(m);
    p.active_params = active_parameter_count(m);
    check_recipe_options(w);
    if (m.vision) {
        plan_vision_memory(m, w, p);  // image models: plan/vision_memory
    } else if (w.task == Task::Inference) {
        if (w.zero_stage)
            throw usage_error("ZeRO applies to training, not inference", "drop --zero for --task inference");
        plan_inference(m, w, p);
    } else {
        plan_training(m, w, p);
    }
    add(p, "cuda_context", "CUDA context + kernels", w.cuda_context_gib * kGiB,
        fmt::format("{} GiB per GPU", w.cuda_context_gib));
    for (auto& i : p.items) {
        if (alive_at(i.phase, Moment::Loss)) p.forward_peak += i.bytes_per_gpu;
        if (alive_at(i.phase, Moment::BackwardStart)) p.backward_start_peak += i.bytes_per_gpu;
        if (alive_at(i.phase, Moment::BackwardEnd)) p.backward_peak += i.bytes_per_gpu;
        if (i.phase == Phase::Pageable) p.pageable_bytes += i.bytes_per_gpu;
    }
    p.subtotal_per_gpu = std::max({p.forward_peak, p.backward_start_peak, p.backward_peak});
    p.margin_bytes = p.subtotal_per_gpu * w.margin;
    p.need_per_gpu = p.subtotal_per_gpu + p.margin_bytes;
    return p;
}

}  // namespace gpuvet
