#include "plan/levers.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

#include "core/error.hpp"
#include "plan/quantization.hpp"
#include "plan/recipes.hpp"
#include "plan/recommender.hpp"
#include "plan/speed_model.hpp"
#include "plan/vision_arch.hpp"
#include "core/units.hpp"

namespace gpuvet {

namespace {

// One NVLink box: where sharding is planned when one card was asked.
constexpr int kBoxCards = 8;
constexpr std::int64_t kMaxGradAccum = 4096;  // --grad-accum's range (README)

// A lever before it is planned: the workload with it applied, for the need (`need`, on `gpus`
// cards) and for the card table (`table`, the counts the table tried).
struct Candidate {
    std::string key, what, option, price;
    Workload need, table;
    int gpus = 1;
    std::string skip;  // why it does not apply (set instead of planning it)
};

Candidate make(const Workload& w, int gpus, std::string key, std::string what, std::string option) {
    return Candidate{std::move(key), std::move(what), std::move(option), "", w, w, gpus, ""};
}

bool adapters(Task t) { return t == Task::Lora || t == Task::Qlora; }
bool full_training(Task t) { return t == Task::FullFinetune || t == Task::Pretrain; }

// Training FLOPs per token in units of N (speed model): 6, LoRA 4, +2 for the recomputed forward.
double flops_units(const Workload& w) { return (adapters(w.task) ? 4.0 : 6.0) + (w.checkpointing ? 2.0 : 0.0); }

std::string gb(double bytes) { return fmt::format("{:.1f} GB", bytes / 1e9); }

Candidate checkpointing(const Workload& w, int gpus) {
    Candidate c = make(w, gpus, "checkpointing", "activation checkpointing", "--checkpointing");
    for (Workload* x : {&c.need, &c.table}) {
        x->checkpointing = true;
        x->selective_checkpointing = false;
    }
    double before = flops_units(w), after = flops_units(c.need);
    c.price = fmt::format(
        "recomputes each block's forward in backward, about one more forward: {:.0f}·N → {:.0f}·N FLOPs per "
        "token, +{:.0f}% compute per step",
        before, after, 100 * (after / before - 1));
    if (w.checkpointing) c.skip = "already on";
    return c;
}

Candidate micro_batch(const Workload& w, int gpus) {
    const std::int64_t accum = std::int64_t(w.grad_accum) * w.batch;
    Candidate c = make(w, gpus, "grad-accum", "a smaller micro-batch with gradient accumulation",
                       fmt::format("--batch 1 --grad-accum {}", accum));
    for (Workload* x : {&c.need, &c.table}) {
        x->batch = 1;
        x->grad_accum = int(std::min<std::int64_t>(accum, kMaxGradAccum));
    }
    c.price = fmt::format(
        "the same {} samples per optimizer step in {} micro-steps of 1: the gradients stay alive between them, "
        "and batch-1 matmuls run further below peak than --mfu assumes",
        accum, accum);
    if (w.batch <= 1) c.skip = "the micro-batch is 1 already";
    else if (w.optimizer_in_backward) c.skip = "--optimizer-in-backward cannot accumulate gradients";
    else if (accum > kMaxGradAccum) c.skip = fmt::format("{} micro-steps pass --grad-accum's {}", accum, kMaxGradAccum);
    return c;
}

// ZeRO-3 / FSDP full shard: on the asked cards when several were asked, else across one box.
Candidate sharding(const Workload& w, int gpus, int stage_now) {
    const int n = gpus > 1 ? gpus : kBoxCards;
    const bool lora = adapters(w.task);
    std::string option = gpus > 1 ? "--zero 3" : fmt::format("--gpus {} --zero 3", n);
    if (lora) option = fmt::format("--gpus {}", n);  // FSDP shards the frozen base by default
    Candidate c = make(w, n, "zero3", lora ? "FSDP sharding of the frozen base" : "ZeRO-3 / FSDP sharding", option);
    if (!lora) {
        c.need.zero_stage = 3;
        c.table.zero_stage = 3;
    }
    c.need.gpus = n;
    if (!w.gpus || *w.gpus == 1) c.table.gpus.reset();  // the table's counts, each sharded
    if (stage_now == 3 && gpus > 1) c.skip = "the plan is sharded already";
    else if (w.offload_optimizer || w.offload_params) c.skip = "planned with offload: see --zero";
    return c;
}

// Sharding's cost is its traffic: the speed model's bytes per step, on a link that must be NVLink.
std::string sharding_price(const MemoryPlan& p, const Workload& w) {
    const double dp = double(p.gpus) / std::max(1, w.tp);
    return fmt::format(
        "every step all-gathers the weights twice and reduce-scatters the gradients: {} per card on {} cards, "
        "over NVLink (PCIe makes it the step's bottleneck)",
        gb(comm_bytes_per_step(p, dp)), p.gpus);
}

// ZeRO-Offload (Ren et al. 2021, arXiv:2101.06840): bf16 gradients to the host, AdamW on the CPU,
// bf16 weights back, every optimizer step.
Candidate offload(const Workload& w, int gpus, int stage_now, std::int64_t params) {
    const bool add_stage = stage_now == 0;
    Candidate c = make(w, gpus, "offload-optimizer", "CPU offload of the optimizer states (ZeRO-Offload)",
                       add_stage ? "--zero 2 --offload-optimizer" : "--offload-optimizer");
    for (Workload* x : {&c.need, &c.table}) {
        x->offload_optimizer = true;
        if (add_stage) x->zero_stage = 2;
    }
    const double moved = 4.0 * double(params) / std::max(1, gpus / std::max(1, w.tp));
    c.price = fmt::format(
        "{} per card over PCIe every optimizer step (bf16 gradients to the host, bf16 weights back: {:.2f} s "
        "at PCIe 4.0 x16's 31.5 GB/s) and the AdamW step on the host's CPU",
        gb(moved), moved / 31.5e9);
    if (!full_training(w.task)) c.skip = "adapters' states are already small: LoRA offloads nothing worth it";
    else if (w.offload_optimizer || w.offload_params) c.skip = "already offloaded";
    else if (find_recipe(w.recipe).pageable_optimizer) c.skip = "--recipe " + w.recipe + " pages its states already";
    else if (w.optimizer_in_backward) c.skip = "--optimizer-in-backward steps on the GPU";
    return c;
}

Candidate optimizer_8bit(const Workload& w, int gpus) {
    Candidate c = make(w, gpus, "adamw-8bit", "an 8-bit optimizer (bitsandbytes AdamW8bit)", "--recipe adamw-8bit");
    c.need.recipe = c.table.recipe = "adamw-8bit";
    c.price =
        "block-wise 8-bit Adam states (Dettmers et al. 2021, arXiv:2110.02861, report 32-bit Adam's results on "
        "their benchmarks); the recipe keeps bf16 weights without an fp32 master copy";
    if (!full_training(w.task)) c.skip = "the adapters' optimizer states are a small share here";
    else if (w.recipe == "adamw-8bit" || w.recipe == "paged-adamw-8bit") c.skip = "already 8-bit";
    else if (w.offload_optimizer || w.offload_params) c.skip = "the states are offloaded already";
    return c;
}

// bitsandbytes' paged 8-bit AdamW: the states live in CUDA unified memory, outside the need, and
// page to the host only when the card runs short.
Candidate paged_optimizer(const Workload& w, int gpus) {
    Candidate c = make(w, gpus, "paged-adamw-8bit", "a paged 8-bit optimizer (bitsandbytes PagedAdamW8bit)",
                       "--recipe paged-adamw-8bit");
    c.need.recipe = c.table.recipe = "paged-adamw-8bit";
    c.price =
        "8-bit Adam states in CUDA unified memory: they stay on the card while it has room and page to the host "
        "over PCIe when it runs short, so steps slow down near the card's size instead of failing";
    if (!full_training(w.task)) c.skip = "the adapters' optimizer states are a small share here";
    else if (find_recipe(w.recipe).pageable_optimizer) c.skip = "--recipe " + w.recipe + " pages its states already";
    else if (w.offload_optimizer || w.offload_params) c.skip = "the states are offloaded already";
    return c;
}

Candidate qlora(const ModelArch& m, const Workload& w, int gpus) {
    Candidate c = make(w, gpus, "qlora", "NF4 frozen weights (QLoRA)", "--task qlora");
    c.need.task = c.table.task = Task::Qlora;
    c.price = w.task == Task::Lora
                  ? "NF4 frozen base (QLoRA, Dettmers et al. 2023, arXiv:2305.14314, matches 16-bit LoRA on "
                    "its benchmarks): quantization error in the frozen weights, dequantized in every matmul "
                    "(slower steps)"
                  : "trains low-rank adapters over an NF4 base instead of every weight: a different job, "
                    "with the quality caveats of LoRA and of 4-bit weights";
    if (w.task != Task::Lora && w.task != Task::FullFinetune) c.skip = "no frozen weights to quantize";
    else if (m.quant) c.skip = "the checkpoint is " + m.quant->method + "-quantized already";
    return c;
}

Candidate shorter_seq(const Workload& w, int gpus) {
    const std::int64_t half = w.seq / 2;
    Candidate c = make(w, gpus, "seq", "a shorter sequence", fmt::format("--seq {}", half));
    c.need.seq = c.table.seq = std::max<std::int64_t>(1, half);
    c.price = fmt::format("changes the job: sequences longer than {} tokens are cut or split", half);
    if (w.seq < 256) c.skip = "the sequence is short already";
    return c;
}

// Inference: quantized weights or KV cache, fewer sequences, slicing a pipeline's decode.
std::vector<Candidate> inference_candidates(const ModelArch& m, const Workload& w, int gpus) {
    std::vector<Candidate> out;
    if (m.vision && m.vision->kind == VisionKind::Diffusion && m.vision->vae) {
        Candidate c = make(w, gpus, "vae-slicing", "VAE slicing", "--vae-slicing");
        c.need.vae_slicing = c.table.vae_slicing = true;
        c.price = "decodes the images one at a time: the decode phase runs once per image; the denoiser is unchanged";
        if (w.vae_slicing || w.batch < 2)
            c.skip = w.vae_slicing ? "already on" : "one image is decoded at once already";
        out.push_back(c);
    }
    const bool decoder = !m.vision && !m.encoder;
    if (decoder) {
        Candidate c = make(w, gpus, "kv-fp8", "an fp8 KV cache", "--kv-dtype fp8");
        c.need.kv_dtype = c.table.kv_dtype = "fp8";
        c.price = "half the KV bytes of 16-bit: quantization error in attention over the whole context";
        if (dtype_bytes(w.kv_dtype) <= 1) c.skip = "the KV cache is 8-bit already";
        out.push_back(c);
    }
    {
        Candidate c = make(w, gpus, "batch", "fewer sequences at once", "--batch 1");
        c.need.batch = c.table.batch = 1;
        c.price = fmt::format("one sequence (image) at a time instead of {}: the box's throughput falls", w.batch);
        if (w.batch <= 1) c.skip = "one at a time already";
        out.push_back(c);
    }
    for (const char* d : {"int8", "int4"}) {
        Candidate c =
            make(w, gpus, std::string("weights-") + d, std::string(d) + " weights", std::string("--dtype ") + d);
        c.need.weight_dtype = c.table.weight_dtype = d;
        c.price = std::string(d) == "int8"
                      ? "8-bit weights (LLM.int8(), Dettmers et al. 2022, arXiv:2208.07339): a small quality loss"
                      : "4-bit weights (GPTQ, AWQ, NF4): a larger quality loss than int8; check the model at it";
        if (m.quant || dtype_bytes(w.weight_dtype) <= dtype_bytes(d))
            c.skip = "the weights are " + (m.quant ? m.quant->method : w.weight_dtype) + " already";
        out.push_back(c);
    }
    if (decoder) out.push_back(shorter_seq(w, gpus));
    return out;
}

std::vector<Candidate> candidates(const ModelArch& m, const Workload& w, int gpus, const MemoryPlan& now) {
    if (w.task == Task::Inference) return inference_candidates(m, w, gpus);
    std::vector<Candidate> out = {checkpointing(w, gpus),
                                  micro_batch(w, gpus),
                                  sharding(w, gpus, now.zero_stage),
                                  offload(w, gpus, now.zero_stage, now.params),
                                  optimizer_8bit(w, gpus),
                                  paged_optimizer(w, gpus),
                                  qlora(m, w, gpus)};
    if (!m.vision) out.push_back(shorter_seq(w, gpus));
    return out;
}

// The fewest of `counts` cards of the row's SKU that hold the plans (one per count, SKU-free).
std::optional<int> fewest(const SkuRow& row, const std::vector<std::pair<int, double>>& needs) {
    for (auto& [n, need] : needs)
        if (need <= row.usable_gib * kGiB) return n;
    return std::nullopt;
}

std::vector<std::pair<int, double>> needs_for(const ModelArch& m, const Workload& w, const std::vector<int>& counts) {
    std::vector<std::pair<int, double>> out;
    std::vector<int> tried = w.gpus ? std::vector<int>{*w.gpus} : counts;
    for (int n : tried) {
        if (n % std::max(1, w.tp) != 0) continue;
        out.emplace_back(n, plan_memory(m, w, n).need_per_gpu);
    }
    return out;
}

std::vector<LeverCard> brought(const ModelArch& m, const Workload& table, const std::vector<SkuRow>& rows,
                               const std::vector<int>& counts) {
    auto needs = needs_for(m, table, counts);
    std::vector<LeverCard> out;
    for (auto& row : rows) {
        auto n = fewest(row, needs);
        if (n && (!row.cards || *n < *row.cards)) out.push_back({row.spec, *n, row.cards});
    }
    // Fewest cards, then the smallest (the cheapest to rent of those), then the table's order.
    std::stable_sort(out.begin(), out.end(), [](const LeverCard& a, const LeverCard& b) {
        if (a.cards != b.cards) return a.cards < b.cards;
        return a.spec->memory_size_gib < b.spec->memory_size_gib;
    });
    return out;
}

std::optional<double> price_of(const PriceTable* prices, const GpuSpec& g, int cards) {
    if (!prices) return std::nullopt;
    auto it = prices->per_card_hour.find(g.key);
    if (it == prices->per_card_hour.end()) return std::nullopt;
    return it->second * cards;
}

// Whether `c` beats the reference: fewer cards, or as many cheaper ones (per hour with prices,
// else smaller cards).
bool lighter_than(const LeverCard& c, const std::optional<LeverReference>& ref, const PriceTable* prices) {
    if (!ref) return true;
    if (c.cards != ref->cards) return c.cards < ref->cards;
    auto pc = price_of(prices, *c.spec, c.cards), pr = price_of(prices, *ref->spec, ref->cards);
    if (pc && pr) return *pc < *pr;
    return c.spec->memory_size_gib < ref->spec->memory_size_gib;
}

// The option that applies the lever on `c`'s cards: sharding names its count.
std::string option_on(const Lever& v, const LeverCard& c, const Workload& w) {
    if (v.key != "zero3" || (w.gpus && *w.gpus > 1)) return v.option;
    return adapters(w.task) ? fmt::format("--gpus {}", c.cards) : fmt::format("--gpus {} --zero 3", c.cards);
}

// More or larger cards: the card table's best row, the last lever.
std::optional<Lever> more_cards(const std::vector<SkuRow>& rows, const LeverList& l, const PriceTable* prices) {
    const SkuRow* best = nullptr;
    for (auto& r : rows)
        if (r.cards) {
            best = &r;
            break;
        }
    if (!best || best->plan->need_per_gpu >= l.need_bytes) return std::nullopt;
    Lever v{"cards",      "more or larger cards",   fmt::format("--gpus {}", *best->cards),    "", *best->cards,
            l.need_bytes, best->plan->need_per_gpu, {{best->spec, *best->cards, std::nullopt}}};
    auto p = price_of(prices, *best->spec, *best->cards);
    v.price = p ? fmt::format("{}× {} at {:.2f} {} per hour", *best->cards, best->spec->name, *p, prices->currency)
                : fmt::format("{}× {}: the rent or price of every card", *best->cards, best->spec->name);
    return v;
}

void choose_lighter(LeverList& l, const Workload& w, const std::optional<LeverReference>& ref,
                    const PriceTable* prices) {
    for (std::size_t i = 0; i < l.levers.size(); ++i) {
        const Lever& v = l.levers[i];
        // More cards, and sharding over them, are what the table and the fewest-cards idea plan
        // already; sharding is an alternative only on the cards asked for.
        if (v.key == "cards" || (v.key == "zero3" && !(w.gpus && *w.gpus > 1))) continue;
        for (auto& c : v.brings)
            if (lighter_than(c, ref, prices)) {
                l.lighter = i;
                l.lighter_text = fmt::format("{} on {}× {} ({})", option_on(v, c, w), c.cards, c.spec->name, v.what);
                return;
            }
    }
}

// Shown unless one card of at most 48 GiB holds the job (only one card asked for, or none).
void show_or_not(LeverList& l, const std::vector<SkuRow>& rows, const Workload& w) {
    std::optional<double> one_card_gib;
    bool any = false;
    for (auto& r : rows) {
        any = any || r.cards.has_value();
        if (r.cards == 1 && (!one_card_gib || r.spec->memory_size_gib < *one_card_gib))
            one_card_gib = r.spec->memory_size_gib;
    }
    const bool many_asked = w.gpus && *w.gpus > 1;
    l.shown = many_asked || !one_card_gib || *one_card_gib > kLeverSmallCardGib;
    l.why = !any         ? "nothing in the spec database holds it"
            : many_asked ? fmt::format("--gpus {} asked for", *w.gpus)
            : !one_card_gib
                ? "no single card holds it"
                : fmt::format("{} {:.0f} GiB",
                              l.shown ? "the smallest single card that holds it has" : "it fits on one card of",
                              *one_card_gib);
}

}  // namespace

LeverList find_levers(const ModelArch& m, const Workload& w, const std::vector<SkuRow>& rows,
                      const std::vector<int>& counts, const PriceTable* prices,
                      std::optional<LeverReference> reference) {
    LeverList l;
    l.gpus = w.gpus.value_or(1);  // the memory section's count
    MemoryPlan now;
    try {
        now = plan_memory(m, w, l.gpus);
    } catch (const Error& e) {
        l.why = std::string("the workload cannot be planned on its own cards: ") + e.what();
        return l;
    }
    l.need_bytes = now.need_per_gpu;
    show_or_not(l, rows, w);
    for (Candidate& c : candidates(m, w, l.gpus, now)) {
        if (!c.skip.empty()) {
            l.not_applicable.push_back(c.option + " (" + c.skip + ")");
            continue;
        }
        try {
            MemoryPlan p = plan_memory(m, c.need, c.gpus);
            Lever v{c.key, c.what, c.option, c.price, c.gpus, l.need_bytes, p.need_per_gpu, {}};
            if (c.key == "zero3") v.price = sharding_price(p, w);
            v.brings = brought(m, c.table, rows, counts);
            // On one card the states may set the peak where the table's many cards are bound by
            // activations: a lever counts when it saves here or holds the job on fewer cards.
            if (v.saved_bytes() <= 0.005 * l.need_bytes && v.brings.empty()) {
                l.not_applicable.push_back(c.option + " (saves nothing on this workload)");
                continue;
            }
            l.levers.push_back(std::move(v));
        } catch (const Error& e) {
            l.not_applicable.push_back(c.option + " (" + e.what() + ")");
        }
    }
    if (auto v = more_cards(rows, l, prices)) {
        // LoRA's sharding lever on one box is the same plan as the table's best row there.
        bool same = false;
        for (auto& x : l.levers) same = same || (x.gpus == v->gpus && std::abs(x.need_bytes - v->need_bytes) < 1);
        if (!same) l.levers.push_back(*v);
    }
    choose_lighter(l, w, reference, prices);
    return l;
}

}  // namespace gpuvet
