// A checkpoint quantized per module, as its config.json's quantization_config describes it: the
// storage format of the quantized linear layers (weights, scales, zero points), which modules the
// method leaves unconverted (kept in the checkpoint's torch_dtype), matched by name the way the
// method's library matches them, and the bytes that come out, module by module.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "plan/module_pattern.hpp"

namespace gpuvet {

struct ModelArch;  // plan/model_arch.hpp

// What one quantized in × out weight stores: the weights and the scales and zero points the
// method keeps beside them.
struct WeightFormat {
    std::string dtype;                            // "fp8", "int4", "int8", "nf4", "fp4"
    double weight_bits = 16;                      // per stored weight
    std::int64_t group = 0;                       // weights of one output row sharing a scale (0: no groups)
    double group_bits = 0;                        // scale + zero point per group
    double row_bits = 0;                          // per output row (per-channel scales, LLM.int8()'s row statistics)
    double column_bits = 0;                       // per input column (GPTQ's g_idx)
    std::int64_t block_rows = 0, block_cols = 0;  // 2-D scale blocks (fp8 weight_block_size)
    double block_bits = 0;
    double tensor_bits = 0;  // per tensor (per-tensor scales)
    std::string scales;      // in words: "an fp32 scale per output row"

    double bits(std::int64_t in, std::int64_t out) const;  // the whole tensor, in bits
    static WeightFormat of(std::string dtype, double weight_bits) {
        WeightFormat f;
        f.dtype = std::move(dtype);
        f.weight_bits = weight_bits;
        return f;
    }
};

// How a method's library decides that a pattern names a module.
enum class NameMatch {
    Substring,       // AutoAWQ, vLLM's AWQ: the pattern anywhere in the name
    PrefixOrSuffix,  // transformers' should_convert_module: re.match from the start, or the name's end
    ExactOrRegex,    // compressed-tensors: the whole name, a "re:" regex (re.match), or a class name
    Regex,           // GPTQ's dynamic keys: re.match
};

struct ModulePatterns {
    NameMatch how = NameMatch::PrefixOrSuffix;
    std::vector<std::string> text;               // as the config gives them
    std::vector<std::optional<NamePattern>> re;  // compiled where the text is a regex
    bool names_class = false;                    // compressed-tensors: "Linear" targets every linear layer

    bool empty() const { return text.empty() && !names_class; }
    // `specific`: only name and regex entries count (a compressed-tensors class target is weaker).
    bool matches(std::string_view name, bool specific = false) const;
};

// GPTQ's dynamic overrides and compressed-tensors' config_groups: the first that names a module decides.
struct FormatRule {
    ModulePatterns modules;
    std::optional<WeightFormat> format;  // nullopt: the module is left unconverted
    std::string from;                    // "dynamic '-:...'", "config_groups.group_0"
};

// One line of the weights in the plan's item list.
struct WeightPart {
    enum Kind { Quantized, Unconverted, Rest } kind = Quantized;  // Rest: embeddings, norms, biases
    std::string dtype;                                            // "fp8", "bf16"
    std::int64_t params = 0;
    double bytes = 0;
    std::string modules;  // "q_proj, k_proj, v_proj, o_proj: all 126 layers; ..."
    std::string why;      // the format's scales, or the field that left the modules unconverted
    bool quantized() const { return kind == Quantized; }
};

struct Quantization {
    std::string method;  // quant_method as given (bitsandbytes also when implicit)
    WeightFormat format;
    ModulePatterns not_converted;            // modules_to_not_convert, ignore, ignored_layers, llm_int8_skip_modules
    std::string not_converted_field;         // which of those the config used
    std::vector<FormatRule> rules;           // tried before `format`
    bool only_rules = false;                 // compressed-tensors: a module no group targets stays unconverted
    std::vector<std::string> block_modules;  // GPTQ modules_in_block_to_quantize ("self_attn.q_proj")
    bool lm_head = false;                    // GPTQ "lm_head": true quantizes the output head
    std::string dtype = "bf16";              // torch_dtype: what the unconverted modules keep
    double dtype_bytes = 2;
    bool dtype_stated = false;
    std::optional<std::string> kv_cache_dtype;  // "fp8" or "int8" (compressed-tensors kv_cache_scheme)
    std::vector<WeightPart> parts;              // quantized, unconverted, then the rest

    double weight_bytes() const;
    std::int64_t quantized_params() const;
};

// Decides every module of `m` (named as its Hugging Face checkpoint names them) and fills q.parts.
// `origin` names the file in errors (Input) when the model has more modules than can be matched.
void lay_out_weights(const ModelArch& m, Quantization& q, const std::string& origin);

// The checkpoint name of a block linear of `m` ("model.layers.3.self_attn.q_proj"); `expert` for
// routed experts. For tests and for the item list.
std::string module_name(const ModelArch& m, const std::string& linear, std::int64_t layer, std::int64_t expert = 0);

}  // namespace gpuvet
