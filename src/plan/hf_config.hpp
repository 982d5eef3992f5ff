// Reads a Hugging Face config.json (or a catalog entry with the same field names) into a ModelArch.
// Handles grouped-query attention, explicit head_dim, tied embeddings, MoE (Mixtral, Qwen-MoE,
// DeepSeek), multi-head latent attention, sliding windows and quantization_config. Missing required
// fields are all named in one Input error.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "plan/model_arch.hpp"

namespace gpuvet {

// Typed look-ups over one flat set of fields (a JSON object or a TOML table).
struct FieldSource {
    // Whether the field is there (and not null), whatever its type; lets a mistyped field be told
    // apart from a missing one.
    std::function<bool(std::string_view)> has;
    // Any number; whole-number fields are checked by the reader's rules, not by the source.
    std::function<std::optional<double>(std::string_view)> number;
    std::function<std::optional<bool>(std::string_view)> boolean;
    std::function<std::optional<std::string>(std::string_view)> text;
    // The same look-ups inside a nested object ("quantization_config", "text_config"); may be empty.
    std::function<std::optional<FieldSource>(std::string_view)> object;
    // Arrays (image models: block_out_channels, down_block_types); may be empty. Arrays of strings
    // may nest one level (GPTQ's modules_in_block_to_quantize), read flattened.
    std::function<std::optional<std::vector<double>>(std::string_view)> numbers;
    std::function<std::optional<std::vector<std::string>>(std::string_view)> texts;
    // The field names, in the file's order (GPTQ's dynamic: the first matching key wins); may be empty.
    std::function<std::vector<std::string>()> keys;
};

// `origin` names the file in errors. Throws gpuvet::Error (Input).
ModelArch arch_from_fields(const FieldSource& f, const std::string& origin);

// Parses config.json text. Throws gpuvet::Error (Input) on bad JSON or missing fields.
ModelArch parse_hf_config(std::string_view json_text, const std::string& origin);
ModelArch load_hf_config(const std::string& path);

}  // namespace gpuvet
