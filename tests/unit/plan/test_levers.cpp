// The levers: each one's saving on the workload against the figure worked out by hand from the
// architecture and the item rules of docs/plan.md, their order, and the lighter idea they give.
#include <gtest/gtest.h>

#include <algorithm>

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
const Lever* lever(const Recommendation& r, const std::string& key) {
    for (auto& v : r.levers.levers)
        if (v.key == key) return &v;
    return nullptr;
}
// Llama-3's block linears per layer: q and o (h × h), k and v (h × kv·d), gate, up, down (h × i).
double llama_linears(double h, double kv, double i, double layers) {
    return layers * (2 * h * h + 2 * h * kv * 128 + 3 * h * i);
}
constexpr double kP8 = 8030261248, kP70 = 70553706496;
}  // namespace

// The example: LoRA on Llama-3-70B at 4096 tokens. Checkpointing keeps one bf16 hidden
// state per token and layer instead of each block's tensors, and brings 4× H100 80GB in.
TEST(PlanLevers, CheckpointingOnTheSeventyBillionLora) {
    Workload w;
    w.task = Task::Lora;
    w.seq = 4096;
    const ModelArch& m = model("llama-3-70b");
    Recommendation r = rec(m, w);
    ASSERT_TRUE(r.levers.shown) << r.levers.why;
    ASSERT_FALSE(r.levers.levers.empty());
    const Lever& ck = r.levers.levers.front();
    EXPECT_EQ(ck.key, "checkpointing");
    EXPECT_EQ(ck.option, "--checkpointing");
    EXPECT_NEAR(ck.need_before_bytes / GiB, 312, 312 * 0.03);
    EXPECT_NEAR(ck.need_bytes / GiB, 174, 174 * 0.03);
    // By hand: the saved activations go from the plan's per-layer block tensors to 80 × 4096 × 8192 × 2 B.
    MemoryPlan before = plan_memory(m, w, 1);
    double kept = 80.0 * 4096 * 8192 * 2;
    double saved_act = before.item("activations") - kept;
    EXPECT_NEAR(ck.saved_bytes(), 1.2 * saved_act, 1e6);
    bool h100 = false;
    for (auto& c : ck.brings) h100 = h100 || (c.spec->key == "h100-sxm5-80gb" && c.cards == 4);
    EXPECT_TRUE(h100);
    // The lighter idea is the first lever on fewer cards: one B200 holds the checkpointed 174 GiB.
    EXPECT_NE(r.suggestion.find("lighter: --checkpointing on 1× B200"), std::string::npos) << r.suggestion;
    // Recompute is one more forward: LoRA's 4·N FLOPs per token become 6·N.
    EXPECT_NE(ck.price.find("4·N → 6·N"), std::string::npos) << ck.price;
}

// QLoRA quantizes the frozen linears to NF4 with double quantization (4.127 bits): the rest stays bf16.
TEST(PlanLevers, QloraSavesTheFrozenLinearsBytes) {
    Workload w;
    w.task = Task::Lora;
    w.seq = 4096;
    Recommendation r = rec(model("llama-3-70b"), w);
    const Lever* q = lever(r, "qlora");
    ASSERT_NE(q, nullptr);
    double lin = llama_linears(8192, 8, 28672, 80);
    double nf4 = 4.0 + 8.0 / 64 + 32.0 / (64 * 256);
    EXPECT_NEAR(q->saved_bytes(), 1.2 * lin * (2 - nf4 / 8), 1e6);
    EXPECT_EQ(q->option, "--task qlora");
}

// A smaller micro-batch: batch 8 → 1 with 8 micro-steps. The saved tensors and the logits are an
// eighth; the gradients persist over the micro-steps, so they are alive at the loss too.
TEST(PlanLevers, MicroBatchWithAccumulation) {
    Workload w;
    w.task = Task::FullFinetune;
    w.batch = 8;
    w.seq = 1024;
    const ModelArch& m = model("llama-3-8b");
    Recommendation r = rec(m, w);
    const Lever* g = lever(r, "grad-accum");
    ASSERT_NE(g, nullptr);
    EXPECT_EQ(g->option, "--batch 1 --grad-accum 8");
    MemoryPlan b = plan_memory(m, w, 1);
    double states = 16 * kP8 + 0.5 * GiB;  // mixed-adamw 2 + 2 + 12 B, the CUDA context
    double act = b.item("activations") / 8, logits = b.item("logits") / 8, block = b.item("backward_block") / 8;
    double peak = std::max({states + act + logits, states + act + block, states + block});
    EXPECT_NEAR(g->need_bytes, 1.2 * peak, 1e6);
}

