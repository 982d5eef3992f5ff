// Reads a config.json's quantization_config into a Quantization, per method: bitsandbytes, gptq,
// awq, fp8, fbgemm_fp8 and compressed-tensors, each with the fields its library reads (the modules
// it leaves unconverted, group sizes, scale layouts, GPTQ's dynamic overrides, compressed-tensors'
// config_groups and kv_cache_scheme) and the checkpoint's torch_dtype. Any other method is refused
// by name. The weights are not laid out here (plan/quantization.hpp does, once the shapes are read).
#pragma once
#include <optional>
#include <string>

#include "plan/hf_config.hpp"
#include "plan/quantization.hpp"

namespace gpuvet {

// The methods whose storage is modelled, as the refusal lists them.
inline constexpr const char* kQuantMethods = "bitsandbytes, gptq, awq, fp8, fbgemm_fp8, compressed-tensors";

// nullopt when `f` has no quantization_config. Throws gpuvet::Error (Input) naming the field.
std::optional<Quantization> read_quantization_config(const FieldSource& f, const std::string& origin);

}  // namespace gpuvet
