#include "plan/hf_config.hpp"

#include <cmath>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <vector>

#include "core/error.hpp"
#include "core/strings.hpp"

namespace gpuvet {

namespace {

using nlohmann::json;

FieldSource json_fields(std::shared_ptr<const json> j) {
    FieldSource f;
    auto find = [j](std::string_view k) -> const json* {
        auto it = j->find(std::string(k));
        return (it == j->end() || it->is_null()) ? nullptr : &*it;
    };
    f.integer = [find](std::string_view k) -> std::optional<std::int64_t> {
        auto* v = find(k);
        if (!v) return std::nullopt;
        if (v->is_number_integer()) return v->get<std::int64_t>();
        if (v->is_number_float()) {
            // Whole numbers written as 4096.0; anything outside int64 is not a size (and casting it
            // would be undefined).
            double d = v->get<double>();
            if (std::isfinite(d) && std::fabs(d) < 9.0e18 && d == std::floor(d)) return std::int64_t(d);
        }
        return std::nullopt;
    };
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
    f.object = [find](std::string_view k) -> std::optional<FieldSource> {
        auto* v = find(k);
        if (!v || !v->is_object()) return std::nullopt;
        return json_fields(std::make_shared<const json>(*v));
    };
    return f;
}

// No hyper-parameter of a real model comes near this; larger values would only overflow the
// arithmetic before the plausibility checks at the end of arch_from_fields run.
// What to do about a config that cannot be read as a model.
constexpr const char* kConfigAdvice =
    "pass the model's config.json as published in its repository, or give a bare count with --params";

constexpr std::int64_t kFieldLimit = std::int64_t(1) << 40;

// Collects the names of required fields that are absent, so one error names them all.
struct Required {
    const FieldSource& f;
    const std::string& origin;
    std::vector<std::string> missing;
    std::int64_t integer(std::initializer_list<std::string_view> names) {
        for (auto n : names)
            if (auto v = f.integer(n)) {
                if (*v < 0) throw input_error(origin + ": field " + std::string(n) + " is negative", kConfigAdvice);
                if (*v > kFieldLimit) throw input_error(origin + ": field " + std::string(n) + " is implausibly large", kConfigAdvice);
                return *v;
            }
        missing.emplace_back(*names.begin());
        return 0;
    }
};

std::int64_t opt_int(const FieldSource& f, std::initializer_list<std::string_view> names, std::int64_t dflt) {
    for (auto n : names)
        if (auto v = f.integer(n)) {
            if (*v > kFieldLimit) throw input_error("config field " + std::string(n) + " is implausibly large", kConfigAdvice);
            return *v >= 0 ? *v : dflt;
        }
    return dflt;
}

void read_quantization(const FieldSource& f, ModelArch& m) {
    if (!f.object) return;
    auto q = f.object("quantization_config");
    if (!q) return;
    std::string method = to_lower(q->text("quant_method").value_or(""));
    m.quant_method = method;
    if (method == "bitsandbytes") {
        if (q->boolean("load_in_4bit").value_or(false)) {
            // NF4/FP4: 4 bits plus one absmax per 64 weights (fp32, or 8-bit with double
            // quantization plus an fp32 per 256 blocks). QLoRA paper, arXiv:2305.14314 §3.
            bool dq = q->boolean("bnb_4bit_use_double_quant").value_or(false);
            m.quantized_bits = dq ? 4.0 + 8.0 / 64 + 32.0 / (64 * 256) : 4.0 + 32.0 / 64;
        } else if (q->boolean("load_in_8bit").value_or(false)) {
            m.quantized_bits = 8.0 + 32.0 / 4096;  // LLM.int8(): int8 plus an fp32 scale per row
        }
    } else if (method == "gptq" || method == "awq") {
        double bits = double(opt_int(*q, {"bits", "w_bit"}, 4));
        double group = double(opt_int(*q, {"group_size", "q_group_size"}, 128));
        // fp16 scale and packed zero point per group.
        m.quantized_bits = bits + (group > 0 ? (16.0 + bits) / group : 0.0);
    } else if (method == "fp8" || method == "fbgemm_fp8" || method == "compressed-tensors") {
        m.quantized_bits = 8.0;
    } else if (!method.empty()) {
        double bits = double(opt_int(*q, {"bits"}, 0));
        if (bits > 0) m.quantized_bits = bits;
    }
}

}  // namespace

ModelArch arch_from_fields(const FieldSource& f, const std::string& origin) {
    ModelArch m;
    Required req{f, origin, {}};
    m.model_type = to_lower(f.text("model_type").value_or(""));
    if (m.model_type.empty()) {
        // A multimodal wrapper keeps the language model in text_config.
        if (f.object)
            if (auto t = f.object("text_config")) return arch_from_fields(*t, origin);
        m.model_type = "llama";
    }
    if (m.model_type == "fixed") {
        m.fixed_params = req.integer({"num_parameters"});
        if (!req.missing.empty() || m.fixed_params <= 0)
            throw input_error(origin + ": a fixed model needs num_parameters > 0", kConfigAdvice);
        return m;
    }
    const std::string& t = m.model_type;
    bool gpt2 = t == "gpt2";
    bool bert = t == "bert" || t == "roberta" || t == "xlm-roberta";

    m.hidden = req.integer({"hidden_size", "n_embd", "d_model"});
    m.layers = req.integer({"num_hidden_layers", "n_layer", "num_layers"});
    m.heads = req.integer({"num_attention_heads", "n_head"});
    m.vocab = req.integer({"vocab_size"});
    m.kv_heads = opt_int(f, {"num_key_value_heads", "n_head_kv", "num_kv_heads"}, m.heads);
    if (f.boolean("multi_query").value_or(false)) m.kv_heads = 1;  // GPTBigCode
    m.max_positions = opt_int(f, {"max_position_embeddings", "n_positions", "n_ctx"}, 0);

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
        m.type_vocab = opt_int(f, {"type_vocab_size"}, 2);
        m.pooler = true;
        m.embedding_norm = true;
    }
    if (t == "qwen2" || t == "qwen2_moe") m.qkv_bias = true;
    if (auto b = f.boolean("attention_bias")) m.qkv_bias = m.o_bias = *b;
    if (auto b = f.boolean("mlp_bias")) m.mlp_bias = *b;
    if (auto d = f.number("attention_dropout")) m.dropout = std::max(m.dropout, *d);
    if (auto d = f.number("hidden_dropout_prob")) m.dropout = *d;

