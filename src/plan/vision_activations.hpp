// Activation memory of image networks, walked layer by layer over the architecture at a given
// resolution. Values, not bytes: the caller multiplies by the bytes of the dtype the run computes
// in. "Transient" is the most that is alive at once in a no-grad pass (inference); "saved" is what
// autograd keeps for backward across the whole forward pass.
#pragma once
#include <cstdint>

#include "plan/vision_arch.hpp"

namespace gpuvet {

struct ActivationValues {
    double saved = 0;           // kept for backward, whole network, per sample
    double checkpointed = 0;    // gradient checkpointing: module inputs + the largest module's saved
    double largest_module = 0;  // one module's saved values (the backward working set is about that)
    double transient = 0;       // no-grad pass: the largest set alive at once, per sample
    // Non-fused attention (eager, no flash/SDPA): probabilities saved for backward over the whole
    // network, and the largest set alive at once in a no-grad pass; per sample.
    double eager_saved = 0, eager_transient = 0;
    double index_values = 0;  // int64 max-pool indices, per sample (8 bytes each whatever the dtype)
};

// Latent side lengths h × w (pixels ÷ VAE factor); text_tokens = the cross-attention context.
ActivationValues unet_activations(const UnetArch& u, std::int64_t h, std::int64_t w, std::int64_t text_tokens);
// Tokens = text tokens + latent patches.
ActivationValues dit_activations(const DitArch& d, std::int64_t image_tokens, std::int64_t text_tokens);
// Decoding one image from an h × w latent (transient only).
ActivationValues vae_decode_activations(const VaeArch& v, std::int64_t h, std::int64_t w);
// Encoding one image of H × W pixels (training: latents computed each step, no grad).
ActivationValues vae_encode_activations(const VaeArch& v, std::int64_t H, std::int64_t W);
// One prompt through a text encoder (no grad).
double text_encoder_transient(const TextEncoderArch& t);
// torchvision ResNet (conv → BN → in-place ReLU), one image of H × W.
ActivationValues cnn_activations(const CnnArch& c, std::int64_t H, std::int64_t W);
// ViT at a resolution: tokens = patches + CLS; `autocast_fp32` adds the fp32 copies autocast keeps
// (LayerNorm inputs on the fp32 residual stream, softmax outputs) as half-value equivalents.
ActivationValues vit_activations(const VitArch& v, std::int64_t H, std::int64_t W, bool autocast_fp32);
// LoRA parameters on the attention projections (diffusers' to_q, to_k, to_v, to_out.0).
std::int64_t denoiser_lora_params(const VisionArch& a, std::int64_t rank);

}  // namespace gpuvet