// ZeRO-Offload on one card: ZeRO-2 with the optimizer on the host leaves the bf16 weights (2 B per
// parameter, DeepSpeed's estimate) and the activations; 4 B per parameter cross PCIe per step.
TEST(PlanLevers, OptimizerOffloadKeepsOnlyTheWeights) {
    Workload w;
    w.task = Task::FullFinetune;
    w.seq = 2048;
    const ModelArch& m = model("llama-3-8b");
    Recommendation r = rec(m, w);
    const Lever* o = lever(r, "offload-optimizer");
    ASSERT_NE(o, nullptr);
    EXPECT_EQ(o->option, "--zero 2 --offload-optimizer");
    MemoryPlan b = plan_memory(m, w, 1);
    double always = 2 * kP8 + 0.5 * GiB;
    double act = b.item("activations"), logits = b.item("logits"), block = b.item("backward_block");
    double peak = std::max({always + act + logits, always + act + block, always + block});
    EXPECT_NEAR(o->need_bytes, 1.2 * peak, 1e6);
    EXPECT_NE(o->price.find("32.1 GB per card"), std::string::npos) << o->price;
}

// 8-bit AdamW: 12 B of fp32 master and states become 2 B of 8-bit states, alive at every moment.
TEST(PlanLevers, EightBitOptimizerSavesTenBytesPerParameter) {
    Workload w;
    w.task = Task::FullFinetune;
    Recommendation r = rec(model("llama-3-8b"), w);
    const Lever* e = lever(r, "adamw-8bit");
    ASSERT_NE(e, nullptr);
    EXPECT_NEAR(e->saved_bytes(), 1.2 * 10 * kP8, 1e6);
}

// A paged 8-bit optimizer: the 12 B of fp32 master and states become 2 B of 8-bit states in
// unified memory, outside the need; weights (2 B) stay, gradients (2 B) join at the end of backward.
TEST(PlanLevers, PagedOptimizerLeavesTheStatesOutOfTheNeed) {
    Workload w;
    w.task = Task::FullFinetune;
    const ModelArch& m = model("llama-3-8b");
    Recommendation r = rec(m, w);
    const Lever* pg = lever(r, "paged-adamw-8bit");
    ASSERT_NE(pg, nullptr);
    EXPECT_EQ(pg->option, "--recipe paged-adamw-8bit");
    MemoryPlan b = plan_memory(m, w, 1);
    double ctx = 0.5 * GiB, act = b.item("activations"), logits = b.item("logits"), block = b.item("backward_block");
    double peak = std::max({2 * kP8 + ctx + act + logits, 2 * kP8 + ctx + act + block, 4 * kP8 + ctx + block});
    EXPECT_NEAR(pg->need_bytes, 1.2 * peak, 1e6);
    // It comes right after the 8-bit optimizer: the same states, paged.
    std::vector<std::string> keys;
    for (auto& v : r.levers.levers) keys.push_back(v.key);
    auto at = std::find(keys.begin(), keys.end(), "paged-adamw-8bit");
    ASSERT_NE(at, keys.begin());
    EXPECT_EQ(*(at - 1), "adamw-8bit");
}

// A shorter sequence: with flash attention every saved tensor, the logits and the backward block
// are per token, so --seq 4096 halves each of them; the states stay.
TEST(PlanLevers, ShorterSequenceHalvesTheTokenTerms) {
    Workload w;
    w.task = Task::FullFinetune;
    w.seq = 8192;
    const ModelArch& m = model("llama-3-8b");
    Recommendation r = rec(m, w);
    const Lever* sq = lever(r, "seq");
    ASSERT_NE(sq, nullptr);
    EXPECT_EQ(sq->option, "--seq 4096");
    MemoryPlan b = plan_memory(m, w, 1);
    // mixed-adamw on one card: bf16 weights and the 12 B of fp32 states at every moment, the bf16
    // gradients at the end of backward only.
    double states = 14 * kP8 + 0.5 * GiB, grads = 2 * kP8;
    double act = b.item("activations") / 2, logits = b.item("logits") / 2, block = b.item("backward_block") / 2;
    double peak = std::max({states + act + logits, states + act + block, states + grads + block});
    EXPECT_NEAR(sq->need_bytes, 1.2 * peak, 1e6);
    EXPECT_NE(sq->price.find("longer than 4096 tokens"), std::string::npos) << sq->price;
}

// More cards: the card table's best row, planned as DeepSpeed's ZeRO-3 estimator counts it on N
// cards — the largest layer (the 128256 × 8192 embedding) gathered in fp32 and 18 B per parameter
// ÷ N — beside the per-card activations of the asked micro-batch.
TEST(PlanLevers, MoreCardsIsTheBestRowOnZero3) {
    Workload w;
    w.task = Task::FullFinetune;
    w.batch = 2;
    w.seq = 2048;
    const ModelArch& m = model("llama-3-70b");
    Recommendation r = rec(m, w);
    const Lever* c = lever(r, "cards");
    ASSERT_NE(c, nullptr);
    ASSERT_EQ(c->brings.size(), 1u);
    const int n = c->gpus;
    EXPECT_EQ(c->option, "--gpus " + std::to_string(n));
    EXPECT_EQ(c->brings.front().cards, n);
    MemoryPlan one = plan_memory(m, w, 1);
    double L = 128256.0 * 8192;
    double act = one.item("activations"), logits = one.item("logits"), block = one.item("backward_block");
    double peak = 4 * L + 18 * kP70 / n + 0.5 * GiB + act + std::max(logits, block);
    EXPECT_NEAR(c->need_bytes, 1.2 * peak, 64 * 1.2);  // DeepSpeed truncates 18·P/N to whole bytes
    EXPECT_NE(c->price.find(std::to_string(n) + "× " + c->brings.front().spec->name), std::string::npos) << c->price;
}