    std::int64_t dflt_inter = (gpt2 || t == "gpt_bigcode") ? 4 * m.hidden : -1;
    m.intermediate = opt_int(f, {"intermediate_size", "n_inner", "ffn_dim"}, dflt_inter);
    if (m.intermediate < 0) {
        req.missing.emplace_back("intermediate_size");
        m.intermediate = 0;
    }
    m.tied_embeddings = f.boolean("tie_word_embeddings").value_or(gpt2 || t == "gpt_bigcode");

    // MoE: Mixtral (num_local_experts), Qwen-MoE (num_experts), DeepSeek (n_routed_experts).
    m.experts = opt_int(f, {"num_local_experts", "num_experts", "n_routed_experts"}, 0);
    if (m.experts > 0) {
        m.experts_per_token = opt_int(f, {"num_experts_per_tok", "top_k"}, 0);
        if (m.experts_per_token == 0) req.missing.emplace_back("num_experts_per_tok");
        m.moe_intermediate = opt_int(f, {"moe_intermediate_size"}, m.intermediate);
        m.shared_experts = opt_int(f, {"n_shared_experts"}, 0);
        m.shared_intermediate = opt_int(f, {"shared_expert_intermediate_size"}, 0);
        if (m.shared_intermediate > 0 && m.shared_experts == 0) m.shared_experts = 1;
        m.first_dense_layers = opt_int(f, {"first_k_dense_replace"}, 0);
        m.router_bias = t == "deepseek_v3";
    }
    // Multi-head latent attention.
    m.kv_lora_rank = opt_int(f, {"kv_lora_rank"}, 0);
    if (m.kv_lora_rank > 0) {
        m.q_lora_rank = opt_int(f, {"q_lora_rank"}, 0);
        m.qk_nope_head_dim = req.integer({"qk_nope_head_dim"});
        m.qk_rope_head_dim = req.integer({"qk_rope_head_dim"});
        m.v_head_dim = req.integer({"v_head_dim"});
        m.head_dim = m.qk_nope_head_dim + m.qk_rope_head_dim;
    }
    if (m.heads > 0 && m.head_dim == 0) m.head_dim = opt_int(f, {"head_dim"}, m.hidden / m.heads);

