#include "plan/model_catalog.hpp"

#include <algorithm>
#include <toml++/toml.h>

#include "core/error.hpp"
#include "core/text_limits.hpp"
#include "core/strings.hpp"
#include "plan/hf_config.hpp"
#include "plan/vision_arch.hpp"
#include "specs/toml_input.hpp"

namespace gpuvet::embedded {
std::string_view models_toml();
}

namespace gpuvet {

namespace {
const char* const kCatalogAdvice =
    "each model is a [[model]] table with a key and HF config fields, as in data/models.toml";
}  // namespace

namespace {

FieldSource toml_fields(const toml::table* t) {
    FieldSource f;
    f.has = [t](std::string_view k) { return t->get(k) != nullptr; };
    f.number = [t](std::string_view k) -> std::optional<double> { return (*t)[k].value<double>(); };
    f.boolean = [t](std::string_view k) -> std::optional<bool> {
        if (auto* n = t->get(k); n && n->is_boolean()) return n->value<bool>();
        return std::nullopt;
    };
    f.text = [t](std::string_view k) -> std::optional<std::string> {
        if (auto* n = t->get(k); n && n->is_string()) return n->value<std::string>();
        return std::nullopt;
    };
    f.object = [t](std::string_view k) -> std::optional<FieldSource> {
        if (auto* n = t->get(k); n && n->is_table()) return toml_fields(n->as_table());
        return std::nullopt;
    };
    f.numbers = [t](std::string_view k) -> std::optional<std::vector<double>> {
        auto* a = t->get_as<toml::array>(k);
        if (!a) return std::nullopt;
        std::vector<double> v;
        for (auto& x : *a) {
            auto d = x.value<double>();
            if (!d || x.is_boolean()) return std::nullopt;
            v.push_back(*d);
        }
        return v;
    };
    f.texts = [t](std::string_view k) -> std::optional<std::vector<std::string>> {
        auto* a = t->get_as<toml::array>(k);
        if (!a) return std::nullopt;
        std::vector<std::string> v;
        for (auto& x : *a) {
            if (!x.is_string()) return std::nullopt;
            v.push_back(*x.value<std::string>());
        }
        return v;
    };
    f.keys = [t]() {
        std::vector<std::string> v;
        for (auto& [k, node] : *t) v.emplace_back(k.str());
        return v;
    };
    return f;
}

std::string compact(std::string_view s) {
    std::string out;
    for (char c : to_lower(s))
        if (c != ' ' && c != '-' && c != '_' && c != '.' && c != '/') out += c;
    return out;
}

std::vector<std::string> names_of(const ModelArch& m) {
    std::vector<std::string> v{m.key, m.name};
    v.insert(v.end(), m.aliases.begin(), m.aliases.end());
    return v;
}

}  // namespace

ModelCatalog ModelCatalog::embedded() { return parse(embedded::models_toml(), "data/models.toml"); }

ModelCatalog ModelCatalog::parse(std::string_view text, const std::string& origin) {
    toml::table doc = parse_toml_document(text, origin, kCatalogAdvice);
    ModelCatalog cat;
    auto* arr = doc["model"].as_array();
    if (!arr) throw input_error(origin + ": no [[model]] entries", kCatalogAdvice);
    for (auto& node : *arr) {
        auto* t = node.as_table();
        if (!t) throw input_error(origin + ": [[model]] must be a table", kCatalogAdvice);
        auto key = (*t)["key"].value<std::string>();
        std::string where = origin + ":" + std::to_string(t->source().begin.line);
        if (!key || key->empty()) throw input_error(where + ": [[model]] without key", kCatalogAdvice);
        std::string type = (*t)["model_type"].value_or(std::string());
        ModelArch m = is_vision_model_type(type) ? vision_model(toml_fields(t), type, where + " (" + *key + ")")
                                                 : arch_from_fields(toml_fields(t), where + " (" + *key + ")");
        m.key = *key;
        m.name = (*t)["name"].value_or(*key);
        m.source = (*t)["source"].value_or(std::string());
        if (auto* p = t->get("published_params"); p && p->is_integer()) m.published_params = *p->value<std::int64_t>();
        if (auto* a = (*t)["aliases"].as_array())
            for (auto& x : *a)
                if (auto s = x.value<std::string>()) m.aliases.push_back(*s);
        cat.models_.push_back(std::move(m));
    }
    return cat;
}

const ModelArch& ModelCatalog::find(std::string_view query) const& {
    std::string q = compact(query);
    for (auto& m : models_)
        for (auto& n : names_of(m))
            if (compact(n) == q) return m;
    auto near = closest(query);
    std::string list;
    for (auto& s : near) list += (list.empty() ? "" : ", ") + s;
    throw input_error("unknown model '" + std::string(query) + "'" + (list.empty() ? "" : "; closest: " + list),
                      "run 'gpuvet plan --list-models', or pass --config config.json or --params 7B");
}

std::vector<std::string> ModelCatalog::closest(std::string_view query, std::size_t n) const {
    std::string q = compact(query);
    std::vector<std::pair<std::size_t, std::string>> scored;
    for (auto& m : models_) {
        std::size_t best = SIZE_MAX;
        for (auto& name : names_of(m)) {
            std::string c = compact(name);
            std::size_t d = edit_distance(q, c);
            // A query that is a part of a name ("llama3") is close to it.
            if (!q.empty() && c.find(q) != std::string::npos) d = std::min(d, c.size() - q.size());
            best = std::min(best, d);
        }
        scored.emplace_back(best, m.key);
    }
    std::stable_sort(scored.begin(), scored.end(), [](auto& a, auto& b) { return a.first < b.first; });
    std::vector<std::string> out;
    for (auto& s : scored) {
        if (out.size() >= n) break;
        out.push_back(s.second);
    }
    return out;
}

}  // namespace gpuvet
