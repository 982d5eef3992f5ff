// The recommender: fewest cards per SKU, NVLink needed vs missing, the communication penalty and
// the wording when nothing fits.
#include <gtest/gtest.h>

#include <regex>

#include "core/error.hpp"
#include "plan/cost_search.hpp"
#include "plan/model_catalog.hpp"
#include "plan/recommender.hpp"
#include "specs/spec_db.hpp"

using namespace gpuvet;

namespace {
constexpr double GiB = 1024.0 * 1024 * 1024;
const SpecDb& db() {
    static SpecDb d = SpecDb::embedded();
    return d;
}
const ModelArch& model(const char* k) {
    static ModelCatalog c = ModelCatalog::embedded();
    return c.find(k);
}
Recommendation rec(const ModelArch& m, const Workload& w) {
    return recommend(m, w, db(), find_scenario("llm-finetune"), SpeedAssumptions{}, {}, nullptr);
}
const SkuRow& row(const Recommendation& r, const char* key) {
    for (auto& x : r.rows)
        if (x.spec->key == key) return x;
    throw std::runtime_error(key);
}
Workload pretrain8() {
    Workload w;
    w.task = Task::Pretrain;
    w.zero_stage = 3;
    w.gpus = 8;
    w.batch = 2;
    w.seq = 4096;
    w.checkpointing = true;
    return w;
}
}  // namespace

// For every SKU the count is the smallest power of two that holds the plan: it fits, half does not.
TEST(PlanRecommender, FewestCardsPerSku) {
    Workload w;
    w.batch = 8;
    w.seq = 8192;
    const auto& m = model("llama-3-70b");
    auto r = rec(m, w);
    ASSERT_TRUE(r.any_fits);
    int checked = 0;
    for (auto& x : r.rows) {
        if (!x.cards) continue;
        EXPECT_LE(plan_memory(m, w, *x.cards).need_per_gpu, x.usable_gib * GiB) << x.spec->key;
        if (*x.cards > 1) {
            EXPECT_GT(plan_memory(m, w, *x.cards / 2).need_per_gpu, x.usable_gib * GiB) << x.spec->key;
        }
        ++checked;
    }
    EXPECT_GT(checked, 10);
    // 131 GiB of weights + 20 GiB KV + margin: 2 × 141 GiB H200, 4 × 80 GiB H100.
    EXPECT_EQ(row(r, "h200-sxm-141gb").cards, 2);
    EXPECT_EQ(row(r, "h100-sxm5-80gb").cards, 4);
    // Fitting rows come before the rest.
    bool seen_unfit = false;
    for (auto& x : r.rows) {
        if (!x.cards) seen_unfit = true;
        else EXPECT_FALSE(seen_unfit) << x.spec->key;
    }
}

TEST(PlanRecommender, NvlinkNeededVersusMissing) {
    auto r = rec(model("llama-3-8b"), pretrain8());
    const SkuRow& h100 = row(r, "h100-sxm5-80gb");
    EXPECT_TRUE(h100.nvlink_needed);
    EXPECT_TRUE(h100.has_nvlink);
    const SkuRow& l40s = row(r, "l40s-48gb");
    EXPECT_TRUE(l40s.nvlink_needed);
    EXPECT_FALSE(l40s.has_nvlink);
    // One card shards nothing.
    Workload one;
    one.task = Task::Qlora;
    auto q = rec(model("llama-2-7b"), one);
    EXPECT_EQ(row(q, "l40s-48gb").cards, 1);
    EXPECT_FALSE(row(q, "l40s-48gb").nvlink_needed);
}

// ZeRO-3 over PCIe pays for all-gathering weights twice and reduce-scattering gradients per step.
TEST(PlanRecommender, CommunicationPenalisesPcie) {
    auto r = rec(model("llama-3-8b"), pretrain8());
    const SkuRow& l40s = row(r, "l40s-48gb");
    const SkuRow& h100 = row(r, "h100-sxm5-80gb");
    ASSERT_TRUE(l40s.speed.comm_s_per_step && l40s.speed.compute_s_per_step && l40s.speed.train_tokens_per_s);
    ASSERT_TRUE(h100.speed.comm_s_per_step && h100.speed.compute_s_per_step);
    double share_pcie = *l40s.speed.comm_s_per_step / (*l40s.speed.comm_s_per_step + *l40s.speed.compute_s_per_step);
    double share_nvl = *h100.speed.comm_s_per_step / (*h100.speed.comm_s_per_step + *h100.speed.compute_s_per_step);
    EXPECT_GT(share_pcie, 2 * share_nvl);
    // Volume by hand: 8.03e9 params × 2 B weights gathered twice + 2 B gradients, × 7/8, over
    // PCIe 4.0 x16 (31.5 GB/s one way).
    double bytes = 7.0 / 8.0 * (2 * 2.0 + 2.0) * double(parameter_count(model("llama-3-8b")));
    EXPECT_NEAR(*l40s.speed.comm_s_per_step, bytes / (1.969 * 16 * 1e9), 0.01);
    // Slower than the same cards with a free interconnect.
    double tokens = 8.0 * 2 * 4096;
    EXPECT_LT(*l40s.speed.train_tokens_per_s, tokens / *l40s.speed.compute_s_per_step);
}

