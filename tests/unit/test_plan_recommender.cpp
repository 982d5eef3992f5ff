// The recommender: fewest cards per SKU, NVLink needed vs missing, the communication penalty and
// the wording when nothing fits.
#include <gtest/gtest.h>

#include <regex>

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
    EXPECT_TRUE(std::regex_match(r.suggestion, std::regex("needs [0-9]+× .+ with NVLink, or QLoRA on 1× .+")))
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
