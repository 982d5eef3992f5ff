#include "train/baselines.hpp"

#include <cmath>
#include <toml++/toml.h>

#include "core/error.hpp"
#include "core/text_limits.hpp"
#include "specs/toml_input.hpp"

namespace gpuvet::embedded {
std::string_view train_baselines_toml();
}

namespace gpuvet {

namespace {

const char* const kAdvice =
    "each baseline is a [[baseline]] table with model, precision, gpus, value, unit, stack, method and source, as "
    "in data/train_baselines.toml";

struct Row {
    const toml::table& t;
    std::string where;

    std::string text(std::string_view k, bool required) const {
        const toml::node* n = t.get(k);
        if (!n) {
            if (required) throw input_error(where + ": missing '" + std::string(k) + "'", kAdvice);
            return {};
        }
        auto s = n->value<std::string>();
        if (!n->is_string() || s->empty() || s->size() > 2000)
            throw input_error(where + ": '" + std::string(k) + "' must be a non-empty string", kAdvice);
        return *s;
    }
    std::optional<std::int64_t> integer(std::string_view k, std::int64_t lo, std::int64_t hi) const {
        const toml::node* n = t.get(k);
        if (!n) return std::nullopt;
        auto v = n->value<std::int64_t>();
        if (!n->is_integer() || *v < lo || *v > hi)
            throw input_error(where + ": '" + std::string(k) + "' must be a whole number from " + std::to_string(lo) +
                                  " to " + std::to_string(hi),
                              kAdvice);
        return v;
    }
};

TrainBaseline row_of(const toml::table& t, const std::string& where) {
    Row r{t, where};
    TrainBaseline b;
    if (auto g = r.text("gpu", false); !g.empty()) b.gpu = g;
    b.gpu_name = r.text("gpu_name", true);
    b.model = r.text("model", true);
    b.precision = r.text("precision", true);
    if (auto v = r.integer("batch", 1, 1 << 20)) b.batch = int(*v);
    b.gpus = int(r.integer("gpus", 1, 4096).value_or(1));
    const toml::node* v = t.get("value");
    if (!v || !(v->is_integer() || v->is_floating_point()))
        throw input_error(where + ": 'value' must be a number", kAdvice);
    b.value = *v->value<double>();
    if (!std::isfinite(b.value) || b.value <= 0) throw input_error(where + ": 'value' must be above 0", kAdvice);
    b.unit = r.text("unit", true);
    b.stack = r.text("stack", true);
    b.stack_date = r.text("stack_date", true);
    b.method = r.text("method", true);
    b.method_text = r.text("method_text", false);
    b.source = r.text("source", true);
    if (auto e = r.text("excluded", false); !e.empty()) b.excluded = e;
    b.note = r.text("note", false);
    return b;
}

bool judgeable(const TrainBaseline& b, std::string_view model, std::string_view precision, std::string_view method,
               int gpus) {
    return !b.excluded && b.gpu && b.model == model && b.precision == precision && b.method == method && b.gpus == gpus;
}

}  // namespace

const TrainBaselines& TrainBaselines::embedded() {
    static const TrainBaselines t = parse(embedded::train_baselines_toml(), "data/train_baselines.toml");
    return t;
}

TrainBaselines TrainBaselines::parse(std::string_view text, const std::string& origin) {
    toml::table doc = parse_toml_document(text, origin, kAdvice);
    auto* arr = doc["baseline"].as_array();
    if (!arr || arr->empty()) throw input_error(origin + ": no [[baseline]] entries", kAdvice);
    TrainBaselines out;
    for (auto& node : *arr) {
        auto* t = node.as_table();
        if (!t) throw input_error(origin + ": [[baseline]] must be a table", kAdvice);
        out.rows_.push_back(row_of(*t, origin + ":" + std::to_string(t->source().begin.line)));
    }
    return out;
}

const TrainBaseline* TrainBaselines::find(std::string_view gpu, std::string_view model, std::string_view precision,
                                          std::string_view method, int gpus) const {
    const TrainBaseline* best = nullptr;
    for (const auto& b : rows_)
        if (judgeable(b, model, precision, method, gpus) && *b.gpu == gpu && (!best || b.stack_date > best->stack_date))
            best = &b;
    return best;
}

std::vector<const TrainBaseline*> TrainBaselines::candidates(std::string_view model, std::string_view precision,
                                                             std::string_view method, int gpus) const {
    std::vector<const TrainBaseline*> out;
    for (const auto& b : rows_) {
        if (!judgeable(b, model, precision, method, gpus)) continue;
        if (find(*b.gpu, model, precision, method, gpus) == &b) out.push_back(&b);
    }
    return out;
}

}  // namespace gpuvet