TEST(PlanRecommender, ImpossiblePlanSaysWhatWouldFit) {
    Workload w;
    w.task = Task::FullFinetune;
    w.gpus = 1;
    w.checkpointing = true;
    auto r = rec(model("llama-2-70b"), w);
    EXPECT_FALSE(r.any_fits);
    EXPECT_TRUE(std::regex_match(r.suggestion, std::regex("needs [0-9]+× .+ with NVLink, or --.+ on [0-9]+× .+")))
        << r.suggestion;
    // Inference offers int4 weights instead of QLoRA.
    Workload inf;
    inf.gpus = 1;
    inf.seq = 4096;
    auto ri = rec(model("llama-3.1-405b"), inf);
    EXPECT_FALSE(ri.any_fits);
    EXPECT_NE(ri.suggestion.find("with NVLink"), std::string::npos) << ri.suggestion;
    EXPECT_EQ(ri.suggestion.find("QLoRA"), std::string::npos) << ri.suggestion;
}

TEST(PlanRecommender, PricesGiveCost) {
    Workload w;
    w.task = Task::Qlora;
    w.token_budget = 1e8;
    PriceTable p;
    p.per_card_hour["h100-sxm5-80gb"] = 2.0;
    auto r = recommend(model("llama-2-7b"), w, db(), find_scenario("llm-finetune"), SpeedAssumptions{}, {}, &p);
    const SkuRow& h = row(r, "h100-sxm5-80gb");
    ASSERT_TRUE(h.cost && h.speed.hours_for_budget && h.cards);
    EXPECT_DOUBLE_EQ(*h.cost, 2.0 * *h.cards * *h.speed.hours_for_budget);
    EXPECT_FALSE(row(r, "l40s-48gb").cost);  // no price given
}

TEST(PlanRecommender, MeasuredRatesReplaceTheDatasheet) {
    Workload w;
    w.task = Task::Qlora;
    std::map<std::string, MeasuredRates> measured;
    measured["h100-sxm5-80gb"].bf16_tflops = 494.75;  // half the datasheet's 989.5
    auto base = rec(model("llama-2-7b"), w);
    auto meas =
        recommend(model("llama-2-7b"), w, db(), find_scenario("llm-finetune"), SpeedAssumptions{}, measured, nullptr);
    const SkuRow& b = row(base, "h100-sxm5-80gb");
    const SkuRow& m = row(meas, "h100-sxm5-80gb");
    EXPECT_EQ(m.rates_source, "measured");
    ASSERT_TRUE(b.speed.train_tokens_per_s && m.speed.train_tokens_per_s);
    EXPECT_NEAR(*m.speed.train_tokens_per_s / *b.speed.train_tokens_per_s, 0.5, 1e-9);
}

// --- the cost search: cheapest that finishes, fastest, deadline ---

namespace {
Workload qlora_job(double tokens) {
    Workload w;
    w.task = Task::Qlora;
    w.token_budget = tokens;
    return w;
}
CostSearch search(const Workload& w, const PriceTable& p, std::optional<double> deadline = std::nullopt) {
    return search_cost(model("llama-2-7b"), w, db(), find_scenario("llm-finetune"), SpeedAssumptions{}, {}, p,
                       deadline);
}
PriceTable h100_dear_l40s_cheap() {
    PriceTable p;
    p.per_card_hour["h100-sxm5-80gb"] = 10.0;
    p.per_card_hour["l40s-48gb"] = 0.5;
    return p;
}
}  // namespace

// Card counts: doubling up to a box of 8, then whole boxes to 64; multiples of --tp; --gpus alone.
TEST(PlanCostSearch, CardCountsAreTheOneAskedForElseDoublingToABoxThenWholeBoxesInTensorParallelMultiples) {
    Workload w;
    EXPECT_EQ(search_card_counts(w, 8, 64), (std::vector<int>{1, 2, 4, 8, 16, 24, 32, 40, 48, 56, 64}));
    w.tp = 4;
    EXPECT_EQ(search_card_counts(w, 8, 64), (std::vector<int>{4, 8, 16, 24, 32, 40, 48, 56, 64}));
    w.tp = 1;
    w.gpus = 3;
    EXPECT_EQ(search_card_counts(w, 8, 64), (std::vector<int>{3}));
}

