#include "plan/hf_family.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <string_view>

#include "core/strings.hpp"

namespace gpuvet {

namespace {

// The families hf_config.cpp has rules for (norm, MLP, biases, positions, experts, latent
// attention, windows), or whose layers are llama's exactly (mistral: + window, mixtral: + experts).
constexpr std::array<std::string_view, 15> kKnown = {
    "llama",    "mistral", "mixtral", "qwen2", "qwen2_moe", "deepseek_v3", "gpt2", "gpt_bigcode",
    "gpt_neox", "opt",     "phi",     "bert",  "roberta",   "xlm-roberta", "fixed"};

struct Refusal {
    std::string_view what;
    std::string_view types;  // separated by spaces
};

// HF model_type names (transformers' configuration_*.py) of architectures whose layers are not
// the decoder block the planner counts.
constexpr std::array<Refusal, 6> kRefused = {{
    {"a state-space / recurrent model (no attention layers or KV cache)",
     "mamba mamba2 falcon_mamba rwkv rwkv5 rwkv6 rwkv7 xlstm recurrent_gemma"},
    {"a hybrid of attention and state-space layers",
     "jamba zamba zamba2 bamba nemotron_h falcon_h1 granitemoehybrid lfm2"},
    {"an encoder-decoder",
     "t5 mt5 umt5 longt5 bart mbart pegasus pegasus_x marian m2m_100 nllb-moe fsmt prophetnet led blenderbot "
     "blenderbot-small plbart switch_transformers whisper seamless_m4t encoder-decoder speech-encoder-decoder "
     "vision-encoder-decoder speech_to_text bigbird_pegasus mvp t5gemma"},
    {"a vision or audio encoder with no language model",
     "vit deit beit swin swinv2 convnext convnextv2 resnet regnet efficientnet mobilenet_v1 mobilenet_v2 mobilevit "
     "dinov2 clip_vision_model siglip_vision_model sam detr yolos segformer dpt levit vit_mae wav2vec2 hubert wavlm"},
    {"a two-tower image-text model", "clip siglip siglip2 blip blip-2 align owlvit flava"},
    {"an encoder without rules here (bert, roberta and xlm-roberta are read)",
     "albert distilbert deberta deberta-v2 electra modernbert camembert mpnet longformer big_bird funnel xlnet"},
}};

// Whether `t` is one of the space-separated names.
bool listed(std::string_view names, std::string_view t) {
    while (!names.empty()) {
        std::size_t end = names.find(' ');
        if (names.substr(0, end) == t) return true;
        if (end == std::string_view::npos) break;
        names.remove_prefix(end + 1);
    }
    return false;
}

bool present(const FieldSource& f, std::string_view k) {
    return f.has ? f.has(k) : (f.number(k) || f.text(k) || f.boolean(k));
}

struct Standard {
    std::vector<std::string_view> names;  // the first is the one an error names
    bool required;
};
const std::vector<Standard>& standard() {
    // The aliases are the ones read_core_sizes / read_ffn / read_head_dims accept.
    static const std::vector<Standard> s = {
        {{"hidden_size", "n_embd", "d_model"}, true},
        {{"num_hidden_layers", "n_layer", "num_layers"}, true},
        {{"num_attention_heads", "n_head"}, true},
        {{"num_key_value_heads", "n_head_kv", "num_kv_heads"}, false},
        {{"head_dim"}, false},
        {{"intermediate_size", "n_inner", "ffn_dim"}, true},
        {{"vocab_size"}, true},
        {{"max_position_embeddings", "n_positions", "n_ctx"}, false},
        {{"tie_word_embeddings"}, false},
    };
    return s;
}

std::string value_text(const FieldSource& f, std::string_view k) {
    if (auto n = f.number(k)) return std::isfinite(*n) ? format_number(*n, 12) : "(not finite)";
    if (auto b = f.boolean(k)) return *b ? "true" : "false";
    return "(not a number)";
}

}  // namespace

Family classify_family(const std::string& t, const FieldSource& f) {
    if (std::find(kKnown.begin(), kKnown.end(), t) != kKnown.end()) return {FamilyKind::Known, ""};
    for (auto& r : kRefused)
        if (listed(r.types, t)) return {FamilyKind::Refused, std::string(r.what)};
    if (auto c = f.text("_class_name"))
        return {FamilyKind::Refused, "a diffusers component (_class_name " + *c + "), not a language model"};
    if (f.boolean("is_encoder_decoder").value_or(false))
        return {FamilyKind::Refused, "an encoder-decoder (is_encoder_decoder is true)"};
    for (const char* k : {"state_size", "ssm_state_size", "mamba_d_state", "d_state", "ssm_cfg"})
        if (present(f, k)) return {FamilyKind::Refused, "a state-space model (it states " + std::string(k) + ")"};
    if (present(f, "type_vocab_size"))
        return {FamilyKind::Refused,
                "an encoder with token types (type_vocab_size), BERT-like; bert, roberta and xlm-roberta are read"};
    return {FamilyKind::Generic, ""};
}

FieldReport standard_fields(const FieldSource& f) {
    FieldReport r;
    for (auto& s : standard()) {
        auto hit = std::find_if(s.names.begin(), s.names.end(), [&](std::string_view k) { return present(f, k); });
        if (hit != s.names.end()) r.used.push_back(std::string(*hit) + "=" + value_text(f, *hit));
        else if (s.required) r.missing.emplace_back(s.names.front());
    }
    return r;
}

std::string joined(const std::vector<std::string>& names) {
    std::string s;
    for (auto& n : names) s += (s.empty() ? "" : ", ") + n;
    return s.empty() ? "none" : s;
}

}  // namespace gpuvet
