#include "plan/vision_memory.hpp"

#include <algorithm>
#include <fmt/format.h>

#include "core/error.hpp"
#include "plan/recipes.hpp"
#include "plan/vision_activations.hpp"
#include "plan/vision_arch.hpp"
#include "core/units.hpp"

namespace gpuvet {

namespace {

using I = std::int64_t;
constexpr I kMaxSide = 16384;  // far above any model's training resolution (SDXL 1024, FLUX 2048)
// NF4 as bitsandbytes stores it without double quantization: 4 bits + an fp32 absmax per 64.
constexpr double kNf4Bits = 4.0 + 32.0 / 64;

std::string gib(double b) { return fmt::format("{:.2f} GiB", b / kGiB); }
std::string images(double n) { return fmt::format("{:.0f} image{}", n, n == 1 ? "" : "s"); }

void add(MemoryPlan& p, std::string key, std::string label, double bytes, std::string how) {
    p.items.push_back({std::move(key), std::move(label), bytes, std::move(how)});
}

std::string kind_name(const VisionArch& a) { return a.cnn ? "CNN" : a.vit ? "ViT" : "diffusion"; }

// Options of the LLM planner that mean nothing for an image model are refused by name.
void check_options(const ModelArch& m, const Workload& w) {
    if (w.tp > 1)
        throw usage_error("--tp: tensor parallelism is not modelled for image models (" + m.name + ")",
                          "drop --tp; several --gpus run data parallel, each card holding the whole model");
    if (w.zero_stage && *w.zero_stage == 3)
        throw usage_error("--zero 3 is not modelled for image models",
                          "use --zero 2 --offload-optimizer, or no --zero");
    if (w.offload_params)
        throw usage_error("--offload-params is not modelled for image models", "drop it, or use --offload-optimizer");
    if ((w.offload_optimizer) && w.zero_stage.value_or(0) == 0)
        throw usage_error("offload needs ZeRO", "add --zero 2 (DeepSpeed ZeRO-2 with the optimizer on the CPU)");
    if (w.task == Task::Inference && w.zero_stage)
        throw usage_error("ZeRO applies to training, not inference", "drop --zero for --task inference");
    const VisionArch& a = *m.vision;
    if ((w.task == Task::Lora || w.task == Task::Qlora) && a.kind != VisionKind::Diffusion)
        throw usage_error("LoRA of a " + kind_name(a) + " is not modelled",
                          "use --task full (or pretrain) for " + m.name + ", or LoRA on a diffusion model");
    if (w.vae_slicing && !a.vae) throw usage_error("--vae-slicing: " + m.name + " has no VAE", "drop --vae-slicing");
    if (w.guidance_cfg && a.kind != VisionKind::Diffusion)
        throw usage_error("--guidance: " + m.name + " is not a diffusion model", "drop --guidance");
}

// Bytes of one component's weights: quantized dtypes apply to its nn.Linear weights (what
// bitsandbytes and torchao replace), the rest stays 16-bit.
double weight_bytes(const ParamCount& c, double b, bool quantize) {
    if (b >= 2 || !quantize) return double(c.total) * std::max(b, 2.0);
    double bits = b == 0.5 ? kNf4Bits : 8.0;
    return double(c.linear) * bits / 8 + double(c.total - c.linear) * 2;
}

// The VAE decodes in fp32 in an fp32 run, and in an fp16 run of a pipeline that upcasts a
// force_upcast VAE (StableDiffusionXLPipeline.upcast_vae; bf16 runs are not upcast).
double vae_decode_bytes_per_value(const VisionArch& a, const Workload& w) {
    double b = dtype_bytes(w.weight_dtype);
    if (b >= 4) return 4;
    return (a.vae_upcast && a.vae && a.vae->force_upcast && w.weight_dtype == "fp16") ? 4 : 2;
}

struct Phase {
    std::string name;
    double bytes = 0;
    std::string how;
};

// Weights of every pipeline component, as items; returns the compute dtype's bytes. Inference
// holds the denoiser and the safety checker too; training scripts (diffusers examples) load the
// frozen text encoders and VAE beside the trained denoiser, and no safety checker.
double add_pipeline_weights(const VisionArch& a, const Workload& w, MemoryPlan& p, bool inference) {
    const double b = dtype_bytes(w.weight_dtype);
    const double compute = b >= 4 ? 4 : 2;
    if (inference) {
        ParamCount d = trained_params(a);
        add(p, "weights",
            a.unet  ? "UNet weights"
            : a.dit ? "transformer weights"
                    : "weights",
            weight_bytes(d, b, true),
            b < 2 ? fmt::format("{} linear weights × {} bits + {} others × 2 B", d.linear, b == 0.5 ? kNf4Bits : 8.0,
                                d.total - d.linear)
                  : fmt::format("{} params × {} B ({})", d.total, b, w.weight_dtype));
    }
    double text = 0;
    std::string how;
    bool t5 = false;
    for (auto& t : a.text_encoders) {
        t5 = t5 || t.kind == "t5";
        ParamCount c = text_encoder_params(t);
        text += weight_bytes(c, b, t.kind == "t5");  // the blogs quantize T5, not CLIP
        how += fmt::format("{}{} {}M", how.empty() ? "" : " + ", t.kind == "t5" ? "T5" : "CLIP", c.total / 1000000);
    }
    if (text > 0)
        add(p, "text_encoders", "text encoders", text,
            how + (b < 2 && t5 ? ", T5's linear weights quantized" : fmt::format(" params × {} B", compute)));
    if (a.vae) {
        double vb = vae_decode_bytes_per_value(a, w);
        ParamCount v = vae_params(*a.vae);
        add(p, "vae", vb == 4 && compute == 2 ? "VAE (fp32: force_upcast)" : "VAE", double(v.total) * vb,
            fmt::format("{} params × {} B", v.total, vb));
    }
    if (a.safety_checker_params && inference)
        add(p, "safety_checker", "safety checker", double(a.safety_checker_params) * compute,
            fmt::format("{} params × {} B (CLIP ViT-L/14, model_index.json)", a.safety_checker_params, compute));
    return compute;
}

// Latent (or patch) geometry of a diffusion model at the workload's size.
struct Latent {
    I h = 0, w = 0, image_tokens = 0, text_tokens = 0;
};
Latent latent_of(const VisionArch& a, ImageSize s) {
    Latent l;
    I f = a.vae ? a.vae->downsample() : 8;
    l.h = s.height / f, l.w = s.width / f;
    if (a.dit) l.image_tokens = (l.h / a.dit->patch) * (l.w / a.dit->patch);
    // Cross-attention / joint-attention context: the longest text encoder's tokens (T5 for FLUX).
    for (auto& t : a.text_encoders) l.text_tokens = std::max(l.text_tokens, t.tokens);
    return l;
}

ActivationValues denoiser_activations(const VisionArch& a, const Latent& l) {
    if (a.unet) return unet_activations(*a.unet, l.h, l.w, l.text_tokens);
    return dit_activations(*a.dit, l.image_tokens, l.text_tokens);
}

// The peak phase as the activation item; the other phases as the allocator's cache (a PyTorch
// caching allocator keeps what a phase freed as reserved blocks; counted whole, an upper estimate
// of what the peak phase cannot reuse) and in a note.
void add_phases(MemoryPlan& p, const std::vector<Phase>& phases) {
    const Phase* peak = &phases[0];
    for (auto& ph : phases)
        if (ph.bytes > peak->bytes) peak = &ph;
    double cached = 0;
    std::string all;
    for (auto& ph : phases) {
        if (&ph != peak) cached += ph.bytes;
        all += fmt::format("{}{} {}", all.empty() ? "" : ", ", ph.name, gib(ph.bytes));
    }
    add(p, "activations", "activations: " + peak->name + " (peak)", peak->bytes, peak->how);
    add(p, "allocator_cache", "allocator cache (other phases)", cached, "blocks the other phases freed, kept reserved");
    p.notes.push_back("phases, each alone on top of the weights: " + all + "; the largest sets the peak");
}

void plan_diffusion_inference(const VisionArch& a, const Workload& w, MemoryPlan& p, ImageSize s) {
    const double e = add_pipeline_weights(a, w, p, true);
    const Latent l = latent_of(a, s);
    const bool cfg = w.guidance_cfg.value_or(a.cfg_default);
    const double samples = double(w.batch) * (cfg ? 2 : 1);
    std::vector<Phase> phases;
    double text = 0;
    for (auto& t : a.text_encoders) text = std::max(text, text_encoder_transient(t));
    phases.push_back({"text encoding", text * samples * e,
                      fmt::format("{:.0f} prompts through the largest encoder layer", samples)});
    ActivationValues d = denoiser_activations(a, l);
    double step = d.transient + (w.flash_attention ? 0 : d.eager_transient);
    phases.push_back({"denoiser step", step * samples * e,
                      fmt::format("{:.0f} samples{} × {}×{} latent{}", samples, cfg ? " (CFG ×2)" : "", l.w, l.h,
                                  w.flash_attention ? "" : ", eager attention scores")});
    if (a.vae) {
        const double vb = vae_decode_bytes_per_value(a, w);
        ActivationValues v = vae_decode_activations(*a.vae, l.h, l.w);
        double per_image = std::max(v.transient, w.flash_attention ? 0.0 : v.eager_transient);
        double at_once = w.vae_slicing ? 1 : double(w.batch);
        phases.push_back(
            {"VAE decode", per_image * at_once * vb,
             fmt::format("{} at once{} × {}×{} px × {} B: {} per image", images(at_once),
                         w.vae_slicing ? " (--vae-slicing)" : "", s.width, s.height, vb, gib(per_image * vb))});
    }
    add_phases(p, phases);
    if (!cfg && a.cfg_default) p.notes.push_back("--guidance none: the denoiser runs once per step (no CFG)");
    if (!a.cfg_default) p.notes.push_back("guidance-distilled: one denoiser pass per step, no CFG batch");
}

void plan_classifier_inference(const VisionArch& a, const Workload& w, MemoryPlan& p, ImageSize s) {
    const double b = dtype_bytes(w.weight_dtype), e = b >= 4 ? 4 : 2;
    ParamCount c = trained_params(a);
    add(p, "weights", "weights", weight_bytes(c, b, true), fmt::format("{} params × {} B", c.total, b));
    ActivationValues v =
        a.cnn ? cnn_activations(*a.cnn, s.width, s.height) : vit_activations(*a.vit, s.width, s.height, false);
    double t = v.transient + (w.flash_attention ? 0 : v.eager_transient);
    add(p, "activations", "activations (forward, no grad)", t * double(w.batch) * e,
        fmt::format("{} × {}×{} px, largest layer alive at once", images(double(w.batch)), s.width, s.height));
}

// Trained network states: the recipe's bytes per parameter, or LoRA adapters on a frozen base.
void add_trained_states(const VisionArch& a, const Workload& w, MemoryPlan& p, const Recipe& r) {
    ParamCount d = trained_params(a);
    const bool adapters = w.task == Task::Lora || w.task == Task::Qlora;
    if (adapters) {
        bool q = w.task == Task::Qlora;
        double base = q ? double(d.linear) * kNf4Bits / 8 + double(d.total - d.linear) * 2 : double(d.total) * 2;
        add(p, "weights", "frozen denoiser", base,
            q ? fmt::format("{} linear × NF4 {} bits + {} others × 2 B", d.linear, kNf4Bits, d.total - d.linear)
              : fmt::format("{} params × 2 B", d.total));
        p.trainable_params = denoiser_lora_params(a, w.lora_rank);
        double T = double(p.trainable_params);
        add(p, "lora_weights", "LoRA adapter weights", T * 4,
            fmt::format("{} trainable (rank {} on to_q, to_k, to_v, to_out.0) × 4 B", p.trainable_params, w.lora_rank));
        add(p, "gradients", "gradients", T * 4, "trainable × 4 B");
        add(p, "optimizer", "optimizer (AdamW)", T * 8, "trainable × 8 B (m, v)");
        p.bytes_per_param = q ? kNf4Bits / 8 : 2;
        p.bytes_per_param_how =
            fmt::format("{:.3f} B per frozen parameter + 16 B per trainable one", p.bytes_per_param);
        return;
    }
    const double P = double(d.total);
    p.trainable_params = d.total;
    const int stage = w.zero_stage.value_or(0), dp = p.gpus;
    const double os = stage >= 1 ? dp : 1, gs = stage >= 2 ? dp : 1;
    add(p, "weights", "weights", r.weight_bytes * P, fmt::format("{} B × {} params", r.weight_bytes, d.total));
    add(p, "gradients", "gradients", r.grad_bytes * P / gs,
        fmt::format("{} B × params{}", r.grad_bytes, gs > 1 ? fmt::format(" ÷ {}", dp) : ""));
    if (w.offload_optimizer) p.cpu_bytes = r.optimizer_bytes * P;
    else
        add(p, "optimizer", "optimizer", r.optimizer_bytes * P / os,
            fmt::format("{} B × params{}", r.optimizer_bytes, os > 1 ? fmt::format(" ÷ {}", dp) : ""));
    p.zero_stage = stage;
    p.bytes_per_param = r.bytes_per_param();
    p.bytes_per_param_how = fmt::format("{}: {} weights + {} gradients + {} optimizer = {} B per parameter{}", r.key,
                                        r.weight_bytes, r.grad_bytes, r.optimizer_bytes, r.bytes_per_param(),
                                        w.offload_optimizer ? " (optimizer in host RAM)" : "");
}

// Saved activations of one training step at `e` bytes, and the backward working set (the
// gradients of one module's activations, about that module's saved values).
void add_training_activations(MemoryPlan& p, const Workload& w, const ActivationValues& v, double e,
                              const std::string& what) {
    const double b = double(w.batch);
    double saved = w.checkpointing ? v.checkpointed : v.saved;
    if (!w.flash_attention) saved += w.checkpointing ? v.eager_transient / 2 : v.eager_saved;
    add(p, "activations", w.checkpointing ? "activations (checkpointed)" : "activations",
        (saved * e + v.index_values * 8) * b,
        fmt::format("{} × {} B{}{}", what, e, w.checkpointing ? ", module inputs + one module" : "",
                    w.flash_attention ? "" : ", eager attention probabilities"));
    add(p, "backward_buffers", "backward working set", v.largest_module * e * b,
        "gradients of the largest module's activations");
}

void plan_vision_training(const VisionArch& a, const Workload& w, MemoryPlan& p, ImageSize s) {
    const bool adapters = w.task == Task::Lora || w.task == Task::Qlora;
    const Recipe& r = find_recipe(adapters ? "mixed-adamw" : w.recipe);
    add_trained_states(a, w, p, r);
    const double e = r.activation_bytes;
    const std::string what = fmt::format("{} × {}×{} px", images(double(w.batch)), s.width, s.height);
    if (a.kind != VisionKind::Diffusion) {
        // Autocast over fp32 weights keeps fp32 LayerNorm inputs and softmax outputs.
        bool autocast = r.weight_bytes >= 4 && r.activation_bytes == 2;
        ActivationValues v =
            a.cnn ? cnn_activations(*a.cnn, s.width, s.height) : vit_activations(*a.vit, s.width, s.height, autocast);
        add_training_activations(p, w, v, e, what);
        return;
    }
    add_pipeline_weights(a, w, p, false);  // frozen VAE and text encoders stay resident
    const Latent l = latent_of(a, s);
    ActivationValues d = denoiser_activations(a, l);
    add_training_activations(p, w, d, e, what + fmt::format(" ({}×{} latent)", l.w, l.h));
    if (a.vae) {
        double enc = vae_encode_activations(*a.vae, s.width, s.height).transient * double(w.batch) * 2;
        p.notes.push_back(
            fmt::format("the VAE encodes the batch before each step without gradients ({}); that "
                        "phase ends before the forward pass, so it is not added",
                        gib(enc)));
    }
}

}  // namespace

ImageSize image_size(const ModelArch& m, const Workload& w) {
    const VisionArch& a = *m.vision;
    ImageSize s{w.image_width ? w.image_width : a.default_resolution,
                w.image_height ? w.image_height : a.default_resolution};
    const I k = a.resolution_multiple();
    for (I side : {s.width, s.height}) {
        if (side < 1 || side > kMaxSide)
            throw usage_error(
                fmt::format("--resolution: {} pixels is outside 1 to {}", side, kMaxSide),
                fmt::format("give the image size, e.g. --resolution {0} or {0}x{0}", a.default_resolution));
        if (side % k != 0 || side < k)
            throw usage_error(
                fmt::format("--resolution: {} is not a multiple of {} pixels, which {} needs ({})", side, k, m.name,
                            a.cnn   ? "its total stride"
                            : a.vit ? "its patch size"
                            : a.dit ? "VAE ×8, 2×2 patches"
                                    : "VAE ×8"),
                fmt::format("use {} or {}", std::max(k, side / k * k), (side / k + 1) * k));
    }
    return s;
}

}  // namespace gpuvet

namespace gpuvet {

void plan_vision_memory(const ModelArch& m, const Workload& w, MemoryPlan& p) {
    check_options(m, w);
    const VisionArch& a = *m.vision;
    ImageSize s = image_size(m, w);
    if (w.task == Task::Inference) {
        if (a.kind == VisionKind::Diffusion) plan_diffusion_inference(a, w, p, s);
        else plan_classifier_inference(a, w, p, s);
    } else {
        plan_vision_training(a, w, p, s);
    }
    p.notes.push_back("speed: images per second are not modelled, so the card table has no rate column");
    if (p.gpus > 1)
        p.notes.push_back(
            fmt::format("data parallel: each of the {} cards holds the whole model and --batch {} "
                        "images",
                        p.gpus, w.batch));
}

}  // namespace gpuvet