// One card each: the H100 is faster and dearer, the L40S slower and cheaper; each is named as such,
// with hours = tokens / rate and cost = price × cards × hours.
TEST(PlanCostSearch, FasterPricierIsFastestCheaperSlowerIsCheapest) {
    Workload w = qlora_job(1e8);
    w.gpus = 1;
    CostSearch s = search(w, h100_dear_l40s_cheap());
    ASSERT_EQ(s.options.size(), 2u);
    ASSERT_TRUE(s.cheapest && s.fastest);
    EXPECT_EQ(s.cheapest->spec->key, "l40s-48gb");
    EXPECT_EQ(s.fastest->spec->key, "h100-sxm5-80gb");
    EXPECT_GT(s.fastest->tokens_per_s, s.cheapest->tokens_per_s);
    EXPECT_GT(s.fastest->cost, s.cheapest->cost);
    for (const CostOption* o : {&*s.cheapest, &*s.fastest}) {
        EXPECT_NEAR(o->hours, 1e8 / o->tokens_per_s / 3600, 1e-9 * o->hours);
        EXPECT_DOUBLE_EQ(o->cost, o->price_per_card_hour * o->cards * o->hours);
    }
    // The same figures as the card table's row for that SKU.
    w.gpus = 1;
    PriceTable p = h100_dear_l40s_cheap();
    auto r = recommend(model("llama-2-7b"), w, db(), find_scenario("llm-finetune"), SpeedAssumptions{}, {}, &p);
    EXPECT_DOUBLE_EQ(*row(r, "l40s-48gb").speed.hours_for_budget, s.cheapest->hours);
    EXPECT_DOUBLE_EQ(*row(r, "l40s-48gb").cost, s.cheapest->cost);
    EXPECT_NE(s.fastest_why.find("1× H100 SXM5 80GB instead of 1× L40S 48GB cut"), std::string::npos) << s.fastest_why;
    // An SKU without a price is skipped and listed.
    EXPECT_FALSE(s.unpriced.empty());
    for (auto* g : s.unpriced) EXPECT_FALSE(p.per_card_hour.count(g->key)) << g->key;
}

// A deadline keeps only configurations that finish in time: the L40S's hours are over it.
TEST(PlanCostSearch, DeadlineExcludesConfigurationsTooSlow) {
    Workload w = qlora_job(1e8);
    w.gpus = 1;
    CostSearch free = search(w, h100_dear_l40s_cheap());
    ASSERT_TRUE(free.cheapest && free.fastest);
    double between = (free.cheapest->hours + free.fastest->hours) / 2;
    CostSearch s = search(w, h100_dear_l40s_cheap(), between);
    ASSERT_TRUE(s.cheapest);
    EXPECT_EQ(s.cheapest->spec->key, "h100-sxm5-80gb");
    EXPECT_LE(s.cheapest->hours, between);
    EXPECT_NE(s.cheapest_why.find("1× L40S 48GB at −"), std::string::npos) << s.cheapest_why;
    // Faster than anything: no cheapest, and why.
    CostSearch none = search(w, h100_dear_l40s_cheap(), free.fastest->hours / 2);
    EXPECT_FALSE(none.cheapest);
    ASSERT_TRUE(none.fastest);
    EXPECT_NE(none.cheapest_absent.find("none of 2 configurations finishes within"), std::string::npos)
        << none.cheapest_absent;
}

// The pure pick over hand-made options: cost to the cent decides the cheapest (ties: fewer cards),
// hours the fastest.
TEST(PlanCostSearch, PickIsByCostThenHours) {
    const GpuSpec* a = db().by_key("l40s-48gb");
    const GpuSpec* b = db().by_key("h100-sxm5-80gb");
    ASSERT_TRUE(a && b);
    auto opt = [](const GpuSpec* g, int n, double hours, double cost) {
        CostOption o;
        o.spec = g;
        o.cards = n;
        o.hours = hours;
        o.cost = cost;
        o.tokens_per_s = 1e6 / hours;
        return o;
    };
    CostSearch s;
    s.options = {opt(a, 1, 5, 10), opt(a, 2, 2.5, 10), opt(b, 1, 2, 12), opt(b, 8, 0.3, 30)};
    pick_cheapest_and_fastest(s);
    EXPECT_EQ(s.cheapest->spec, a);
    EXPECT_EQ(s.cheapest->cards, 1);  // the same cost to the cent: the smaller rental
    EXPECT_EQ(s.fastest->cards, 8);
    EXPECT_NE(s.fastest_why.find("8× H100 SXM5 80GB instead of 1× L40S 48GB cut 5 h to 0.3 h for +200% cost"),
              std::string::npos)
        << s.fastest_why;
    s.deadline_hours = 2.2;
    pick_cheapest_and_fastest(s);
    EXPECT_EQ(s.cheapest->spec, b);
    EXPECT_EQ(s.cheapest->cards, 1);
    // A card priced 0 (the price file allows it): no percentage of nothing.
    s.deadline_hours.reset();
    s.options = {opt(a, 1, 5, 0), opt(b, 1, 2, 12)};
    pick_cheapest_and_fastest(s);
    EXPECT_EQ(s.cheapest->spec, a);
    EXPECT_NE(s.fastest_why.find("for +12.00 cost"), std::string::npos) << s.fastest_why;
}

