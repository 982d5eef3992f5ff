// Reading image/vision catalog entries (vision_arch.hpp) from the typed field look-ups the LLM
// reader uses. Every missing or out-of-range field is named in one Input error.
#include <cmath>
#include <fmt/format.h>
#include <memory>

#include "core/error.hpp"
#include "plan/hf_config.hpp"
#include "plan/vision_arch.hpp"

namespace gpuvet {

namespace {

using I = std::int64_t;

constexpr const char* kAdvice =
    "an image model is a [[model]] with model_type diffusion, resnet or vit and its components' "
    "config.json fields, as in data/models.toml";
constexpr double kMaxSize = 1 << 20;  // channels, widths, counts: far above any real model

struct Reader {
    const FieldSource& f;
    std::string where;  // "vae." inside a component
    std::vector<std::string>& missing;
    std::string origin;

    I size(const char* k, std::optional<I> fallback = std::nullopt, double lo = 1, double hi = kMaxSize) const {
        auto v = f.number ? f.number(k) : std::nullopt;
        if (!v) {
            if (!fallback) missing.push_back(where + k);
            return fallback.value_or(1);
        }
        if (*v != std::floor(*v) || *v < lo || *v > hi)
            throw input_error(
                fmt::format("{}: {}{} = {} is not a whole number from {} to {}", origin, where, k, *v, lo, hi),
                kAdvice);
        return I(*v);
    }
    bool flag(const char* k, bool fallback) const {
        auto v = f.boolean ? f.boolean(k) : std::nullopt;
        return v.value_or(fallback);
    }
    // A list of sizes, or one size repeated `n` times (diffusers accepts both).
    std::vector<I> sizes(const char* k, std::size_t n, std::optional<I> fallback = std::nullopt) const {
        auto a = f.numbers ? f.numbers(k) : std::nullopt;
        if (!a) {
            if (f.number && f.number(k)) return std::vector<I>(n ? n : 1, size(k));
            if (!fallback) missing.push_back(where + k);
            return std::vector<I>(n ? n : 1, fallback.value_or(1));
        }
        if (a->empty() || a->size() > 16 || (n && a->size() != n))
            throw input_error(fmt::format("{}: {}{} has {} entries{}", origin, where, k, a->size(),
                                          n ? fmt::format(", the model has {} levels", n) : ", expected 1 to 16"),
                              kAdvice);
        std::vector<I> v;
        for (double x : *a) {
            if (x != std::floor(x) || x < 1 || x > kMaxSize)
                throw input_error(
                    fmt::format("{}: {}{} holds {}: not a whole number from 1 to {}", origin, where, k, x, kMaxSize),
                    kAdvice);
            v.push_back(I(x));
        }
        return v;
    }
    std::optional<Reader> sub(const char* k) const {
        if (!f.object) return std::nullopt;
        auto o = f.object(k);
        if (!o) return std::nullopt;
        auto own = std::make_shared<const FieldSource>(std::move(*o));
        return Reader{*own, where + k + ".", missing, origin, own};
    }
    std::shared_ptr<const FieldSource> own{};  // keeps a nested table's look-ups alive (f points into it)
};

UnetArch read_unet(const Reader& r) {
    UnetArch u;
    u.in_channels = r.size("in_channels");
    u.out_channels = r.size("out_channels");
    u.block_out_channels = r.sizes("block_out_channels", 0);
    const std::size_t n = u.block_out_channels.size();
    auto types = r.f.texts ? r.f.texts("down_block_types") : std::nullopt;
    if (!types || types->size() != n)
        r.missing.push_back(r.where + "down_block_types (one per block_out_channels entry)");
    for (std::size_t i = 0; i < n; ++i)
        u.cross_attention.push_back(types && i < types->size() && (*types)[i].find("CrossAttn") != std::string::npos);
    u.transformer_depth = r.sizes("transformer_layers_per_block", n, 1);
    u.heads = r.sizes("attention_head_dim", n);  // diffusers' name for the head count
    u.layers_per_block = r.size("layers_per_block");
    u.cross_attention_dim = r.size("cross_attention_dim");
    u.addition_embed_in = r.size("projection_class_embeddings_input_dim", 0, 0);
    for (std::size_t i = 0; i < n; ++i)
        if (u.block_out_channels[i] % u.heads[i] != 0)
            throw input_error(fmt::format("{}: {}attention_head_dim {} does not divide {} channels", r.origin, r.where,
                                          u.heads[i], u.block_out_channels[i]),
                              kAdvice);
    return u;
}

DitArch read_dit(const Reader& r) {
    DitArch d;
    d.in_channels = r.size("in_channels");
    d.double_blocks = r.size("num_layers");
    d.single_blocks = r.size("num_single_layers", 0, 0);
    d.heads = r.size("num_attention_heads");
    d.head_dim = r.size("attention_head_dim");
    d.joint_attention_dim = r.size("joint_attention_dim");
    d.pooled_projection_dim = r.size("pooled_projection_dim");
    d.guidance_embeds = r.flag("guidance_embeds", false);
    d.patch = r.size("latent_packing", 2);
    return d;
}

VaeArch read_vae(const Reader& r) {
    VaeArch v;
    v.in_channels = r.size("in_channels");
    v.latent_channels = r.size("latent_channels");
    v.layers_per_block = r.size("layers_per_block");
    v.block_out_channels = r.sizes("block_out_channels", 0);
    v.use_quant_conv = r.flag("use_quant_conv", true);
    v.use_post_quant_conv = r.flag("use_post_quant_conv", true);
    v.force_upcast = r.flag("force_upcast", true);  // AutoencoderKL's default
    return v;
}

TextEncoderArch read_text_encoder(const Reader& r, const std::string& name) {
    TextEncoderArch t;
    t.name = name;
    t.kind = r.f.text ? r.f.text("model_type").value_or("") : "";
    if (t.kind == "t5") {
        t.hidden = r.size("d_model");
        t.layers = r.size("num_layers");
        t.heads = r.size("num_heads");
        t.head_dim = r.size("d_kv");
        t.intermediate = r.size("d_ff");
        t.relative_buckets = r.size("relative_attention_num_buckets", 32);
        t.tokens = r.size("max_sequence_length");
    } else if (t.kind == "clip_text_model") {
        t.kind = "clip";
        t.hidden = r.size("hidden_size");
        t.layers = r.size("num_hidden_layers");
        t.heads = r.size("num_attention_heads");
        t.intermediate = r.size("intermediate_size");
        t.tokens = r.size("max_position_embeddings");
        if (r.flag("with_projection", false)) t.projection_dim = r.size("projection_dim");
    } else {
        throw input_error(r.origin + ": " + r.where + "model_type must be \"clip_text_model\" or \"t5\"", kAdvice);
    }
    t.vocab = r.size("vocab_size");
    return t;
}

VisionArch read_diffusion(const Reader& r) {
    VisionArch a;
    a.kind = VisionKind::Diffusion;
    if (auto u = r.sub("unet")) a.unet = read_unet(*u);
    else if (auto d = r.sub("transformer")) a.dit = read_dit(*d);
    else r.missing.push_back(r.where + "unet or transformer (the denoiser)");
    if (auto v = r.sub("vae")) a.vae = read_vae(*v);
    else r.missing.push_back(r.where + "vae");
    for (const char* k : {"text_encoder", "text_encoder_2", "text_encoder_3"})
        if (auto t = r.sub(k)) a.text_encoders.push_back(read_text_encoder(*t, k));
    a.safety_checker_params = r.size("safety_checker_params", 0, 0, 1e12);
    a.cfg_default = !r.flag("guidance_distilled", false);
    a.vae_upcast = r.flag("vae_upcast_fp16", false);
    return a;
}

}  // namespace

bool is_vision_model_type(const std::string& t) { return t == "diffusion" || t == "resnet" || t == "vit"; }

VisionArch vision_from_fields(const FieldSource& f, const std::string& type, const std::string& origin) {
    std::vector<std::string> missing;
    Reader r{f, "", missing, origin};
    VisionArch a;
    if (type == "diffusion") {
        a = read_diffusion(r);
    } else if (type == "resnet") {
        a.kind = VisionKind::Cnn;
        CnnArch c;
        c.blocks = r.sizes("layers", 0);
        c.width = r.size("width_per_group", 64);
        c.classes = r.size("num_classes", 1000);
        a.cnn = c;
    } else {
        a.kind = VisionKind::Vit;
        VitArch v;
        v.patch = r.size("patch_size");
        v.hidden = r.size("hidden_size");
        v.layers = r.size("num_hidden_layers");
        v.heads = r.size("num_attention_heads");
        v.intermediate = r.size("intermediate_size");
        v.image_size = r.size("image_size");
        v.classes = r.size("num_classes", 1000);
        v.extra_tokens = r.flag("distilled", false) ? 2 : 1;
        if (v.hidden % v.heads != 0 || v.image_size % v.patch != 0)
            throw input_error(origin +
                                  ": hidden_size must divide by num_attention_heads and image_size by "
                                  "patch_size",
                              kAdvice);
        a.vit = v;
    }
    a.default_resolution = r.size("resolution", a.cnn || a.vit ? 224 : 1024);
    a.default_dtype = f.text ? f.text("torch_dtype").value_or("") : "";
    if (!a.default_dtype.empty() && a.default_dtype != "fp16" && a.default_dtype != "bf16" && a.default_dtype != "fp32")
        throw input_error(origin + ": torch_dtype must be fp16, bf16 or fp32", kAdvice);
    if (!missing.empty()) {
        std::string list;
        for (auto& m : missing) list += (list.empty() ? "" : ", ") + m;
        throw input_error(origin + ": missing " + list, kAdvice);
    }
    return a;
}

ModelArch vision_model(const FieldSource& f, const std::string& type, const std::string& origin) {
    ModelArch m;
    m.model_type = type;
    auto a = std::make_shared<VisionArch>(vision_from_fields(f, type, origin));
    m.fixed_params = trained_params(*a).total;
    m.vision = std::move(a);
    return m;
}

}  // namespace gpuvet
