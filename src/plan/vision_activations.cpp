#include "plan/vision_activations.hpp"

#include <algorithm>

namespace gpuvet {

namespace {

using I = std::int64_t;

I ceil_div(I a, I b) { return (a + b - 1) / b; }

// Tracks the three figures while a network is walked module by module.
struct Walk {
    ActivationValues v;
    double largest_saved = 0;  // one module's saved values (recomputed at a time under checkpointing)
    double inputs = 0;         // checkpointed module inputs
    double eager_peak = 0;     // one attention's probabilities, the largest

    // A module that saves `saved`, whose input of `input` values is a checkpoint, and that holds
    // `transient` values at once in a no-grad pass.
    void module(double saved, double input, double transient) {
        v.saved += saved;
        largest_saved = std::max(largest_saved, saved);
        inputs += input;
        v.transient = std::max(v.transient, transient);
    }
    ActivationValues done(double held_through = 0) {
        v.checkpointed = inputs + largest_saved;
        v.largest_module = largest_saved;
        v.transient += held_through;
        v.eager_transient = eager_peak;
        return v;
    }
};

// diffusers ResnetBlock2D on S pixels. Saved: GroupNorm and SiLU inputs, both convolutions' inputs
// (3 × in + 3 × out). No-grad: the input stays for the residual while norm, SiLU and a
// convolution's output are alive (the largest of the three moments).
void resnet(Walk& k, I in, I out, double S) {
    double t = std::max({3.0 * in, 2.0 * in + out, double(in) + 2.0 * out}) * S;
    k.module((3.0 * in + 3.0 * out) * S, double(in) * S, t);
}

// Transformer2DModel: GroupNorm, proj_in, `depth` BasicTransformerBlocks, proj_out on T tokens.
// Saved per block and token (C wide): self-attention 6C (norm in, q/k/v input, q, k, v, out
// input), cross-attention 4C (norm in, q input, q, out input; k and v come from the text),
// GEGLU feed-forward 18C (norm in, proj input, 8C projection, 4C GELU(gate), 4C product).
void transformer2d(Walk& k, I C, I depth, I heads, double T, I text) {
    k.module(3.0 * C * T, double(C) * T, 0);
    for (I b = 0; b < depth; ++b) {
        // No-grad peak: the residual, the 8C projection, GELU(gate) and the product.
        k.module(28.0 * C * T, double(C) * T, 17.0 * C * T);
        k.v.eager_saved += double(heads) * T * (T + double(text));
        // Non-fused attention (diffusers get_attention_scores): a baddbmm buffer and the scores,
        // then scores and probabilities: two T × T per head at once.
        k.eager_peak = std::max(k.eager_peak, 2.0 * double(heads) * T * T);
    }
}

}  // namespace

ActivationValues unet_activations(const UnetArch& u, I h, I w, I text) {
    Walk k;
    const auto& c = u.block_out_channels;
    const std::size_t n = c.size();
    auto S = [&](std::size_t l) { return double(ceil_div(h, I(1) << l) * ceil_div(w, I(1) << l)); };
    double skips = double(c[0]) * S(0);  // conv_in output, kept for the up path
    k.module(double(u.in_channels) * S(0), 0, 0);
    for (std::size_t l = 0; l < n; ++l) {
        I in = l ? c[l - 1] : c[0];
        for (I j = 0; j < u.layers_per_block; ++j) {
            resnet(k, j ? c[l] : in, c[l], S(l));
            if (u.cross_attention[l]) transformer2d(k, c[l], u.transformer_depth[l], u.heads[l], S(l), text);
            skips += double(c[l]) * S(l);
        }
        if (l + 1 < n) {
            k.module(double(c[l]) * S(l), double(c[l]) * S(l), 2.0 * c[l] * S(l));  // Downsample2D
            skips += double(c[l]) * S(l + 1);
        }
    }
    const I top = c[n - 1];
    resnet(k, top, top, S(n - 1));
    transformer2d(k, top, u.transformer_depth[n - 1], u.heads[n - 1], S(n - 1), text);
    resnet(k, top, top, S(n - 1));
    for (std::size_t i = 0; i < n; ++i) {
        std::size_t l = n - 1 - i;
        I out = c[l], prev = i ? c[l + 1] : top, skip_in = c[l ? l - 1 : 0];
        for (I j = 0; j <= u.layers_per_block; ++j) {
            I skip = j == u.layers_per_block ? skip_in : out;
            resnet(k, (j ? out : prev) + skip, out, S(l));
            if (u.cross_attention[l]) transformer2d(k, out, u.transformer_depth[l], u.heads[l], S(l), text);
        }
        if (l > 0)  // Upsample2D: nearest ×2, then a convolution that saves its input
            k.module(double(out) * S(l - 1), double(out) * S(l), double(out) * (S(l) + 2.0 * S(l - 1)));
    }
    k.module(3.0 * c[0] * S(0), double(c[0]) * S(0), 3.0 * c[0] * S(0));  // norm, SiLU, conv_out
    // No-grad: the skip connections of the down path stay alive until the up path takes them.
    return k.done(skips);
}

ActivationValues dit_activations(const DitArch& d, I image_tokens, I text_tokens) {
    Walk k;
    const double h = double(d.hidden()), N = double(image_tokens + text_tokens), a = double(d.heads);
    // Saved per token: double-stream block 21h (LayerNorm input, modulated output, q/k/v input,
    // q, k, v, q/k RMSNorm inputs, attention output, gate product; the feed-forward's norm,
    // modulated input, 4h GELU input, 4h GELU output, gate product); single-stream 23h (adds the
    // 5h concatenation proj_out reads). No-grad peak: residual, norm, 4h MLP, 4h GELU, attention
    // output and the 5h concatenation of a single block (15h).
    for (I b = 0; b < d.double_blocks; ++b) k.module(21.0 * h * N, h * N, 10.0 * h * N);
    for (I b = 0; b < d.single_blocks; ++b) k.module(23.0 * h * N, h * N, 15.0 * h * N);
    k.v.eager_saved = double(d.double_blocks + d.single_blocks) * a * N * N;
    k.eager_peak = 2.0 * a * N * N;
    return k.done();
}

ActivationValues vae_decode_activations(const VaeArch& v, I h, I w) {
    Walk k;
    const auto& c = v.block_out_channels;
    const std::size_t n = c.size();
    const I top = c[n - 1];
    double S = double(h) * double(w);
    k.module(0, 0, double(v.latent_channels + top) * S);  // conv_in
    resnet(k, top, top, S);
    // Mid-block attention, one head over all latent pixels: residual, norm, q, k, v, output.
    k.module(0, 0, 6.0 * top * S);
    k.eager_peak = 2.0 * S * S;
    resnet(k, top, top, S);
    for (std::size_t i = 0; i < n; ++i) {
        std::size_t l = n - 1 - i;
        I prev = i ? c[l + 1] : top;
        for (I j = 0; j <= v.layers_per_block; ++j) resnet(k, j ? c[l] : prev, c[l], S);
        if (i + 1 < n) {  // nearest ×2: the input, the upsampled copy and the convolution's output
            k.module(0, 0, double(c[l]) * 9.0 * S);
            S *= 4;
        }
    }
    k.module(0, 0, (3.0 * c[0] + double(v.in_channels)) * S);  // norm, SiLU, conv_out
    return k.done();
}

ActivationValues vae_encode_activations(const VaeArch& v, I H, I W) {
    Walk k;
    const auto& c = v.block_out_channels;
    double S = double(H) * double(W);
    k.module(0, 0, double(v.in_channels + c[0]) * S);
    for (std::size_t l = 0; l < c.size(); ++l) {
        for (I j = 0; j < v.layers_per_block; ++j) resnet(k, j ? c[l] : (l ? c[l - 1] : c[0]), c[l], S);
        if (l + 1 < c.size()) {
            k.module(0, 0, double(c[l]) * 1.25 * S);  // stride-2 convolution: input + output
            S /= 4;
        }
    }
    return k.done();
}

double text_encoder_transient(const TextEncoderArch& t) {
    // One layer at a time: residual, normed input, q/k/v and the MLP intermediate with its
    // activation (the LLM prefill formula of plan/activations).
    return double(t.tokens) * (3.0 * double(t.hidden) + 2.0 * double(t.intermediate));
}

ActivationValues cnn_activations(const CnnArch& c, I H, I W) {
    Walk k;
    I h = ceil_div(H, 2), w = ceil_div(W, 2);  // 7×7 stride-2 stem
    double S = double(h * w);
    // Stem: the image (conv input), BatchNorm input, in-place ReLU output; max-pool keeps int64
    // indices (index_values: 8 bytes each whatever the dtype).
    k.module(3.0 * double(H * W) + 2.0 * c.width * S, 0, double(c.width) * 2 * S);
    h = ceil_div(h, 2), w = ceil_div(w, 2);
    S = double(h * w);
    k.v.index_values = double(c.width) * S;
    for (std::size_t s = 0; s < c.blocks.size(); ++s) {
        I width = c.width << s, out = width * c.expansion;
        for (I b = 0; b < c.blocks[s]; ++b) {
            double S_in = S;
            if (s > 0 && b == 0) {  // torchvision v1.5: the stride is on the 3×3 convolution
                h = ceil_div(h, 2), w = ceil_div(w, 2);
                S = double(h * w);
            }
            // conv1 → BN → ReLU at the input size, conv2 → BN → ReLU, conv3 → BN, projection
            // shortcut (first block) → BN, then the ReLU after the add: BN inputs and ReLU outputs.
            double saved = 2.0 * width * S_in + 2.0 * width * S + double(out) * S + (b == 0 ? double(out) * S : 0) +
                           double(out) * S;
            k.module(saved, double(out) * S, (double(out) + width) * S_in + double(out) * S);
        }
    }
    return k.done();
}

ActivationValues vit_activations(const VitArch& v, I H, I W, bool autocast_fp32) {
    Walk k;
    const double h = double(v.hidden), inter = double(v.intermediate), a = double(v.heads);
    const double N = double((H / v.patch) * (W / v.patch) + v.extra_tokens);
    // Per token and block: LayerNorm inputs (fp32 on autocast's residual stream: twice the half
    // values), q/k/v input, q, k, v, proj input, fc1 input, GELU input and output, and the two
    // DropPath products (stochastic depth of the DeiT/timm recipes keeps the scaled branch output).
    const double norms = autocast_fp32 ? 4.0 * h : 2.0 * h;
    const double per_token = norms + h + 3.0 * h + h + h + 2.0 * inter + 2.0 * h;
    k.module(3.0 * double(H * W), 0, 0);  // the image, saved by the patch convolution
    for (I l = 0; l < v.layers; ++l) k.module(per_token * N, h * N, (3.0 * h + 2.0 * inter) * N);
    // Softmax output kept in half precision for the attention-value product, and in fp32 (two
    // half values) as the softmax's own saved output under autocast.
    k.v.eager_saved = double(v.layers) * a * N * N * (autocast_fp32 ? 3.0 : 1.0);
    k.eager_peak = 2.0 * a * N * N;
    return k.done();
}

std::int64_t denoiser_lora_params(const VisionArch& a, I r) {
    I p = 0;
    if (a.unet) {
        const auto& u = *a.unet;
        const std::size_t n = u.block_out_channels.size();
        auto blocks = [&](std::size_t l, I resnets) {
            I C = u.block_out_channels[l];
            // attn1 q, k, v, out: 4 × (C + C); attn2 q, out: 2 × (C + C), k, v: 2 × (X + C).
            I per_block = r * (6 * 2 * C + 2 * (u.cross_attention_dim + C));
            return resnets * u.transformer_depth[l] * per_block;
        };
        for (std::size_t l = 0; l < n; ++l)
            if (u.cross_attention[l]) p += blocks(l, u.layers_per_block) + blocks(l, u.layers_per_block + 1);
        p += blocks(n - 1, 1);  // mid block
    } else if (a.dit) {
        const I h = a.dit->hidden();
        // to_q, to_k, to_v, to_out.0 of the double blocks; single blocks have no to_out.
        p = r * (a.dit->double_blocks * 4 * 2 * h + a.dit->single_blocks * 3 * 2 * h);
    }
    return p;
}

}  // namespace gpuvet
