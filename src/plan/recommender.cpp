#include "plan/recommender.hpp"

#include <algorithm>
#include <fmt/format.h>

#include "core/error.hpp"

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

namespace {
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

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
}  // namespace

Recommendation recommend(const ModelArch& m, const Workload& w, const SpecDb& db, const Scenario& sc,
                         const SpeedAssumptions& a, const std::map<std::string, MeasuredRates>& measured,
                         const PriceTable* prices, int max_cards) {
    Recommendation rec;
    std::vector<int> counts;
    if (w.gpus) counts = {*w.gpus};
    else
        for (int n = 1; n <= max_cards; n *= 2) counts.push_back(n);
    double max_vram = 0, max_tf = 0, max_bw = 0;
    for (auto& g : db.all()) {
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
        CardRates r = rates_for(g, sc, measured);
        row.rates_source = r.source;
        if (row.plan) {
            // Sharded weights or tensor parallelism exchange data every layer: NVLink, not PCIe.
            row.nvlink_needed = *row.cards > 1 && (w.task == Task::Inference || row.plan->zero_stage == 3 || w.tp > 1);
            row.speed = estimate_speed(m, w, *row.plan, r, a);
            if (prices && row.speed.hours_for_budget)
                if (auto it = prices->per_card_hour.find(g.key); it != prices->per_card_hour.end())
                    row.cost = it->second * *row.cards * *row.speed.hours_for_budget;
        }
        max_vram = std::max(max_vram, g.memory_size_gib);
        max_tf = std::max(max_tf, r.tflops.value_or(0));
        max_bw = std::max(max_bw, r.bandwidth_gbps.value_or(0));
        rec.rows.push_back(std::move(row));
    }
    for (auto& row : rec.rows) {
        CardRates r = rates_for(*row.spec, sc, measured);
        row.score = sc.w_vram * row.spec->memory_size_gib / std::max(1.0, max_vram) +
                    sc.w_compute * r.tflops.value_or(0) / std::max(1.0, max_tf) +
                    sc.w_bandwidth * r.bandwidth_gbps.value_or(0) / std::max(1.0, max_bw);
        if (row.cards) {
            rec.any_fits = true;
            row.score /= *row.cards;  // fewer cards for the same job is better
        }
    }
    std::stable_sort(rec.rows.begin(), rec.rows.end(), [](const SkuRow& x, const SkuRow& y) {
        if (x.cards.has_value() != y.cards.has_value()) return x.cards.has_value();
        return x.score > y.score;
    });
    // What would make it fit: the best SKU's count, and a lighter method on one big card.
    std::vector<std::string> ideas;
    for (auto& row : rec.rows)
        if (row.cards) {
            ideas.push_back(fmt::format("{}× {}{}", *row.cards, row.spec->name, row.nvlink_needed ? " with NVLink" : ""));
            break;
        }
    if (ideas.empty() && w.gpus) {
        // The asked count holds nothing: the fewest cards that would, best-ranked SKU on ties.
        std::optional<int> best_n;
        const SkuRow* best = nullptr;
        for (auto& row : rec.rows)
            for (int n = 1; n <= max_cards && (!best_n || n < *best_n); n *= 2) {
                if (n % std::max(1, w.tp) != 0) continue;
                Workload free = w;
                free.gpus.reset();
                if (plan_memory(m, free, n).need_per_gpu <= row.usable_gib * kGiB) {
                    best_n = n;
                    best = &row;
                    break;
                }
            }
        if (best) {
            Workload free = w;
            free.gpus.reset();
            bool shards = *best_n > 1 && (w.task == Task::Inference || plan_memory(m, free, *best_n).zero_stage == 3 || w.tp > 1);
            ideas.push_back(fmt::format("{}× {}{}", *best_n, best->spec->name, shards ? " with NVLink" : ""));
        }
    }
    if (w.task == Task::FullFinetune || w.task == Task::Lora || w.task == Task::Pretrain || w.task == Task::Inference) {
        Workload lighter = w;
        lighter.gpus = 1;
        std::string what;
        if (w.task == Task::Inference) { lighter.weight_dtype = "int4"; what = "int4 weights"; }
        else { lighter.task = Task::Qlora; lighter.checkpointing = true; what = "QLoRA"; }
        if (!m.is_fixed() || w.task == Task::Inference) {
            const GpuSpec* best = nullptr;
            for (auto& g : db.all()) {
                MemoryPlan p = plan_memory(m, lighter, 1);
                if (p.need_per_gpu <= g.memory_size_gib * w.engine_memory_fraction * kGiB &&
                    (!best || g.memory_size_gib < best->memory_size_gib))
                    best = &g;
            }
            if (best) ideas.push_back(fmt::format("{} on 1× {}", what, best->name));
        }
    }
    if (!ideas.empty() && rec.any_fits) {
        rec.suggestion = "fewest cards on the best-ranked GPU: " + ideas[0];
        if (ideas.size() > 1) rec.suggestion += "; lighter: " + ideas[1];
    } else if (!ideas.empty()) {
        rec.suggestion = "needs " + ideas[0];
        for (std::size_t i = 1; i < ideas.size(); ++i) rec.suggestion += ", or " + ideas[i];
    } else {
        rec.suggestion = fmt::format("nothing in the spec database fits within {} cards; shorten --seq, lower --batch, "
                                     "add --checkpointing or use --task qlora", counts.back());
    }
    return rec;
}

}  // namespace gpuvet