// Beyond one box a card's link is the network's 50 GB/s, not NVLink's 450 GB/s: a ZeRO-3 step on
// 16 H100s spends far longer communicating than on 8.
TEST(PlanCostSearch, MoreThanOneBoxCommunicatesOverTheNetwork) {
    Workload w = pretrain8();
    w.gpus = 16;
    auto r16 = rec(model("llama-3-8b"), w);
    const SkuRow& h = row(r16, "h100-sxm5-80gb");
    ASSERT_TRUE(h.speed.comm_s_per_step);
    double bytes = 15.0 / 16.0 * (2 * 2.0 + 2.0) * double(parameter_count(model("llama-3-8b")));
    EXPECT_NEAR(*h.speed.comm_s_per_step, bytes / 50e9, 0.01);
}

// --steps: tokens = steps × grad-accum × batch × seq × data-parallel cards (--gpus ÷ --tp, 1 without
// --gpus).
TEST(PlanCostSearch, StepsGiveTokens) {
    Workload w;
    w.task = Task::Lora;
    w.batch = 4;
    w.seq = 4096;
    w.gpus = 8;
    w.tp = 2;
    JobBudget b = job_budget(w, std::nullopt, 1000.0);
    EXPECT_DOUBLE_EQ(b.tokens, 1000.0 * 4 * 4096 * 4);
    EXPECT_EQ(b.data_parallel_cards, 4);
    EXPECT_NE(b.how.find("1000 steps × 4 seq × 4096 tokens × 4 data-parallel cards"), std::string::npos) << b.how;
    w.gpus.reset();
    w.tp = 1;
    EXPECT_DOUBLE_EQ(job_budget(w, std::nullopt, 10.0).tokens, 10.0 * 4 * 4096);
    w.grad_accum = 8;  // an optimizer step is 8 micro-batches
    JobBudget accum = job_budget(w, std::nullopt, 10.0);
    EXPECT_DOUBLE_EQ(accum.tokens, 10.0 * 8 * 4 * 4096);
    EXPECT_NE(accum.how.find("10 steps × 8 micro-batches × 4 seq"), std::string::npos) << accum.how;
    w.grad_accum = 1;
    EXPECT_DOUBLE_EQ(job_budget(w, 2e9, std::nullopt).tokens, 2e9);
    EXPECT_FALSE(job_budget(w, 2e9, std::nullopt).steps);
    EXPECT_THROW(job_budget(w, 2e9, 10.0), Error);
    w.task = Task::Inference;
    EXPECT_THROW(job_budget(w, std::nullopt, 10.0), Error);
}

// Inference with a token budget: generated at the batch's decode rate.
TEST(PlanCostSearch, InferenceTokensAtTheDecodeRate) {
    Workload w;
    w.batch = 16;
    w.token_budget = 1e7;
    auto r = rec(model("llama-3-8b"), w);
    const SkuRow& h = row(r, "h100-sxm5-80gb");
    ASSERT_TRUE(h.speed.decode_tokens_per_s && h.speed.hours_for_budget);
    EXPECT_DOUBLE_EQ(*h.speed.hours_for_budget, 1e7 / *h.speed.decode_tokens_per_s / 3600);
}

// The lighter idea (QLoRA on one card) once kept --tp 2 and threw "1 GPUs cannot hold
// tensor-parallel degree 2", so no --tp plan could be made.
TEST(PlanRecommender, TensorParallelPlansAreMade) {
    Workload w = pretrain8();
    w.tp = 2;
    Recommendation r;
    ASSERT_NO_THROW(r = rec(model("llama-3-8b"), w));
    EXPECT_EQ(row(r, "h100-sxm5-80gb").cards, 8);
}