// Sharding the weights over the asked 8 cards (ZeRO-2 → ZeRO-3, bf16-adamw): each card keeps an
// eighth of the 2 B weights, plus two gathered copies of the largest layer (the 128256 × 4096
// embedding) in bf16.
TEST(PlanLevers, ShardingTheWeightsOnTheAskedCards) {
    Workload w;
    w.task = Task::FullFinetune;
    w.recipe = "bf16-adamw";
    w.gpus = 8;
    w.zero_stage = 2;
    Recommendation r = rec(model("llama-3-8b"), w);
    const Lever* z = lever(r, "zero3");
    ASSERT_NE(z, nullptr);
    EXPECT_EQ(z->option, "--zero 3");
    EXPECT_EQ(z->gpus, 8);
    double L = 128256.0 * 4096;
    EXPECT_NEAR(z->saved_bytes(), 1.2 * (2 * kP8 * 7 / 8 - 2 * 2 * L), 1e6);
}

// Inference: an fp8 KV cache halves 8 × 8192 tokens × 80 layers × 2 × 8 heads × 128 × 2 B; int4
// weights keep the embeddings in 16 bits and store the rest at half a byte.
TEST(PlanLevers, InferenceKvAndWeights) {
    Workload w;
    w.batch = 8;
    w.seq = 8192;
    const ModelArch& m = model("llama-3-70b");
    Recommendation r = rec(m, w);
    ASSERT_TRUE(r.levers.shown);
    const Lever* kv = lever(r, "kv-fp8");
    ASSERT_NE(kv, nullptr);
    double kv_bytes = 8.0 * 8192 * 80 * 2 * 8 * 128 * 2;
    EXPECT_NEAR(kv->saved_bytes(), 1.2 * kv_bytes / 2, 1e6);
    const Lever* i4 = lever(r, "weights-int4");
    ASSERT_NE(i4, nullptr);
    double emb = 2 * 128256.0 * 8192;
    EXPECT_NEAR(i4->saved_bytes(), 1.2 * (kP70 - emb) * 1.5, 1e6);
    EXPECT_EQ(i4->option, "--dtype int4");
}

// The order is the cost to the job: recompute, accumulation, sharding, offload, 8-bit states,
// quantized weights, a shorter sequence, then more cards; each saves memory on the asked card or
// brings cards into the table.
TEST(PlanLevers, CheapestToTheJobFirst) {
    Workload w;
    w.task = Task::FullFinetune;
    w.batch = 2;
    w.seq = 2048;
    Recommendation r = rec(model("llama-3-70b"), w);
    const std::vector<std::string> order = {"checkpointing", "grad-accum",       "zero3", "offload-optimizer",
                                            "adamw-8bit",    "paged-adamw-8bit", "qlora", "seq",
                                            "cards"};
    std::vector<std::string> got;
    for (auto& v : r.levers.levers) {
        got.push_back(v.key);
        // On one card the states set the peak: checkpointing saves nothing there and accumulation
        // adds the kept gradients, yet both hold the job on fewer of the table's cards.
        EXPECT_TRUE(v.saved_bytes() > 0 || !v.brings.empty()) << v.key;
        EXPECT_FALSE(v.price.empty()) << v.key;
    }
    EXPECT_EQ(got, order);
    // Each need is the memory model's with the lever applied, on the stated cards.
    Workload ck = w;
    ck.checkpointing = true;
    EXPECT_DOUBLE_EQ(lever(r, "checkpointing")->need_bytes, plan_memory(model("llama-3-70b"), ck, 1).need_per_gpu);
    EXPECT_LT(lever(r, "grad-accum")->saved_bytes(), 0);  // the gradients now meet the activations
    EXPECT_NE(r.suggestion.find("lighter: --checkpointing on "), std::string::npos) << r.suggestion;
}

// A job that fits one workstation card lists no levers; one already checkpointed does not offer it again.
TEST(PlanLevers, ShownOnlyForManyOrLargeCards) {
    Workload w;
    w.task = Task::Qlora;
    w.checkpointing = true;
    Recommendation r = rec(model("llama-3-8b"), w);
    EXPECT_FALSE(r.levers.shown) << r.levers.why;
    Workload f;
    f.task = Task::FullFinetune;
    f.checkpointing = true;
    Recommendation rf = rec(model("llama-3-8b"), f);
    EXPECT_TRUE(rf.levers.shown);
    EXPECT_EQ(lever(rf, "checkpointing"), nullptr);
    bool said = false;
    for (auto& n : rf.levers.not_applicable) said = said || n == "--checkpointing (already on)";
    EXPECT_TRUE(said);
}
