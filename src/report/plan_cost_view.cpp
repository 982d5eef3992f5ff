#include "report/plan_cost_view.hpp"

#include <algorithm>
#include <fmt/format.h>

#include "core/strings.hpp"
#include "report/text_layout.hpp"

namespace gpuvet {

namespace {

constexpr const char* kPricesHint =
    "--prices FILE (price per card-hour) gives the cheapest and the fastest configuration for this job";
constexpr const char* kBudgetHint =
    "--tokens N or --steps N gives the job's hours and money, and its cheapest and fastest configuration";
constexpr std::size_t kUnpricedShown = 6;

std::string hint(const PlanView& v) {
    bool sized = v.budget && v.budget->tokens > 0;
    if (sized && !v.prices) return kPricesHint;
    if (!sized && v.prices) return kBudgetHint;
    return "";
}

std::string name_of(const CostOption& c) {
    return fmt::format("{}× {}{}", c.cards, c.spec->name, c.rates_source == "measured" ? "*" : "");
}

void option_line(std::ostream& o, const char* label, const CostOption& c, const std::string& why,
                 const std::string& currency) {
    o << fmt::format("  {:<9} {:<26} {:>10} {:>12} {:<4} {:>9} tok/s\n", label, name_of(c),
                     format_number(c.hours, 3) + " h", format_fixed(c.cost, 2), currency,
                     format_number(c.tokens_per_s));
    std::string text = why + (c.nvlink_missing ? "; NVLink MISSING: the plan shards across PCIe-only cards" : "");
    o << wrap("            ", text, 100, 12) << "\n";
}

Json option_json(const CostOption& c, const std::string& why, const std::string& currency) {
    Json j{{"sku", c.spec->key},
           {"name", c.spec->name},
           {"cards", c.cards},
           {"tokens_per_s", c.tokens_per_s},
           {"hours", c.hours},
           {"cost", c.cost},
           {"currency", currency},
           {"price_per_card_hour", c.price_per_card_hour},
           {"rates_source", c.rates_source},
           {"nvlink_missing", c.nvlink_missing},
           {"comm_share", c.comm_share ? Json(*c.comm_share) : Json(nullptr)}};
    if (!why.empty()) j["why"] = why;
    return j;
}

}  // namespace

void render_cost(std::ostream& o, const PlanView& v) {
    if (std::string h = hint(v); !h.empty()) {
        o << "\n" << wrap("Cost: ", h + ".", 100, 2) << "\n";
        return;
    }
    if (!v.cost || !v.budget) return;
    const CostSearch& s = *v.cost;
    const std::string& cur = v.prices->currency;
    std::string counts = s.counts.empty()       ? "no card count"
                         : s.counts.size() == 1 ? fmt::format("{} cards", s.counts.front())
                                                : fmt::format("{}–{} cards", s.counts.front(), s.counts.back());
    std::string head = fmt::format(
        "{}; {} priced SKU(s) × {}, {} configuration(s) hold it{}:", v.budget->how, v.prices->per_card_hour.size(),
        counts, s.options.size(),
        s.deadline_hours ? fmt::format(", deadline {} h", format_number(*s.deadline_hours)) : std::string());
    o << "\n" << wrap("Cost: ", head, 100, 2) << "\n";
    if (s.cheapest) option_line(o, "cheapest", *s.cheapest, s.cheapest_why, cur);
    else o << wrap("  cheapest  ", "— " + s.cheapest_absent, 100, 12) << "\n";
    if (s.fastest) option_line(o, "fastest", *s.fastest, s.fastest_why, cur);
    if (!s.unpriced.empty()) {
        // In the card table's order, so the best-ranked SKUs without a price come first.
        std::vector<const GpuSpec*> ranked;
        for (auto& r : v.rec.rows)
            if (std::find(s.unpriced.begin(), s.unpriced.end(), r.spec) != s.unpriced.end()) ranked.push_back(r.spec);
        std::string names;
        for (std::size_t i = 0; i < ranked.size() && i < kUnpricedShown; ++i)
            names += (i ? ", " : "") + ranked[i]->name;
        if (s.unpriced.size() > kUnpricedShown)
            names += fmt::format(" and {} more (--json lists them)", s.unpriced.size() - kUnpricedShown);
        o << wrap("  not searched, no price: ", names, 100, 4) << "\n";
    }
    bool measured =
        (s.cheapest && s.cheapest->rates_source == "measured") || (s.fastest && s.fastest->rates_source == "measured");
    o << wrap("  ",
              std::string("hours: the job's tokens ÷ the configuration's tokens/s (") +
                  (is_training(v.w.task) ? "training: compute + communication per step" : "decode of the batch") +
                  "); cost = price per card-hour × cards × hours." +
                  (measured ? " *: rates measured by the --measured report." : ""),
              100, 2)
      << "\n";
}

void add_cost_json(Json& body, const PlanView& v) {
    Json job = nullptr;
    if (v.budget && v.budget->tokens > 0)
        job = Json{{"tokens", v.budget->tokens},
                   {"from", v.budget->steps ? "steps" : "tokens"},
                   {"steps", v.budget->steps ? Json(*v.budget->steps) : Json(nullptr)},
                   {"data_parallel_cards", v.budget->steps ? Json(v.budget->data_parallel_cards) : Json(nullptr)},
                   {"how", v.budget->how}};
    body["job"] = job;
    const std::string cur = v.prices ? v.prices->currency : "";
    const CostSearch* s = v.cost;
    body["cheapest"] = s && s->cheapest ? option_json(*s->cheapest, s->cheapest_why, cur) : Json(nullptr);
    body["fastest"] = s && s->fastest ? option_json(*s->fastest, s->fastest_why, cur) : Json(nullptr);
    Json search = {{"searched", s != nullptr}, {"hint", hint(v).empty() ? Json(nullptr) : Json(hint(v))}};
    if (s) {
        Json options = Json::array(), unpriced = Json::array();
        for (auto& o : s->options) options.push_back(option_json(o, "", cur));
        for (auto* g : s->unpriced) unpriced.push_back(g->key);
        search["deadline_hours"] = s->deadline_hours ? Json(*s->deadline_hours) : Json(nullptr);
        search["card_counts"] = s->counts;
        search["cheapest_absent"] = s->cheapest ? Json(nullptr) : Json(s->cheapest_absent);
        search["unpriced_skus"] = unpriced;
        search["configurations"] = options;
    }
    body["cost_search"] = search;
}

}  // namespace gpuvet
