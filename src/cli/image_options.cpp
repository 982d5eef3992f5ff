#include "cli/image_options.hpp"

#include "cli/number_option.hpp"
#include "core/error.hpp"
#include "core/strings.hpp"
#include "plan/vision_arch.hpp"

namespace gpuvet {

namespace {

constexpr NumberRule kSideRule{
    .min = 1, .max = 16384, .whole = true, .what = "a side", .suffix = "pixels", .example = "1024"};

// Options that describe a language model's workload and have no meaning for an image.
constexpr const char* kTokenOptions[] = {"--seq", "--kv-dtype", "--lora-targets", "--activations-gib"};
constexpr const char* kImageOptions[] = {"--resolution", "--vae-slicing", "--guidance"};

}  // namespace

void add_image_options(CLI::App& sub, ImageArgs& a) {
    sub.add_option("--resolution", a.resolution, "image models: pixels per side, 1024 or WxH (default: the model's)")
        ->type_name("PX");
    sub.add_flag("--vae-slicing", a.vae_slicing, "diffusion inference: decode one image at a time");
    sub.add_option("--guidance", a.guidance, "diffusion: cfg (denoiser batch × 2) or none (default: the model's)");
}

void apply_image_options(const CLI::App& sub, const ImageArgs& a, const ModelArch& m, Workload& w) {
    if (!m.vision) {
        for (const char* o : kImageOptions)
            if (sub.count(o))
                throw usage_error(std::string(o) + " applies to image models; " + m.name + " is not one",
                                  "drop " + std::string(o) + ", or pick an image model (gpuvet plan --list-models)");
        return;
    }
    for (const char* o : kTokenOptions)
        if (sub.count(o))
            throw usage_error(std::string(o) + " does not apply to the image model " + m.name,
                              "drop " + std::string(o) + "; image workloads take --batch (images) and --resolution");
    if (!a.resolution.empty()) {
        auto parts = split(to_lower(a.resolution), 'x');
        if (parts.size() > 2 || parts.empty())
            throw usage_error("--resolution '" + a.resolution + "' is not N or WIDTHxHEIGHT",
                              "e.g. --resolution 1024 or --resolution 1024x768");
        w.image_width = parse_whole_option("--resolution", trim(parts[0]), kSideRule);
        w.image_height =
            parts.size() == 2 ? parse_whole_option("--resolution", trim(parts[1]), kSideRule) : w.image_width;
    }
    w.vae_slicing = a.vae_slicing;
    // The dtype the model card loads the pipeline in (SDXL: fp16, which also decides its fp32 VAE
    // decode), unless --dtype says otherwise.
    if (!sub.count("--dtype") && !m.vision->default_dtype.empty()) w.weight_dtype = m.vision->default_dtype;
    if (a.guidance == "cfg") w.guidance_cfg = true;
    else if (a.guidance == "none") w.guidance_cfg = false;
    else if (!a.guidance.empty())
        throw usage_error("--guidance '" + a.guidance + "' is not cfg or none",
                          "cfg runs the denoiser on batch × 2 (classifier-free guidance), none once");
}

}  // namespace gpuvet
