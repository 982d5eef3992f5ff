// plan's image-model options (--resolution, --vae-slicing, --guidance) and the check that options
// of one kind of model are not given for the other.
#pragma once
#include <CLI/CLI.hpp>
#include <string>

#include "plan/model_arch.hpp"
#include "plan/workload.hpp"

namespace gpuvet {

struct ImageArgs {
    std::string resolution, guidance;
    bool vae_slicing = false;
};

void add_image_options(CLI::App& sub, ImageArgs& a);
// Sets the workload's image fields from the options; throws a usage error (exit 2) naming an
// option that does not apply to `m` (an LLM option on an image model or the other way round), or
// a resolution that is not N or WxH pixels from 1 to 16384.
void apply_image_options(const CLI::App& sub, const ImageArgs& a, const ModelArch& m, Workload& w);

}  // namespace gpuvet
