#include "plan/hf_config.hpp"

#include <nlohmann/json.hpp>
#include <vector>

#include "core/error.hpp"
#include "core/input_file.hpp"
#include "core/numbers.hpp"
#include "core/text_limits.hpp"
#include "core/strings.hpp"
#include "plan/hf_family.hpp"
#include "plan/quant_config.hpp"
#include "plan/quantization.hpp"

namespace gpuvet {

namespace {

// Ordered: GPTQ's dynamic is matched key by key in the file's order.
using json = nlohmann::ordered_json;

// Each look-up keeps the whole document alive and points into it: a nested object is not copied,
// so following text_config inside text_config costs nothing per level.
FieldSource json_fields(std::shared_ptr<const json> j) {
    FieldSource f;
    auto find = [j](std::string_view k) -> const json* {
        auto it = j->find(std::string(k));
        return (it == j->end() || it->is_null()) ? nullptr : &*it;
    };
    f.has = [find](std::string_view k) { return find(k) != nullptr; };
    f.number = [find](std::string_view k) -> std::optional<double> {
        auto* v = find(k);
        if (v && v->is_number()) return v->get<double>();
        return std::nullopt;
    };
    f.boolean = [find](std::string_view k) -> std::optional<bool> {
        auto* v = find(k);
        if (v && v->is_boolean()) return v->get<bool>();
        return std::nullopt;
    };
    f.text = [find](std::string_view k) -> std::optional<std::string> {
        auto* v = find(k);
        if (v && v->is_string()) return v->get<std::string>();
        return std::nullopt;
    };
    f.object = [j, find](std::string_view k) -> std::optional<FieldSource> {
        auto* v = find(k);
        if (!v || !v->is_object()) return std::nullopt;
        return json_fields(std::shared_ptr<const json>(j, v));
    };
    // Arrays of numbers only (fp8's weight_block_size); any other element makes it absent.
    f.numbers = [find](std::string_view k) -> std::optional<std::vector<double>> {
        auto* v = find(k);
        if (!v || !v->is_array() || v->size() > 16) return std::nullopt;
        std::vector<double> out;
        for (auto& e : *v) {
            if (!e.is_number()) return std::nullopt;
            out.push_back(e.get<double>());
        }
        return out;
    };
    // Strings, or lists of strings one level deep (GPTQ's modules_in_block_to_quantize), flattened.
    f.texts = [find](std::string_view k) -> std::optional<std::vector<std::string>> {
        auto* v = find(k);
        if (!v || !v->is_array()) return std::nullopt;
        std::vector<std::string> out;
        for (auto& e : *v) {
            if (e.is_string()) out.push_back(e.get<std::string>());
            else if (e.is_array())
                for (auto& x : e) {
                    if (!x.is_string()) return std::nullopt;
                    out.push_back(x.get<std::string>());
                }
            else return std::nullopt;
        }
        return out;
    };
    f.keys = [j]() {
        std::vector<std::string> out;
        for (auto it = j->begin(); it != j->end(); ++it) out.push_back(it.key());
        return out;
    };
    return f;
}

// What to do about a config that cannot be read as a model.
constexpr const char* kConfigAdvice =
    "pass the model's config.json as published in its repository, or give a bare count with --params";

// Ranges of the integer fields. No real model comes near the upper bounds; larger values would
// only overflow the arithmetic. Wrappers (text_config in a multimodal config) nest a few deep.
constexpr double kSizeMax = double(1 << 24);
constexpr NumberRule kSizeRule{.min = 1, .max = kSizeMax, .whole = true, .what = "a size", .example = "4096"};
constexpr NumberRule kOptionalSizeRule{
    .min = 0, .max = kSizeMax, .whole = true, .what = "a size (0: none)", .example = "0"};
constexpr NumberRule kHeadDimRule{.min = 1, .max = 65536, .whole = true, .what = "a head size", .example = "128"};
constexpr NumberRule kVocabRule{
    .min = 1, .max = double(1 << 28), .whole = true, .what = "a vocabulary size", .example = "32000"};
constexpr NumberRule kPositionsRule{
    .min = 1, .max = 4294967296.0, .whole = true, .what = "a context length", .example = "8192"};
constexpr NumberRule kWindowRule{
    .min = 0, .max = 4294967296.0, .whole = true, .what = "a window (0: none)", .example = "4096"};
constexpr NumberRule kExpertsRule{
    .min = 0, .max = 65536, .whole = true, .what = "an expert count (0: dense)", .example = "8"};
constexpr NumberRule kTopKRule{.min = 1, .max = 65536, .whole = true, .what = "an expert count", .example = "2"};
constexpr NumberRule kTypeVocabRule{.min = 0, .max = 65536, .whole = true, .what = "a count", .example = "2"};
constexpr NumberRule kParamsRule{
    .min = 1, .max = 1e15, .whole = true, .what = "a parameter count", .example = "25557032"};
constexpr NumberRule kDropoutRule{.min = 0, .max = 1, .what = "a probability", .example = "0.1"};
constexpr int kMaxWrapperDepth = 4;

// A field that is present must be a number the rule allows; nullopt when absent (or null).
std::optional<double> number_field(const FieldSource& f, const std::string& origin, std::string_view k,
                                   const NumberRule& r) {
    if (f.has && !f.has(k)) return std::nullopt;
    auto v = f.number(k);
    if (!v) {
        if (!f.has) return std::nullopt;
        throw input_error(origin + ": field " + std::string(k) + " must be a number; give " + std::string(r.what) +
                              " " + describe_range(r) + ", e.g. " + std::string(k) + " = " + std::string(r.example),
                          kConfigAdvice);
    }
    return check_number_field(origin, k, *v, r, kConfigAdvice);
}

std::optional<std::int64_t> whole_field(const FieldSource& f, const std::string& origin,
                                        std::initializer_list<std::string_view> names, const NumberRule& r) {
    NumberRule w = r;
    w.whole = true;
    for (auto n : names)
        if (auto v = number_field(f, origin, n, w)) return std::int64_t(*v);
    return std::nullopt;
}

// Collects the names of required fields that are absent, so one error names them all.
struct Required {
    const FieldSource& f;
    const std::string& origin;
    std::vector<std::string> missing;
    std::int64_t integer(std::initializer_list<std::string_view> names, const NumberRule& r = kSizeRule) {
        if (auto v = whole_field(f, origin, names, r)) return *v;
        missing.emplace_back(*names.begin());
        return 0;
    }
};

std::int64_t opt_int(const FieldSource& f, const std::string& origin, std::initializer_list<std::string_view> names,
                     std::int64_t dflt, const NumberRule& r = kOptionalSizeRule) {
    return whole_field(f, origin, names, r).value_or(dflt);
}

// Sizes every transformer config states; absent required ones are collected in `req`.
void read_core_sizes(Required& req, const FieldSource& f, const std::string& origin, ModelArch& m) {
    m.hidden = req.integer({"hidden_size", "n_embd", "d_model"});
    m.layers = req.integer({"num_hidden_layers", "n_layer", "num_layers"});
    m.heads = req.integer({"num_attention_heads", "n_head"});
    m.vocab = req.integer({"vocab_size"}, kVocabRule);
    m.kv_heads = opt_int(f, origin, {"num_key_value_heads", "n_head_kv", "num_kv_heads"}, m.heads, kSizeRule);
    if (f.boolean("multi_query").value_or(false)) m.kv_heads = 1;  // GPTBigCode
    m.max_positions = opt_int(f, origin, {"max_position_embeddings", "n_positions", "n_ctx"}, 0, kPositionsRule);
}

// Layer details the family implies (norm, biases, positions), then what the config overrides.
void read_layer_options(const FieldSource& f, const std::string& origin, ModelArch& m) {
    const std::string& t = m.model_type;
    bool gpt2 = t == "gpt2";
    bool bert = t == "bert" || t == "roberta" || t == "xlm-roberta";
    if (gpt2 || bert || t == "gpt_bigcode" || t == "gpt_neox" || t == "opt" || t == "phi") {
        m.norm = NormKind::LayerNorm;
        m.mlp = MlpKind::Plain;
        m.qkv_bias = m.o_bias = m.mlp_bias = true;
        m.dropout = 0.1;
    }
    if (gpt2 || t == "gpt_bigcode") m.learned_positions = true;
    if (bert) {
        m.encoder = true;
        m.learned_positions = true;
        m.type_vocab = opt_int(f, origin, {"type_vocab_size"}, 2, kTypeVocabRule);
        m.pooler = true;
        m.embedding_norm = true;
    }
    if (t == "qwen2" || t == "qwen2_moe") m.qkv_bias = true;
    if (auto b = f.boolean("attention_bias")) m.qkv_bias = m.o_bias = *b;
    if (auto b = f.boolean("mlp_bias")) m.mlp_bias = *b;
    if (auto d = number_field(f, origin, "attention_dropout", kDropoutRule)) m.dropout = std::max(m.dropout, *d);
    if (auto d = number_field(f, origin, "hidden_dropout_prob", kDropoutRule)) m.dropout = *d;
}

// The feed-forward width and embedding tying; GPT-2 and GPTBigCode default to 4x hidden.
void read_ffn(Required& req, const FieldSource& f, const std::string& origin, ModelArch& m) {
    const std::string& t = m.model_type;
    const bool gpt2_like = t == "gpt2" || t == "gpt_bigcode";
    std::int64_t dflt_inter = gpt2_like ? 4 * m.hidden : -1;
    m.intermediate = opt_int(f, origin, {"intermediate_size", "n_inner", "ffn_dim"}, dflt_inter, kSizeRule);
    if (m.intermediate < 0) {
        req.missing.emplace_back("intermediate_size");
        m.intermediate = 0;
    }
    m.tied_embeddings = f.boolean("tie_word_embeddings").value_or(gpt2_like);
}

// MoE: Mixtral (num_local_experts), Qwen-MoE (num_experts), DeepSeek (n_routed_experts).
void read_experts(Required& req, const FieldSource& f, const std::string& origin, ModelArch& m) {
    m.experts = opt_int(f, origin, {"num_local_experts", "num_experts", "n_routed_experts"}, 0, kExpertsRule);
    if (m.experts <= 0) return;
    m.experts_per_token = opt_int(f, origin, {"num_experts_per_tok", "top_k"}, 0, kTopKRule);
    if (m.experts_per_token == 0) req.missing.emplace_back("num_experts_per_tok");
    m.moe_intermediate = opt_int(f, origin, {"moe_intermediate_size"}, m.intermediate, kSizeRule);
    m.shared_experts = opt_int(f, origin, {"n_shared_experts"}, 0, kExpertsRule);
    m.shared_intermediate = opt_int(f, origin, {"shared_expert_intermediate_size"}, 0);
    if (m.shared_intermediate > 0 && m.shared_experts == 0) m.shared_experts = 1;
    m.first_dense_layers = opt_int(f, origin, {"first_k_dense_replace"}, 0);
    m.router_bias = m.model_type == "deepseek_v3";
}

// Head sizes: multi-head latent attention states its own; otherwise head_dim or hidden / heads.
void read_head_dims(Required& req, const FieldSource& f, const std::string& origin, ModelArch& m) {
    m.kv_lora_rank = opt_int(f, origin, {"kv_lora_rank"}, 0);
    if (m.kv_lora_rank > 0) {
        m.q_lora_rank = opt_int(f, origin, {"q_lora_rank"}, 0);
        m.qk_nope_head_dim = req.integer({"qk_nope_head_dim"}, kHeadDimRule);
        m.qk_rope_head_dim = req.integer({"qk_rope_head_dim"}, kHeadDimRule);
        m.v_head_dim = req.integer({"v_head_dim"}, kHeadDimRule);
        m.head_dim = m.qk_nope_head_dim + m.qk_rope_head_dim;
    }
    if (m.heads > 0 && m.head_dim == 0)
        m.head_dim = opt_int(f, origin, {"head_dim"}, std::max<std::int64_t>(1, m.hidden / m.heads), kHeadDimRule);
}

// Sliding windows: Mistral sets sliding_window; Qwen2 only uses it when use_sliding_window is
// true, and then only above max_window_layers.
void read_sliding_window(const FieldSource& f, const std::string& origin, ModelArch& m) {
    const std::string& t = m.model_type;
    const bool qwen2 = t == "qwen2" || t == "qwen2_moe";
    auto w = whole_field(f, origin, {"sliding_window"}, kWindowRule);
    if (!w || *w <= 0) return;
    if (!f.boolean("use_sliding_window").value_or(!qwen2)) return;
    m.sliding_window = *w;
    std::int64_t from = opt_int(f, origin, {"max_window_layers"}, 0);
    m.sliding_layers = qwen2 ? std::max<std::int64_t>(0, m.layers - from) : m.layers;
}

// One error naming every absent required field, then the fields that contradict each other.
void check_consistent(const Required& req, const std::string& origin, const ModelArch& m) {
    if (!req.missing.empty())
        throw input_error(origin + ": config is missing " + joined(req.missing) +
                              " (found: " + joined(standard_fields(req.f).used) + ")",
                          "add the field(s) from the model's config.json, or use --params for a bare count");
    if (m.kv_heads == 0 || m.heads % m.kv_heads != 0)
        throw input_error(origin + ": num_key_value_heads (" + std::to_string(m.kv_heads) +
                              ") must divide num_attention_heads (" + std::to_string(m.heads) + ")",
                          kConfigAdvice);
    if (m.experts > 0 && m.experts_per_token > m.experts)
        throw input_error(origin + ": num_experts_per_tok is larger than the number of experts", kConfigAdvice);
    if (m.first_dense_layers > m.layers)
        throw input_error(origin + ": first_k_dense_replace (" + std::to_string(m.first_dense_layers) +
                              ") is larger than num_hidden_layers (" + std::to_string(m.layers) + ")",
                          kConfigAdvice);
}

// The parameter count, bounded in floating point with every product model_arch forms, must
// stay far inside 64-bit integers (each field alone is in range; their products may not be).
void check_plausible_size(const std::string& origin, const ModelArch& m) {
    const double h = double(m.hidden), heads = double(m.heads), hd = double(m.head_dim);
    const double qk = double(m.qk_nope_head_dim + m.qk_rope_head_dim), heads_qk = heads * qk;
    const double attn = 2 * h * heads * hd + 2 * h * double(m.kv_heads) * hd + double(m.q_lora_rank) * (h + heads_qk) +
                        h * heads_qk + h * double(m.kv_lora_rank + m.qk_rope_head_dim) +
                        double(m.kv_lora_rank) * heads * double(m.qk_nope_head_dim + m.v_head_dim) +
                        heads * double(m.v_head_dim) * h;
    const double ffn = 3 * h * double(m.intermediate) + 3 * h * double(m.experts) * double(m.moe_intermediate) +
                       3 * h * double(m.shared_experts) * double(std::max(m.shared_intermediate, m.moe_intermediate)) +
                       h * double(m.experts);
    const double embeddings =
        2 * double(m.vocab) * h + double(m.type_vocab) * h + (m.learned_positions ? double(m.max_positions) * h : 0.0);
    const double estimate = double(m.layers) * (attn + ffn + 4 * h) + embeddings;
    if (estimate > 1e15)
        throw input_error(origin + ": the config describes an implausibly large model (~" +
                              format_number(estimate / 1e12) + " trillion parameters)",
                          kConfigAdvice);
}

constexpr const char* kUnknownAdvice =
    "--params N plans the weights only (N from the model card, e.g. --params 7B); --config reads llama, "
    "mistral, mixtral, qwen2, qwen2_moe, deepseek_v3, gpt2, gpt_bigcode, gpt_neox, opt, phi, bert, roberta and "
    "xlm-roberta, and other decoders that state the standard fields";

std::string type_text(const std::string& t) { return t.empty() ? std::string("(none)") : "'" + t + "'"; }

// config.json only (the catalog is curated): what the planner cannot count is refused before any
// field is read, naming the standard fields it has and lacks.
void refuse_unknown_family(const FieldSource& f, const std::string& origin, const std::string& stated_type) {
    Family fam = classify_family(stated_type, f);
    if (fam.kind != FamilyKind::Refused) return;
    FieldReport fields = standard_fields(f);
    throw input_error(
        origin + ": model_type " + type_text(stated_type) + " is " + fam.what +
            ", which the planner does not model; fields found: " + joined(fields.used) +
            (fields.missing.empty() ? "" : "; missing for a transformer decoder: " + joined(fields.missing)),
        kUnknownAdvice);
}

// A family without rules is read as a llama-style decoder: the plan says so, and a lacking field
// is named with the ones that were found.
void note_generic_family(const FieldSource& f, const std::string& origin, const std::string& stated_type,
                         const Required& req, ModelArch& m) {
    if (classify_family(stated_type, f).kind != FamilyKind::Generic) return;
    FieldReport fields = standard_fields(f);
    const std::string type = type_text(stated_type);
    if (!req.missing.empty())
        throw input_error(origin + ": model_type " + type +
                              " has no rules in the planner and is read as a llama-style decoder, which needs " +
                              joined(req.missing) + " (missing); fields found: " + joined(fields.used),
                          kUnknownAdvice);
    m.notes.push_back("model_type " + type +
                      " has no rules in the planner: read as a llama-style decoder (RMSNorm, gated MLP; "
                      "biases and tied embeddings only where attention_bias, mlp_bias, tie_word_embeddings say "
                      "so) from " +
                      joined(fields.used) + "; check the parameter count against the model card");
}

void lay_out(const std::string& origin, Quantization& q, ModelArch& m) {
    lay_out_weights(m, q, origin);
    m.quant = std::make_shared<const Quantization>(std::move(q));
}

bool has_wrapper(const FieldSource& f) { return f.object && (f.object("text_config") || f.object("llm_config")); }

ModelArch arch_at_depth(const FieldSource& f, const std::string& origin, int depth, bool config_json) {
    ModelArch m;
    Required req{f, origin, {}};
    m.model_type = to_lower(f.text("model_type").value_or(""));
    const std::string stated_type = m.model_type;
    // A multimodal model (llava, mllama, gemma3...) states its own model_type and keeps the
    // language model in text_config; a family the planner reads is taken as it stands.
    const bool wrapped = config_json && !m.model_type.empty() && has_wrapper(f) &&
                         classify_family(m.model_type, f).kind == FamilyKind::Generic;
    if (m.model_type.empty() || wrapped) {
        // A multimodal wrapper keeps the language model in text_config (InternVL: llm_config).
        for (const char* wrapper : {"text_config", "llm_config"})
            if (f.object)
                if (auto t = f.object(wrapper)) {
                    if (depth >= kMaxWrapperDepth)
                        throw input_error(origin + ": " + wrapper + " nested more than " +
                                              std::to_string(kMaxWrapperDepth) + " levels deep",
                                          kConfigAdvice);
                    ModelArch inner = arch_at_depth(*t, origin, depth + 1, config_json);
                    // The wrapper states the quantization of the whole checkpoint (and its torch_dtype).
                    if (!inner.quant && !inner.is_fixed())
                        if (auto q = read_quantization_config(f, origin)) lay_out(origin, *q, inner);
                    if (config_json && f.object("vision_config"))
                        inner.notes.push_back("the vision tower (vision_config of " +
                                              (stated_type.empty() ? std::string("the wrapper") : stated_type) +
                                              ") is not counted: the plan is for " + wrapper + " only");
                    return inner;
                }
        m.model_type = "llama";
    }
    if (m.model_type == "fixed") {
        m.fixed_params = req.integer({"num_parameters"}, kParamsRule);
        if (!req.missing.empty() || m.fixed_params <= 0)
            throw input_error(origin + ": a fixed model needs num_parameters > 0", kConfigAdvice);
        return m;
    }
    if (config_json) refuse_unknown_family(f, origin, stated_type);
    // The order of the reads is the order fields are checked in, so the first bad one is reported.
    read_core_sizes(req, f, origin, m);
    read_layer_options(f, origin, m);
    read_ffn(req, f, origin, m);
    read_experts(req, f, origin, m);
    read_head_dims(req, f, origin, m);
    m.qk_norm = m.model_type == "qwen3" || m.model_type == "qwen3_moe";  // modeling_qwen3: q_norm, k_norm
    read_sliding_window(f, origin, m);
    std::optional<Quantization> quant = read_quantization_config(f, origin);
    if (config_json) note_generic_family(f, origin, stated_type, req, m);
    check_consistent(req, origin, m);
    check_plausible_size(origin, m);
    if (quant) lay_out(origin, *quant, m);  // module by module, once the shapes are known
    return m;
}

}  // namespace

ModelArch arch_from_fields(const FieldSource& f, const std::string& origin) {
    return arch_at_depth(f, origin, 0, false);
}

ModelArch parse_hf_config(std::string_view text, const std::string& origin) {
    check_json_nesting(text, origin);
    json j;
    try {
        j = json::parse(text);
    } catch (const json::exception& e) {  // parse_error, or out_of_range for 1e999
        throw input_error(origin + ": not valid JSON (" + e.what() + ")",
                          "pass the model's config.json as downloaded from its repository");
    }
    if (!j.is_object()) throw input_error(origin + ": config.json must be a JSON object", kConfigAdvice);
    ModelArch m = arch_at_depth(json_fields(std::make_shared<const json>(std::move(j))), origin, 0, true);
    if (m.key.empty()) m.key = origin;
    if (m.name.empty()) m.name = origin;
    m.source = origin;
    return m;
}

ModelArch load_hf_config(const std::string& path) { return parse_hf_config(read_input_file(path, "--config"), path); }

}  // namespace gpuvet
