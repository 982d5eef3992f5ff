// The itemized per-GPU memory of an image model (diffusion pipeline, CNN, ViT), for inference and
// training. Inference holds every pipeline component's weights and peaks in the largest of three
// phases: text encoding, one denoiser step (batch × 2 under classifier-free guidance) and the VAE
// decode (all images at once unless --vae-slicing). Training adds the trained network's states
// (the recipe's bytes per parameter, or LoRA adapters) and its saved activations.
#pragma once
#include "plan/memory_model.hpp"

namespace gpuvet {

// Pixels per image side the workload asks for, checked against the model (exit 2 on a size of 0,
// above 16384, or not a multiple of what the model needs).
struct ImageSize {
    std::int64_t width = 0, height = 0;
};
ImageSize image_size(const ModelArch& m, const Workload& w);

// Fills `p` for `m.vision`; plan_memory has checked the GPU count, batch and margin. Throws a usage
// error for options that do not apply to image models.
void plan_vision_memory(const ModelArch& m, const Workload& w, MemoryPlan& p);

}  // namespace gpuvet
