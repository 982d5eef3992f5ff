// Image and vision architectures as far as memory depends on them: diffusion pipelines (a UNet or
// an MMDiT denoiser, a VAE, text encoders), CNNs (ResNet bottlenecks) and ViTs. Field names follow
// each component's Hugging Face config.json (diffusers) or the torchvision/timm constructor, so a
// catalog entry can be checked against its source line by line.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "plan/model_arch.hpp"

namespace gpuvet {

struct FieldSource;

// A parameter count split into the weights of nn.Linear layers (what bitsandbytes/torchao quantize)
// and the rest (convolutions, norms, embeddings, biases of the others).
struct ParamCount {
    std::int64_t total = 0, linear = 0;
    ParamCount& operator+=(const ParamCount& o) {
        total += o.total;
        linear += o.linear;
        return *this;
    }
};

// diffusers UNet2DConditionModel (SD 1.5, SDXL).
struct UnetArch {
    std::int64_t in_channels = 4, out_channels = 4;
    std::vector<std::int64_t> block_out_channels;  // per level
    std::vector<bool> cross_attention;             // per level (CrossAttnDownBlock2D)
    std::vector<std::int64_t> transformer_depth;   // transformer_layers_per_block, per level
    std::vector<std::int64_t> heads;               // attention heads per level ("attention_head_dim")
    std::int64_t layers_per_block = 2, cross_attention_dim = 768;
    std::int64_t addition_embed_in = 0;  // SDXL "text_time": projection_class_embeddings_input_dim
};

// diffusers FluxTransformer2DModel (MMDiT: double-stream then single-stream blocks).
struct DitArch {
    std::int64_t in_channels = 64;  // 16 latent channels × 2×2 patch
    std::int64_t double_blocks = 0, single_blocks = 0, heads = 0, head_dim = 0;
    std::int64_t joint_attention_dim = 4096, pooled_projection_dim = 768, mlp_ratio = 4;
    std::int64_t patch = 2;  // latent pixels per token side
    bool guidance_embeds = false;
    std::int64_t hidden() const { return heads * head_dim; }
};

// diffusers AutoencoderKL.
struct VaeArch {
    std::int64_t in_channels = 3, latent_channels = 4, layers_per_block = 2;
    std::vector<std::int64_t> block_out_channels;
    bool use_quant_conv = true, use_post_quant_conv = true;
    bool force_upcast = false;  // the SDXL pipelines decode in fp32 even in a 16-bit run
    // Pixels per latent pixel: 2^(levels − 1) = 8 for four levels.
    std::int64_t downsample() const { return std::int64_t(1) << (block_out_channels.size() - 1); }
};

// A text encoder of a pipeline: CLIP (CLIPTextModel, optionally WithProjection) or a T5 encoder.
struct TextEncoderArch {
    std::string name, kind;  // kind "clip" or "t5"
    std::int64_t hidden = 0, layers = 0, heads = 0, intermediate = 0, vocab = 0;
    std::int64_t tokens = 77;         // positions (CLIP) / max_sequence_length the pipeline pads to (T5)
    std::int64_t projection_dim = 0;  // CLIPTextModelWithProjection's text_projection (no bias)
    std::int64_t head_dim = 64, relative_buckets = 32;  // T5
};

// torchvision ResNet with bottleneck blocks.
struct CnnArch {
    std::vector<std::int64_t> blocks;  // per stage: [3, 4, 6, 3] for ResNet-50
    std::int64_t width = 64, expansion = 4, classes = 1000;
};

// timm VisionTransformer (ViT, DeiT): patches + a CLS token (and DeiT's distillation token).
struct VitArch {
    std::int64_t patch = 16, hidden = 0, layers = 0, heads = 0, intermediate = 0, classes = 1000;
    std::int64_t image_size = 224;  // the resolution of the learned position table
    std::int64_t extra_tokens = 1;  // CLS (+1 for DeiT's distillation token)
};

enum class VisionKind { Diffusion, Cnn, Vit };

struct VisionArch {
    VisionKind kind = VisionKind::Diffusion;
    std::int64_t default_resolution = 1024;  // what the model was trained at
    std::string default_dtype;               // the model card's torch_dtype (diffusion), used unless --dtype is given
    // Diffusion: exactly one denoiser.
    std::optional<UnetArch> unet;
    std::optional<DitArch> dit;
    std::optional<VaeArch> vae;
    std::vector<TextEncoderArch> text_encoders;
    std::int64_t safety_checker_params = 0;  // SD 1.x pipelines load a CLIP ViT-L/14 checker
    // Classifier-free guidance runs the denoiser on batch × 2; FLUX.1-dev is guidance-distilled.
    bool cfg_default = true;
    // StableDiffusionXLPipeline: a VAE with force_upcast is decoded in fp32 when the run is fp16.
    bool vae_upcast = false;
    std::optional<CnnArch> cnn;
    std::optional<VitArch> vit;

    // Pixels a side of the image must be a multiple of: VAE downsampling × DiT patch, ViT patch,
    // the CNN's total stride.
    std::int64_t resolution_multiple() const;
};

ParamCount unet_params(const UnetArch& u);
ParamCount dit_params(const DitArch& d);
ParamCount vae_params(const VaeArch& v);
ParamCount text_encoder_params(const TextEncoderArch& t);
ParamCount cnn_params(const CnnArch& c);
ParamCount vit_params(const VitArch& v);
// The network a fine-tuning or training run trains: the denoiser, the CNN or the ViT.
ParamCount trained_params(const VisionArch& a);

// Reads a catalog entry with model_type "diffusion", "resnet" or "vit": the components are nested
// tables named as in the diffusers repository (unet/transformer, vae, text_encoder...). Throws Input
// naming `origin` and every missing field.
VisionArch vision_from_fields(const FieldSource& f, const std::string& model_type, const std::string& origin);
bool is_vision_model_type(const std::string& model_type);
// A catalog model around vision_from_fields: model_type, fixed_params = the trained network's
// count, and the architecture.
ModelArch vision_model(const FieldSource& f, const std::string& model_type, const std::string& origin);

}  // namespace gpuvet
