#include "plan/vision_arch.hpp"

#include <algorithm>

namespace gpuvet {

namespace {

using I = std::int64_t;

ParamCount linear(I in, I out, bool bias = true) { return {in * out + (bias ? out : 0), in * out}; }
ParamCount conv(I in, I out, I k, bool bias = true) { return {in * out * k * k + (bias ? out : 0), 0}; }
ParamCount norm(I c) { return {2 * c, 0}; }  // GroupNorm / LayerNorm / BatchNorm: weight and bias

// diffusers ResnetBlock2D; temb 0: no time-embedding projection (VAE).
ParamCount resnet(I in, I out, I temb) {
    ParamCount p = norm(in);
    p += conv(in, out, 3);
    if (temb) p += linear(temb, out);
    p += norm(out);
    p += conv(out, out, 3);
    if (in != out) p += conv(in, out, 1);
    return p;
}

// diffusers Transformer2DModel of depth `depth` on C channels; proj_in/proj_out are a linear or a
// 1×1 convolution with the same count (counted as linear: bitsandbytes only quantizes the linear
// ones, a small difference against the attention and feed-forward weights).
ParamCount transformer2d(I c, I depth, I cross) {
    ParamCount p = norm(c);
    p += linear(c, c);
    p += linear(c, c);
    for (I i = 0; i < depth; ++i) {
        p += norm(c);  // self-attention: q, k, v without bias, out with bias
        p += linear(c, c, false), p += linear(c, c, false), p += linear(c, c, false), p += linear(c, c);
        p += norm(c);  // cross-attention: k, v from the text embedding
        p += linear(c, c, false), p += linear(cross, c, false), p += linear(cross, c, false), p += linear(c, c);
        p += norm(c);  // GEGLU feed-forward, inner 4C
        p += linear(c, 8 * c);
        p += linear(4 * c, c);
    }
    return p;
}

// diffusers TimestepEmbedding: linear_1, SiLU, linear_2.
ParamCount timestep_embedding(I in, I dim) {
    ParamCount p = linear(in, dim);
    p += linear(dim, dim);
    return p;
}

// The VAE's mid-block attention (one head, q, k, v, out with bias, a group norm).
ParamCount vae_attention(I c) {
    ParamCount p = norm(c);
    for (int i = 0; i < 4; ++i) p += linear(c, c);
    return p;
}

ParamCount vae_mid(I c) {
    ParamCount p = resnet(c, c, 0);
    p += vae_attention(c);
    p += resnet(c, c, 0);
    return p;
}

}  // namespace

ParamCount unet_params(const UnetArch& u) {
    const auto& c = u.block_out_channels;
    const std::size_t n = c.size();
    const I temb = 4 * c[0];
    ParamCount p = conv(u.in_channels, c[0], 3);
    p += timestep_embedding(c[0], temb);
    if (u.addition_embed_in) p += timestep_embedding(u.addition_embed_in, temb);
    for (std::size_t i = 0; i < n; ++i) {  // down path
        I in = i ? c[i - 1] : c[0];
        for (I j = 0; j < u.layers_per_block; ++j) {
            p += resnet(j ? c[i] : in, c[i], temb);
            if (u.cross_attention[i]) p += transformer2d(c[i], u.transformer_depth[i], u.cross_attention_dim);
        }
        if (i + 1 < n) p += conv(c[i], c[i], 3);  // Downsample2D
    }
    p += resnet(c[n - 1], c[n - 1], temb);  // UNetMidBlock2DCrossAttn
    p += transformer2d(c[n - 1], u.transformer_depth[n - 1], u.cross_attention_dim);
    p += resnet(c[n - 1], c[n - 1], temb);
    for (std::size_t i = 0; i < n; ++i) {  // up path, levels reversed; each resnet takes a skip
        std::size_t lvl = n - 1 - i;
        I out = c[lvl], prev = i ? c[lvl + 1] : c[n - 1], skip_in = c[lvl ? lvl - 1 : 0];
        for (I j = 0; j <= u.layers_per_block; ++j) {
            I skip = j == u.layers_per_block ? skip_in : out;
            p += resnet((j ? out : prev) + skip, out, temb);
            if (u.cross_attention[lvl]) p += transformer2d(out, u.transformer_depth[lvl], u.cross_attention_dim);
        }
        if (i + 1 < n) p += conv(out, out, 3);  // Upsample2D
    }
    p += norm(c[0]);
    p += conv(c[0], u.out_channels, 3);
    return p;
}

ParamCount dit_params(const DitArch& d) {
    const I h = d.hidden(), mlp = d.mlp_ratio * h;
    ParamCount p = linear(d.in_channels, h);  // x_embedder
    p += linear(d.joint_attention_dim, h);    // context_embedder
    p += timestep_embedding(256, h);          // 256 sinusoidal channels
    if (d.guidance_embeds) p += timestep_embedding(256, h);
    p += timestep_embedding(d.pooled_projection_dim, h);  // pooled text projection
    ParamCount qk_norms{2 * d.head_dim, 0};               // RMSNorm on q and k
    for (I b = 0; b < d.double_blocks; ++b) {
        for (int stream = 0; stream < 2; ++stream) {        // image and text streams
            p += linear(h, 6 * h);                          // AdaLayerNormZero modulation
            for (int i = 0; i < 4; ++i) p += linear(h, h);  // q, k, v, out
            p += qk_norms;
            p += linear(h, mlp);
            p += linear(mlp, h);
        }
    }
    for (I b = 0; b < d.single_blocks; ++b) {
        p += linear(h, 3 * h);
        for (int i = 0; i < 3; ++i) p += linear(h, h);
        p += qk_norms;
        p += linear(h, mlp);
        p += linear(h + mlp, h);  // proj_out over attention and MLP together
    }
    p += linear(h, 2 * h);  // AdaLayerNormContinuous
    p += linear(h, d.in_channels);
    return p;
}

ParamCount vae_params(const VaeArch& v) {
    const auto& c = v.block_out_channels;
    const std::size_t n = c.size();
    const I L = v.latent_channels;
    ParamCount p = conv(v.in_channels, c[0], 3);  // encoder
    for (std::size_t i = 0; i < n; ++i) {
        for (I j = 0; j < v.layers_per_block; ++j) p += resnet(j ? c[i] : (i ? c[i - 1] : c[0]), c[i], 0);
        if (i + 1 < n) p += conv(c[i], c[i], 3);
    }
    p += vae_mid(c[n - 1]);
    p += norm(c[n - 1]);
    p += conv(c[n - 1], 2 * L, 3);  // mean and log-variance
    if (v.use_quant_conv) p += conv(2 * L, 2 * L, 1);
    if (v.use_post_quant_conv) p += conv(L, L, 1);
    p += conv(L, c[n - 1], 3);  // decoder
    p += vae_mid(c[n - 1]);
    for (std::size_t i = 0; i < n; ++i) {
        std::size_t lvl = n - 1 - i;
        I prev = i ? c[lvl + 1] : c[n - 1];
        for (I j = 0; j <= v.layers_per_block; ++j) p += resnet(j ? c[lvl] : prev, c[lvl], 0);
        if (i + 1 < n) p += conv(c[lvl], c[lvl], 3);
    }
    p += norm(c[0]);
    p += conv(c[0], v.in_channels, 3);
    return p;
}

ParamCount text_encoder_params(const TextEncoderArch& t) {
    const I h = t.hidden;
    ParamCount p{t.vocab * h, 0};  // token embedding
    if (t.kind == "t5") {
        // T5 v1.1 encoder: no biases, RMS norms (weight only), gated-GELU feed-forward, a relative
        // position bias in the first layer.
        const I inner = t.heads * t.head_dim;
        for (I l = 0; l < t.layers; ++l) {
            p += ParamCount{h, 0};
            p += linear(h, inner, false), p += linear(h, inner, false), p += linear(h, inner, false);
            p += linear(inner, h, false);
            p += ParamCount{h, 0};
            p += linear(h, t.intermediate, false), p += linear(h, t.intermediate, false);
            p += linear(t.intermediate, h, false);
        }
        p += ParamCount{t.relative_buckets * t.heads + h, 0};
        return p;
    }
    p += ParamCount{t.tokens * h, 0};  // CLIP: learned positions
    for (I l = 0; l < t.layers; ++l) {
        p += norm(h);
        for (int i = 0; i < 4; ++i) p += linear(h, h);
        p += norm(h);
        p += linear(h, t.intermediate);
        p += linear(t.intermediate, h);
    }
    p += norm(h);
    if (t.projection_dim) p += linear(h, t.projection_dim, false);
    return p;
}

ParamCount cnn_params(const CnnArch& c) {
    ParamCount p = conv(3, c.width, 7, false);  // stem, then BatchNorm
    p += norm(c.width);
    I in = c.width;
    for (std::size_t s = 0; s < c.blocks.size(); ++s) {
        I w = c.width << s, out = w * c.expansion;
        for (I b = 0; b < c.blocks[s]; ++b) {
            p += conv(in, w, 1, false), p += norm(w);
            p += conv(w, w, 3, false), p += norm(w);
            p += conv(w, out, 1, false), p += norm(out);
            if (b == 0) p += conv(in, out, 1, false), p += norm(out);  // projection shortcut
            in = out;
        }
    }
    p += linear(in, c.classes);
    return p;
}

ParamCount vit_params(const VitArch& v) {
    const I h = v.hidden, grid = v.image_size / v.patch;
    ParamCount p = conv(3, h, v.patch);                                           // patch embedding
    p += ParamCount{v.extra_tokens * h + (grid * grid + v.extra_tokens) * h, 0};  // tokens + positions
    for (I l = 0; l < v.layers; ++l) {
        p += norm(h);
        p += linear(h, 3 * h);
        p += linear(h, h);
        p += norm(h);
        p += linear(h, v.intermediate);
        p += linear(v.intermediate, h);
    }
    p += norm(h);
    for (I t = 0; t < v.extra_tokens; ++t) p += linear(h, v.classes);  // head (and distillation head)
    return p;
}

ParamCount trained_params(const VisionArch& a) {
    if (a.unet) return unet_params(*a.unet);
    if (a.dit) return dit_params(*a.dit);
    if (a.cnn) return cnn_params(*a.cnn);
    if (a.vit) return vit_params(*a.vit);
    return {};
}

std::int64_t VisionArch::resolution_multiple() const {
    if (cnn) return 32;  // five stride-2 stages
    if (vit) return vit->patch;
    I m = vae ? vae->downsample() : 8;
    return dit ? m * dit->patch : m;
}

}  // namespace gpuvet
