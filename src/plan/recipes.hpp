// Training recipes: how many bytes each parameter costs in weights, gradients and optimizer state.
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace gpuvet {

struct Recipe {
    std::string key;
    std::string description;
    double weight_bytes = 0, grad_bytes = 0, optimizer_bytes = 0;  // per parameter
    double activation_bytes = 2;                                   // per activation value
    std::string source;
    // Optimizer states in CUDA unified memory (bitsandbytes paged optimizers): outside PyTorch's
    // allocator, evicted to host RAM under pressure, so they are not part of the GPU need.
    bool pageable_optimizer = false;
    double bytes_per_param() const { return weight_bytes + grad_bytes + optimizer_bytes; }
};

const std::vector<Recipe>& training_recipes();
// Throws Input listing the recipes when the name is unknown.
const Recipe& find_recipe(std::string_view key);

}  // namespace gpuvet
