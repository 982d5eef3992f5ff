#include "plan/quantization.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <map>

#include "core/error.hpp"
#include "plan/model_arch.hpp"

namespace gpuvet {

double WeightFormat::bits(std::int64_t in, std::int64_t out) const {
    const double i = double(in), o = double(out);
    double b = i * o * weight_bits + o * row_bits + i * column_bits + tensor_bits;
    if (group > 0) b += o * double((in + group - 1) / group) * group_bits;
    if (block_rows > 0 && block_cols > 0)
        b += double((out + block_rows - 1) / block_rows) * double((in + block_cols - 1) / block_cols) * block_bits;
    return b;
}

bool ModulePatterns::matches(std::string_view name, bool specific) const {
    if (names_class && !specific) return true;
    for (std::size_t k = 0; k < text.size(); ++k) {
        const std::string& t = text[k];
        const auto& re_k = k < re.size() ? re[k] : std::nullopt;
        switch (how) {
            case NameMatch::Substring:
                if (name.find(t) != std::string_view::npos) return true;
                break;
            case NameMatch::PrefixOrSuffix:
                if (re_k ? re_k->match_start(name) : name.substr(0, t.size()) == t) return true;
                if (name.size() >= t.size() && name.substr(name.size() - t.size()) == t) return true;
                break;
            case NameMatch::ExactOrRegex:
                if (re_k ? re_k->match_start(name) : name == t) return true;
                break;
            case NameMatch::Regex:
                if (re_k ? re_k->match_start(name) : name.substr(0, t.size()) == t) return true;
                break;
        }
    }
    return false;
}

double Quantization::weight_bytes() const {
    double b = 0;
    for (auto& p : parts) b += p.bytes;
    return b;
}

std::int64_t Quantization::quantized_params() const {
    std::int64_t n = 0;
    for (auto& p : parts)
        if (p.quantized()) n += p.params;
    return n;
}

namespace {

enum class Family { Llama, Mixtral, QwenMoe, Gpt2, NeoX, Opt, Phi, Bert };

Family family_of(const ModelArch& m) {
    const std::string& t = m.model_type;
    if (t == "mixtral") return Family::Mixtral;
    if (t == "qwen2_moe") return Family::QwenMoe;
    if (t == "gpt2" || t == "gpt_bigcode") return Family::Gpt2;
    if (t == "gpt_neox") return Family::NeoX;
    if (t == "opt") return Family::Opt;
    if (t == "phi") return Family::Phi;
    if (t == "bert" || t == "roberta" || t == "xlm-roberta") return Family::Bert;
    return Family::Llama;
}

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

bool is_attention(std::string_view n) {
    for (const char* a :
         {"q_proj", "k_proj", "v_proj", "o_proj", "q_a_proj", "q_b_proj", "kv_a_proj_with_mqa", "kv_b_proj"})
        if (n == a) return true;
    return false;
}

// The module's name inside its block, as the family's transformers modeling file names it.
std::string relative_name(Family f, const std::string& linear, std::int64_t expert) {
    if (starts_with(linear, "experts.")) {
        std::string base = linear.substr(8);
        if (f == Family::Mixtral)
            return fmt::format("block_sparse_moe.experts.{}.{}", expert,
                               base == "gate_proj" ? "w1"
                               : base == "up_proj" ? "w3"
                                                   : "w2");
        return fmt::format("mlp.experts.{}.{}", expert, base);
    }
    if (starts_with(linear, "shared_experts."))
        return (f == Family::QwenMoe ? "mlp.shared_expert." : "mlp.shared_experts.") + linear.substr(15);
    const bool attn = is_attention(linear);
    const bool up = linear == "up_proj" || linear == "gate_proj";
    switch (f) {
        case Family::Gpt2:
            return attn ? (linear == "o_proj" ? "attn.c_proj" : "attn.c_attn") : up ? "mlp.c_fc" : "mlp.c_proj";
        case Family::NeoX:
            return attn ? (linear == "o_proj" ? "attention.dense" : "attention.query_key_value")
                   : up ? "mlp.dense_h_to_4h"
                        : "mlp.dense_4h_to_h";
        case Family::Opt:
            return attn ? (linear == "o_proj" ? "self_attn.out_proj" : "self_attn." + linear) : up ? "fc1" : "fc2";
        case Family::Phi:
            return attn ? (linear == "o_proj" ? "self_attn.dense" : "self_attn." + linear) : up ? "mlp.fc1" : "mlp.fc2";
        case Family::Bert:
            if (linear == "q_proj") return "attention.self.query";
            if (linear == "k_proj") return "attention.self.key";
            if (linear == "v_proj") return "attention.self.value";
            if (linear == "o_proj") return "attention.output.dense";
            return up ? "intermediate.dense" : "output.dense";
        default: return (attn ? "self_attn." : "mlp.") + linear;
    }
}

std::string layer_prefix(Family f, const ModelArch& m, std::int64_t layer) {
    switch (f) {
        case Family::Gpt2: return fmt::format("transformer.h.{}.", layer);
        case Family::NeoX: return fmt::format("gpt_neox.layers.{}.", layer);
        case Family::Opt: return fmt::format("model.decoder.layers.{}.", layer);
        case Family::Bert:
            return fmt::format("{}.encoder.layer.{}.", m.model_type == "bert" ? "bert" : "roberta", layer);
        default: return fmt::format("model.layers.{}.", layer);
    }
}

// Dense MLPs sit in the first layers, experts in the last (DeepSeek's first_k_dense_replace).
std::pair<std::int64_t, std::int64_t> layer_range(const ModelArch& m, const LinearShape& l) {
    const bool moe_part = starts_with(l.name, "experts.") || starts_with(l.name, "shared_experts.");
    if (moe_part) return {m.layers - l.layers, m.layers};
    return {0, l.layers};
}

// "layers 0, 125", "layers 1–124", "all 126 layers"
std::string layer_text(const std::vector<std::int64_t>& layers, std::int64_t total) {
    if (std::int64_t(layers.size()) == total) return fmt::format("all {} layers", total);
    std::vector<std::string> runs;
    for (std::size_t i = 0; i < layers.size();) {
        std::size_t j = i;
        while (j + 1 < layers.size() && layers[j + 1] == layers[j] + 1) ++j;
        if (j == i) runs.push_back(std::to_string(layers[i]));
        else if (j == i + 1) runs.push_back(fmt::format("{}, {}", layers[i], layers[j]));
        else runs.push_back(fmt::format("{}–{}", layers[i], layers[j]));
        i = j + 1;
    }
    const std::size_t shown = std::min<std::size_t>(runs.size(), 8);
    std::string out = std::string(layers.size() == 1 ? "layer " : "layers ");
    for (std::size_t i = 0; i < shown; ++i) out += (i ? ", " : "") + runs[i];
    if (shown < runs.size()) out += fmt::format(", … ({} layers in all)", layers.size());
    return out;
}

// A part being gathered: which linear sits in which layers, how many modules per layer.
struct Gather {
    WeightPart part;
    std::vector<std::string> order;                                     // linears as first seen
    std::map<std::string, std::map<std::int64_t, std::int64_t>> where;  // linear → layer → modules
};

std::string describe(const Gather& g, const ModelArch& m) {
    // Linears with the same layers (and modules per layer) share one entry.
    std::vector<std::pair<std::vector<std::string>, const std::map<std::int64_t, std::int64_t>*>> groups;
    std::vector<std::string> entries;
    for (auto& name : g.order) {
        if (name == "lm_head") continue;  // the output head is not in a block: named last
        const auto& w = g.where.at(name);
        auto it = std::find_if(groups.begin(), groups.end(), [&](auto& e) { return *e.second == w; });
        if (it == groups.end()) groups.push_back({{name}, &w});
        else it->first.push_back(name);
    }
    for (auto& [names, w] : groups) {
        std::vector<std::int64_t> layers;
        std::int64_t modules = 0;
        for (auto& [l, n] : *w) {
            layers.push_back(l);
            modules += n;
        }
        std::string e = fmt::format("{}: {}", fmt::join(names, ", "), layer_text(layers, m.layers));
        if (modules != std::int64_t(layers.size())) e += fmt::format(" ({} modules each)", modules);
        entries.push_back(e);
    }
    if (g.where.count("lm_head")) entries.push_back("lm_head");
    return fmt::format("{}", fmt::join(entries, "; "));
}

// What reading the config says about one module: its format, or why it is left unconverted.
struct Decision {
    const WeightFormat* format = nullptr;
    std::string why;
};

Decision decide(const Quantization& q, const std::string& name, const std::string& in_block) {
    if (q.not_converted.matches(name)) return {nullptr, q.not_converted_field};
    // A name or regex names a module more closely than a class: compressed-tensors tries those first.
    for (bool specific : {true, false})
        for (auto& r : q.rules)
            if (r.modules.matches(name, specific)) return {r.format ? &*r.format : nullptr, r.from};
    if (q.only_rules) return {nullptr, "no config_groups target"};
    if (!in_block.empty() && !q.block_modules.empty() &&
        std::find(q.block_modules.begin(), q.block_modules.end(), in_block) == q.block_modules.end())
        return {nullptr, "not in modules_in_block_to_quantize"};
    return {&q.format, ""};
}

// Bounds on the names matched per config: a real model has at most a few hundred thousand modules.
constexpr double kMaxModules = 2e6, kMaxMatchWork = 2e8;

void check_work(const ModelArch& m, const Quantization& q, const std::string& origin) {
    double modules = 0;
    for (auto& l : block_linears(m)) {
        auto [a, b] = layer_range(m, l);
        modules += double(b - a) * (starts_with(l.name, "experts.") ? double(l.count_per_layer) : 1.0);
    }
    double patterns = double(q.not_converted.text.size()) + 1;
    for (auto& r : q.rules) patterns += double(r.modules.text.size()) + 1;
    if (modules > kMaxModules || modules * patterns > kMaxMatchWork)
        throw input_error(fmt::format("{}: quantization_config: {:.0f} modules to match against {:.0f} patterns "
                                      "is more than the planner matches",
                                      origin, modules, patterns),
                          "plan the unquantized model (drop quantization_config) and pick --dtype, or give "
                          "--params with the checkpoint's size");
}

}  // namespace

std::string module_name(const ModelArch& m, const std::string& linear, std::int64_t layer, std::int64_t expert) {
    const Family f = family_of(m);
    return layer_prefix(f, m, layer) + relative_name(f, linear, expert);
}

void lay_out_weights(const ModelArch& m, Quantization& q, const std::string& origin) {
    check_work(m, q, origin);
    const Family f = family_of(m);
    std::vector<Gather> parts;
    std::map<std::string, std::size_t> index;  // part key → position
    auto part_for = [&](const Decision& d) -> Gather& {
        std::string key = d.format ? "q:" + d.format->dtype + "|" + d.format->scales : "u:" + d.why;
        auto it = index.find(key);
        if (it != index.end()) return parts[it->second];
        Gather g;
        g.part.kind = d.format ? WeightPart::Quantized : WeightPart::Unconverted;
        g.part.dtype = d.format ? d.format->dtype : q.dtype;
        g.part.why = d.format ? d.format->scales : d.why;
        index[key] = parts.size();
        parts.push_back(std::move(g));
        return parts.back();
    };
    std::int64_t linear_params = 0;
    for (auto& l : block_linears(m)) {
        const bool routed = starts_with(l.name, "experts.");
        const std::int64_t experts = routed ? l.count_per_layer : 1;
        const std::int64_t copies = routed ? 1 : l.count_per_layer;  // shared experts: one wider MLP
        auto [first, last] = layer_range(m, l);
        for (std::int64_t i = first; i < last; ++i) {
            const std::string prefix = layer_prefix(f, m, i);
            for (std::int64_t e = 0; e < experts; ++e) {
                const std::string rel = relative_name(f, l.name, e);
                Decision d = decide(q, prefix + rel, rel);
                Gather& g = part_for(d);
                const std::int64_t params = l.in * l.out * copies;
                g.part.params += params;
                g.part.bytes +=
                    d.format ? d.format->bits(l.in, l.out) * double(copies) / 8 : double(params) * q.dtype_bytes;
                if (!g.where.count(l.name)) g.order.push_back(l.name);
                g.where[l.name][i] += 1;
            }
        }
        linear_params += l.in * l.out * l.count_per_layer * l.layers;
    }
    // GPTQ with lm_head: true quantizes the output head too; every other method keeps it.
    const bool head = !m.tied_embeddings && !m.encoder && m.vocab > 0;
    const std::int64_t head_params = head ? m.vocab * m.hidden : 0;
    if (head && q.lm_head) {
        Decision d = decide(q, "lm_head", "");  // not a block module: modules_in_block_to_quantize does not apply
        if (d.format) {
            Gather& g = part_for(d);
            g.part.params += head_params;
            g.part.bytes += d.format->bits(m.hidden, m.vocab) / 8;
            if (!g.where.count("lm_head")) g.order.push_back("lm_head");
            g.where["lm_head"][0] += 1;
            linear_params += head_params;
        }
    }
    // Quantized parts first, then what the config left unconverted.
    std::stable_partition(parts.begin(), parts.end(), [](const Gather& g) { return g.part.quantized(); });
    q.parts.clear();
    for (auto& g : parts) {
        g.part.modules = describe(g, m);
        q.parts.push_back(std::move(g.part));
    }
    WeightPart rest;
    rest.kind = WeightPart::Rest;
    rest.dtype = q.dtype;
    rest.params = parameter_count(m) - linear_params;
    rest.bytes = double(rest.params) * q.dtype_bytes;
    std::vector<std::string> what = {"embeddings"};
    if (head && !q.lm_head) what.push_back("lm_head");
    what.push_back("norms");
    if (m.qkv_bias || m.o_bias || m.mlp_bias) what.push_back("biases");
    if (m.is_moe()) what.push_back("routers");
    if (m.pooler) what.push_back("pooler");
    rest.modules = fmt::format("{}", fmt::join(what, ", "));
    rest.why = "not quantized by " + q.method;
    q.parts.push_back(std::move(rest));
}

}  // namespace gpuvet