    // Sliding windows: Mistral sets sliding_window; Qwen2 only uses it when use_sliding_window is
    // true, and then only above max_window_layers.
    if (auto w = f.integer("sliding_window"); w && *w > 0) {
        bool used = f.boolean("use_sliding_window").value_or(t != "qwen2" && t != "qwen2_moe");
        if (used) {
            m.sliding_window = *w;
            std::int64_t from = opt_int(f, {"max_window_layers"}, 0);
            m.sliding_layers = (t == "qwen2" || t == "qwen2_moe") ? std::max<std::int64_t>(0, m.layers - from) : m.layers;
        }
    }
    read_quantization(f, m);

    if (!req.missing.empty()) {
        std::string list;
        for (auto& s : req.missing) list += (list.empty() ? "" : ", ") + s;
        throw input_error(origin + ": config is missing " + list,
                          "add the field(s) from the model's config.json, or use --params for a bare count");
    }
    if (m.hidden == 0 || m.layers == 0 || m.heads == 0 || m.vocab == 0)
        throw input_error(origin + ": hidden_size, num_hidden_layers, num_attention_heads and vocab_size must be > 0",
                          kConfigAdvice);
    if (m.kv_heads == 0 || m.heads % m.kv_heads != 0)
        throw input_error(origin + ": num_key_value_heads (" + std::to_string(m.kv_heads) +
                          ") must divide num_attention_heads (" + std::to_string(m.heads) + ")",
                          kConfigAdvice);
    if (m.experts > 0 && m.experts_per_token > m.experts)
        throw input_error(origin + ": num_experts_per_tok is larger than the number of experts", kConfigAdvice);
    // Sizes beyond any real model would only overflow the arithmetic.
    const std::int64_t big = std::int64_t(1) << 24;
    for (auto v : {m.hidden, m.layers, m.heads, m.kv_heads, m.head_dim, m.intermediate, m.experts,
                   m.moe_intermediate, m.kv_lora_rank, m.q_lora_rank, m.qk_nope_head_dim,
                   m.qk_rope_head_dim, m.v_head_dim, m.shared_experts, m.shared_intermediate})
        if (v > big) throw input_error(origin + ": a size field is implausibly large (> 16777216)", kConfigAdvice);
    if (m.vocab > (std::int64_t(1) << 28) || m.max_positions > (std::int64_t(1) << 32))
        throw input_error(origin + ": vocab_size or max_position_embeddings is implausibly large", kConfigAdvice);
    // The parameter count, estimated in floating point, must stay far inside 64-bit integers.
    double experts = double(std::max<std::int64_t>(1, m.experts));
    double ffn = double(std::max(m.intermediate, m.moe_intermediate)) + double(m.shared_intermediate);
    double estimate = double(m.layers) * (4.0 * double(m.hidden) * double(m.hidden) +
                                          3.0 * double(m.hidden) * ffn * experts) +
                      double(m.vocab) * double(m.hidden);
    if (estimate > 1e15)
        throw input_error(origin + ": the config describes an implausibly large model (~" +
                          std::to_string(estimate / 1e12) + " trillion parameters)",
                          kConfigAdvice);
    return m;
}

ModelArch parse_hf_config(std::string_view text, const std::string& origin) {
    json j;
    try {
        j = json::parse(text);
    } catch (const json::exception& e) {  // parse_error, or out_of_range for 1e999
        throw input_error(origin + ": not valid JSON (" + e.what() + ")",
                          "pass the model's config.json as downloaded from its repository");
    }
    if (!j.is_object()) throw input_error(origin + ": config.json must be a JSON object", kConfigAdvice);
    ModelArch m = arch_from_fields(json_fields(std::make_shared<const json>(std::move(j))), origin);
    if (m.key.empty()) m.key = origin;
    if (m.name.empty()) m.name = origin;
    m.source = origin;
    return m;
}

ModelArch load_hf_config(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw input_error("cannot read " + path, "check the path given to --config");
    std::stringstream ss;
    ss << in.rdbuf();
    return parse_hf_config(ss.str(), path);
}

}  // namespace gpuvet
