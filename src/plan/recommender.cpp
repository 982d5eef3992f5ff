#include "plan/recommender.hpp"

#include <algorithm>
#include <fmt/format.h>

#include "core/error.hpp"
#include "core/units.hpp"

namespace gpuvet {

const std::vector<Scenario>& scenarios() {
    // Weights follow the seed articles' scenario table.
    static const std::vector<Scenario> s = {
        {"llm-finetune", "LLM fine-tuning: VRAM capacity first", 1.0, 0.3, 0.2, false},
        {"diffusion", "diffusion models: VRAM and compute", 0.6, 0.6, 0.1, false},
        {"video-render", "video rendering: VRAM capacity", 1.0, 0.2, 0.1, true},
        {"quant-backtest", "high-frequency quantitative back-testing: FP32 compute", 0.1, 1.0, 0.2, true},
        {"av-sim", "autonomous-driving simulation: compute and memory bandwidth", 0.2, 0.7, 0.7, true},
    };
    return s;
}

const Scenario& find_scenario(const std::string& key) {
    std::string list;
    for (auto& s : scenarios()) {
        if (s.key == key) return s;
        list += (list.empty() ? "" : ", ") + s.key;
    }
    throw usage_error("unknown scenario '" + key + "'", "choose one of: " + list);
}

CardRates rates_for(const GpuSpec& g, const Scenario& sc, const std::map<std::string, MeasuredRates>& measured) {
    CardRates r;
    r.bandwidth_gbps = g.memory_bandwidth_gbps;
    r.tflops = sc.fp32 ? g.fp32_tflops : (g.bf16_tensor_tflops ? g.bf16_tensor_tflops : g.fp16_tensor_tflops);
    r.source = "datasheet";
    set_link(r, g.nvlink_generation, g.nvlink_bandwidth_gbps, g.pcie_generation, g.pcie_lanes);
    if (auto it = measured.find(g.key); it != measured.end()) {
        auto& m = it->second;
        if (m.bandwidth_gbps) r.bandwidth_gbps = m.bandwidth_gbps;
        auto t = sc.fp32 ? m.fp32_tflops : (m.bf16_tflops ? m.bf16_tflops : m.fp16_tflops);
        if (t) r.tflops = t;
        if (m.bandwidth_gbps || t) r.source = "measured";
    }
    return r;
}

bool needs_nvlink(int cards, const Workload& w, int zero_stage) {
    return cards > 1 && (w.task == Task::Inference || zero_stage == 3 || w.tp > 1);
}

namespace {

// Card counts tried: the one asked for, else powers of two up to the limit.
std::vector<int> candidate_counts(const Workload& w, int max_cards) {
    std::vector<int> counts;
    if (w.gpus) counts = {*w.gpus};
    else
        for (int n = 1; n <= max_cards; n *= 2) counts.push_back(n);
    return counts;
}

// The fewest of `counts` cards of `g` that hold the job, with its speed and cost on them.
SkuRow fit_sku(const GpuSpec& g, const ModelArch& m, const Workload& w, const std::vector<int>& counts,
               const CardRates& r, const SpeedAssumptions& a, const PriceTable* prices) {
    SkuRow row;
    row.spec = &g;
    row.usable_gib = g.memory_size_gib * w.engine_memory_fraction;
    row.has_nvlink = g.nvlink_generation.has_value();
    for (int n : counts) {
        if (n % std::max(1, w.tp) != 0) continue;
        MemoryPlan p = plan_memory(m, w, n);
        if (p.need_per_gpu <= row.usable_gib * kGiB) {
            row.cards = n;
            row.plan = p;
            break;
        }
    }
    row.rates_source = r.source;
    if (row.plan) {
        row.nvlink_needed = needs_nvlink(*row.cards, w, row.plan->zero_stage);
        row.speed = estimate_speed(m, w, *row.plan, r, a);
        if (prices && row.speed.hours_for_budget)
            if (auto it = prices->per_card_hour.find(g.key); it != prices->per_card_hour.end())
                row.cost = it->second * *row.cards * *row.speed.hours_for_budget;
    }
    // Serving: the KV cache at the row's cards, or, where nothing fits, at the asked count (what is
    // left there and what would help).
    if (w.task == Task::Inference && !m.is_fixed() && !m.encoder) {
        ServingCard card = serving_card_for(g);
        ServingEngine e = vllm_server_defaults(card.total_bytes, g.name);
        if (w.max_batched_tokens) e.max_batched_tokens = *w.max_batched_tokens;
        row.serving = serving_capacity(m, w, card, row.cards.value_or(w.gpus.value_or(1)), e);
        add_serving_rates(*row.serving, m, w, r, a);
    }
    return row;
}

// The largest figure of each kind over the database: scores are fractions of these.
struct Maxima {
    double vram = 0, tflops = 0, bandwidth = 0;
};

// Weighted share of the best card's capacity, compute and bandwidth, per card used.
void score_rows(Recommendation& rec, const Scenario& sc, const std::map<std::string, MeasuredRates>& measured,
                const Maxima& max) {
    for (auto& row : rec.rows) {
        CardRates r = rates_for(*row.spec, sc, measured);
        row.score = sc.w_vram * row.spec->memory_size_gib / std::max(1.0, max.vram) +
                    sc.w_compute * r.tflops.value_or(0) / std::max(1.0, max.tflops) +
                    sc.w_bandwidth * r.bandwidth_gbps.value_or(0) / std::max(1.0, max.bandwidth);
        if (row.cards) {
            rec.any_fits = true;
            row.score /= *row.cards;  // fewer cards for the same job is better
        }
    }
    std::stable_sort(rec.rows.begin(), rec.rows.end(), [](const SkuRow& x, const SkuRow& y) {
        if (x.cards.has_value() != y.cards.has_value()) return x.cards.has_value();
        return x.score > y.score;
    });
}

// The asked count holds nothing: the fewest cards that would, best-ranked SKU on ties.
std::optional<LeverReference> fewest_cards_idea(const Recommendation& rec, const ModelArch& m, const Workload& w,
                                                int max_cards) {
    Workload free = w;
    free.gpus.reset();
    std::optional<int> best_n;
    const SkuRow* best = nullptr;
    for (auto& row : rec.rows)
        for (int n = 1; n <= max_cards && (!best_n || n < *best_n); n *= 2) {
            if (n % std::max(1, w.tp) != 0) continue;
            if (plan_memory(m, free, n).need_per_gpu <= row.usable_gib * kGiB) {
                best_n = n;
                best = &row;
                break;
            }
        }
    if (!best) return std::nullopt;
    return LeverReference{best->spec, *best_n};
}

std::string fewest_cards_text(const LeverReference& r, const ModelArch& m, const Workload& w) {
    Workload free = w;
    free.gpus.reset();
    // Spelled out, not needs_nvlink(): the plan is redone only when its stage decides.
    bool shards =
        r.cards > 1 && (w.task == Task::Inference || plan_memory(m, free, r.cards).zero_stage == 3 || w.tp > 1);
    return fmt::format("{}× {}{}", r.cards, r.spec->name, shards ? " with NVLink" : "");
}

std::string suggestion_text(const std::vector<std::string>& ideas, bool any_fits, int most_cards) {
    if (!ideas.empty() && any_fits) {
        std::string s = "fewest cards on the best-ranked GPU: " + ideas[0];
        if (ideas.size() > 1) s += "; lighter: " + ideas[1];
        return s;
    }
    if (!ideas.empty()) {
        std::string s = "needs " + ideas[0];
        for (std::size_t i = 1; i < ideas.size(); ++i) s += ", or " + ideas[i];
        return s;
    }
    return fmt::format(
        "nothing in the spec database fits within {} cards; shorten --seq, lower --batch, "
        "add --checkpointing or use --task qlora",
        most_cards);
}
}  // namespace

Recommendation recommend(const ModelArch& m, const Workload& w, const SpecDb& db, const Scenario& sc,
                         const SpeedAssumptions& a, const std::map<std::string, MeasuredRates>& measured,
                         const PriceTable* prices, int max_cards) {
    Recommendation rec;
    const std::vector<int> counts = candidate_counts(w, max_cards);
    Maxima max;
    for (auto& g : db.all()) {
        CardRates r = rates_for(g, sc, measured);
        rec.rows.push_back(fit_sku(g, m, w, counts, r, a, prices));
        max.vram = std::max(max.vram, g.memory_size_gib);
        max.tflops = std::max(max.tflops, r.tflops.value_or(0));
        max.bandwidth = std::max(max.bandwidth, r.bandwidth_gbps.value_or(0));
    }
    score_rows(rec, sc, measured, max);
    // What would make it fit: the best SKU's count, and the first lever that needs fewer or cheaper cards.
    std::vector<std::string> ideas;
    std::optional<LeverReference> reference;
    for (auto& row : rec.rows)
        if (row.cards) {
            ideas.push_back(
                fmt::format("{}× {}{}", *row.cards, row.spec->name, row.nvlink_needed ? " with NVLink" : ""));
            reference = LeverReference{row.spec, *row.cards};
            break;
        }
    if (ideas.empty() && w.gpus)
        if ((reference = fewest_cards_idea(rec, m, w, max_cards))) ideas.push_back(fewest_cards_text(*reference, m, w));
    rec.levers = find_levers(m, w, rec.rows, counts, prices, reference);
    if (!rec.levers.lighter_text.empty()) ideas.push_back(rec.levers.lighter_text);
    rec.suggestion = suggestion_text(ideas, rec.any_fits, counts.back());
    return rec;
}

}  // namespace gpuvet
