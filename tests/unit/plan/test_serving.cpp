// Serving capacity against the KV cache vLLM itself reported (docs/research/plan-measurements.md
// sections 2.2 and 3), each within ±10%. A row gives the card's total_gpu_memory as the log
// printed it, the utilization, the model, TP, max_model_len and the vLLM version whose profile
// rules apply (plan/serving.hpp: vllm_v0_engine, vllm_server_defaults); everything subtracted
// from the budget is the planner's own estimate, never the logged term.
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "plan/model_catalog.hpp"
#include "plan/serving.hpp"
#include "support/published_row.hpp"

using namespace gpuvet;
using gpuvet::testing::expect_published;

namespace {
constexpr double GiB = 1024.0 * 1024 * 1024;

const ModelArch& model(const char* k) {
    static ModelCatalog c = ModelCatalog::embedded();
    return c.find(k);
}

ServingCapacity serve(const char* key, double total_gib, double fraction, std::int64_t seq, int tp,
                      const ServingEngine& e, bool nvls = false) {
    Workload w;
    w.seq = seq;
    w.engine_memory_fraction = fraction;
    ServingCard card{"card", total_gib * GiB, nvls};
    return serving_capacity(model(key), w, card, tp, e);
}
}  // namespace

// VL-1: github.com/vllm-project/vllm/issues/10517, comment by kaspersiminski 2024-12-02, "20k - OK"
// log. Llama-3.1-8B-Instruct (catalog llama-3-8b: same shapes), 1 × RTX 3090 (total_gpu_memory
// 23.58 GiB), vLLM 0.6.4 (V0; its non_torch figure includes the context), util 0.90,
// max_model_len 20000 (no chunked prefill below 32K: the profile holds 20,000 tokens), TP 1.
// Counter: "# GPU blocks: 1952" → 31,232 tokens.
TEST(PlanServing, VL1_Llama31_8B_Rtx3090_20k) {
    ServingCapacity c = serve("llama-3-8b", 23.58, 0.90, 20000, 1, vllm_v0_engine(20000, true));
    expect_published("VL-1", double(c.kv_tokens), 31232, 0.10, "tokens", 1);
    // vLLM: "Maximum concurrency for 20000 tokens per request: 1.56x".
    EXPECT_NEAR(c.max_concurrency, 1.56, 0.156);
    EXPECT_TRUE(c.fits);
}

// VL-2: same comment, "29k - BAD": max_model_len 29000, otherwise as VL-1. Counter: 1478 blocks →
// 23,648 tokens ("larger than the maximum number of tokens that can be stored in KV cache
// (23648)"). KV is 14% of the budget here, so this row tests the profile's activation term.
TEST(PlanServing, VL2_Llama31_8B_Rtx3090_29k) {
    ServingCapacity c = serve("llama-3-8b", 23.58, 0.90, 29000, 1, vllm_v0_engine(29000, true));
    expect_published("VL-2", double(c.kv_tokens), 23648, 0.10, "tokens", 1);
    EXPECT_FALSE(c.fits);  // vLLM refused to start: 23,648 tokens < one request of 29,000
    EXPECT_FALSE(c.ideas.empty());
}

// VL-3: github.com/vllm-project/vllm/pull/10511 ("[core] overhaul memory profiling"), youkaichao
// comment 2024-12-14, `vllm serve meta-llama/Meta-Llama-3-8B` on 1 × H100 80GB (79.22 GiB), util
// 0.90, default max_model_len 8192, TP 1; the PR's accounting (vLLM 0.6.5: non-torch memory is the
// increase since the worker's baseline). Counter: "the rest of the memory reserved for KV Cache
// is 53.29GiB".
TEST(PlanServing, VL3_Llama3_8B_H100) {
    ServingCapacity c = serve("llama-3-8b", 79.22, 0.90, 8192, 1, vllm_v0_engine(8192, false));
    expect_published("VL-3", c.kv_bytes, 53.29 * GiB, 0.10);
}

// VL-4: same PR comment, `-tp 2` on 2 × H100 (NVSwitch: NVLS). The KV line is cut off in the
// excerpt; the logged terms (weights 7.48, non_torch 3.58, activation 1.26 GiB) leave 58.97 GiB
// per GPU — a derived figure. The NVLS term was fitted to this row's non-torch memory (serving.cpp),
// so the row checks the rest: weights ÷ 2, the activation at TP 2, and KV heads ÷ 2.
TEST(PlanServing, VL4_Llama3_8B_2xH100_Tp2) {
    ServingCapacity c = serve("llama-3-8b", 79.22, 0.90, 8192, 2, vllm_v0_engine(8192, false), true);
    expect_published("VL-4", c.kv_bytes, 58.97 * GiB, 0.10);
    EXPECT_EQ(c.kv_bytes_per_token, 65536);  // 32 layers × 4 of 8 KV heads × 128 × 2 × 2 B
}

// VL-6: github.com/vllm-project/vllm/pull/2031 ("Fix peak memory profiling"), WoosukKwon
// 2023-12-12: Llama-2-7B on 1 × A100-80GB, vLLM 0.2.x, util 0.90, TP 1. Counter: "# GPU blocks:
// 7351" after the fix → 117,616 tokens. The fix measures the memory in use after the profile
// (context included), as 0.6.4 did; max_model_len 4096 → a 4096-token profile. The total is not
// in the excerpt: 79.2 GiB is what CUDA reports for an A100-SXM4-80GB (research section 3).
TEST(PlanServing, VL6_Llama2_7B_A100_Dec2023) {
    ServingCapacity c = serve("llama-2-7b", 79.2, 0.90, 4096, 1, vllm_v0_engine(4096, true));
    expect_published("VL-6", double(c.kv_tokens), 117616, 0.10, "tokens", 1);
}

// VL-10: github.com/vllm-project/vllm/issues/10702 (2024-11-27): "llama 70B" on 8 × H200
// (total_gpu_memory 139.72 GiB), vLLM 0.6.4 log format, util 0.95, TP 8. Counter:
// "kv_cache_size 110.52 GiB" per GPU (the rank with the most non-torch memory; vLLM sizes all
// ranks by it). peak_torch 16.53 GiB − the 16.43 GiB Llama-3-70B shard leaves 0.10 GiB of
// activations, i.e. a 512-token chunked-prefill profile: max_model_len above 32K, Llama-3.1-70B's
// default 131072 (catalog llama-3-70b: same shapes). The NVLS term's TP-8 point is this row's
// non-torch figure, so it checks weights ÷ 8, the profile and the budget.
TEST(PlanServing, VL10_Llama31_70B_8xH200_Tp8) {
    ServingCapacity c = serve("llama-3-70b", 139.72, 0.95, 131072, 8, vllm_v0_engine(131072, true), true);
    expect_published("VL-10", c.kv_bytes, 110.52 * GiB, 0.10);
    EXPECT_EQ(c.kv_bytes_per_token, 40960);  // 80 layers × 1 of 8 KV heads × 128 × 2 × 2 B
}

// VL-8: github.com/vllm-project/vllm/issues/21348 (2025-07-22): Qwen3-235B-A22B-FP8 on 4 × H100,
// vLLM V1 (July 2025), TP 4, bf16 KV. Counter: "Available KV cache memory: 8.11 GiB; GPU KV cache
// size: 178,880 tokens". Only bytes per token are checked (the weights' FP8 block scales and an
// LMCache connector are not modelled): 94 layers × 1 of 4 KV heads × 128 × 2 × 2 B per GPU.
TEST(PlanServing, VL8_Qwen3_235B_4xH100_BytesPerToken) {
    double bpt = kv_bytes_per_token_per_gpu(model("qwen3-235b-a22b"), 2, 4);
    EXPECT_EQ(bpt, 48128);
    expect_published("VL-8", double(kv_tokens_in(8.11 * GiB, bpt, 16)), 178880, 0.10, "tokens", 1);
}

// VL-9: github.com/LMCache/LMCache/issues/1739 (2025-10-03): Qwen/Qwen3-14B, 1 GPU, vLLM V1,
// max_model_len 32,768, utilization lowered on purpose. Counter: "Available KV cache memory:
// 6.51 GiB; GPU KV cache size: 42,656 tokens"; "Maximum concurrency for 32,768 tokens per
// request: 1.30x". Bytes per token only: 40 layers × 8 KV heads × 128 × 2 × 2 B.
TEST(PlanServing, VL9_Qwen3_14B_BytesPerToken) {
    double bpt = kv_bytes_per_token_per_gpu(model("qwen3-14b"), 2, 1);
    EXPECT_EQ(bpt, 163840);
    std::int64_t tokens = kv_tokens_in(6.51 * GiB, bpt, 16);
    expect_published("VL-9", double(tokens), 42656, 0.10, "tokens", 1);
    EXPECT_NEAR(double(tokens) / 32768, 1.30, 0.01);
}

// SG-1: same issue as VL-8, SGLang log, `--tp 4 --mem-fraction-static 0.93`: "KV Cache is
// allocated. #tokens: 367404, K size: 8.23 GB, V size: 8.23 GB" (SGLang's "GB" is GiB). Bytes per
// token only; SGLang pages by the token (no 16-token blocks). SGLang's budget is not modelled.
TEST(PlanServing, SG1_Qwen3_235B_Sglang_BytesPerToken) {
    double bpt = kv_bytes_per_token_per_gpu(model("qwen3-235b-a22b"), 2, 4);
    expect_published("SG-1", double(kv_tokens_in(2 * 8.23 * GiB, bpt, 1)), 367404, 0.10, "tokens", 1);
}

// VL-11: github.com/vllm-project/vllm/issues/16570 (2025-04-15): Qwen2.5-VL-72B-Instruct on 4 ×
// A100-40GB (39.38 GiB), vLLM 0.8.3 (V0 worker), util 0.95, TP 4: KV 0.04–0.13 GiB, the engine
// fails to start. The planner has the text stack (catalog qwen2.5-72b), not the vision tower's
// weights and image profile, so its KV (≈3 GiB) is not held to the log; what must hold is the
// verdict at the model's default max_model_len (128,000): not one request fits.
TEST(PlanServing, VL11_Qwen25_VL_72B_4xA100_40GB_DoesNotFit) {
    ServingCapacity c = serve("qwen2.5-72b", 39.38, 0.95, 128000, 4, vllm_v0_engine(128000, false));
    EXPECT_FALSE(c.fits);
    EXPECT_LT(c.kv_bytes, 4.0 * GiB);
    EXPECT_NE(c.problem.find("less than one request"), std::string::npos) << c.problem;
}

// Not in the ±10% rows: VL-5 (Llama-3.2-11B-Vision, a 36.6 GiB profile of 128 image-bearing
// sequences: vision profiles are not modelled), VL-7 (Llama-2-70B TP 4, Dec 2023: its profiler
// left 13.7 GiB per GPU beside the weights that nothing here explains), TGI-1 (another engine).

TEST(PlanServing, NothingLeftSaysSoAndWhatWouldHelp) {
    // Llama-3-70B in bf16 on one 80 GiB card: the weights alone exceed the budget.
    ServingCapacity c = serve("llama-3-70b", 79.22, 0.90, 8192, 1, vllm_server_defaults(79.22 * GiB, "H100"));
    EXPECT_LE(c.kv_bytes, 0);
    EXPECT_EQ(c.kv_tokens, 0);
    EXPECT_FALSE(c.fits);
    EXPECT_NE(c.problem.find("nothing is left"), std::string::npos) << c.problem;
    std::string ideas;
    for (auto& i : c.ideas) ideas += i + "; ";
    EXPECT_EQ(ideas.rfind("2 cards (", 0), 0u) << ideas;  // 2 × 79.22 GiB hold the 131 GiB of weights
    EXPECT_NE(ideas.find("--dtype int4 ("), std::string::npos) << ideas;
    EXPECT_EQ(ideas.find("--kv-dtype fp8"), std::string::npos) << ideas;  // the weights alone do not fit
}

TEST(PlanServing, Fp8KvHalvesBytesAndAboutDoublesTokens) {
    Workload w;
    w.seq = 8192;
    w.engine_memory_fraction = 0.9;
    ServingCard card{"H100", 79.22 * GiB, false};
    ServingEngine e = vllm_server_defaults(card.total_bytes, card.name);
    ServingCapacity bf16 = serving_capacity(model("llama-3-8b"), w, card, 1, e);
    w.kv_dtype = "fp8";
    ServingCapacity fp8 = serving_capacity(model("llama-3-8b"), w, card, 1, e);
    EXPECT_EQ(fp8.kv_bytes_per_token * 2, bf16.kv_bytes_per_token);
    EXPECT_NEAR(double(fp8.kv_tokens) / double(bf16.kv_tokens), 2.0, 0.001);
    EXPECT_EQ(bf16.kv_tokens % 16, 0);
}

TEST(PlanServing, KvHeadsSplitOverRanksAndReplicateBeyondThem) {
    const ModelArch& m = model("llama-3-8b");  // 8 KV heads
    EXPECT_EQ(kv_bytes_per_token_per_gpu(m, 2, 1), 131072);
    EXPECT_EQ(kv_bytes_per_token_per_gpu(m, 2, 8), 16384);
    EXPECT_EQ(kv_bytes_per_token_per_gpu(m, 2, 16), 16384);  // 16 ranks, 8 heads: one head each
    const ModelArch& ds = model("deepseek-v3");              // MLA: the latent on every rank
    EXPECT_EQ(kv_bytes_per_token_per_gpu(ds, 2, 8), 61.0 * (512 + 64) * 2);
}

TEST(PlanServing, EngineDefaultsFollowTheCard) {
    ServingEngine big = vllm_server_defaults(79.2 * GiB, "H100 SXM5 80GB");
    EXPECT_EQ(big.max_batched_tokens, 8192);
    EXPECT_EQ(big.max_num_seqs, 1024);
    ServingEngine a100 = vllm_server_defaults(79.2 * GiB, "A100 SXM4 80GB");
    EXPECT_EQ(a100.max_batched_tokens, 2048);
    EXPECT_EQ(a100.max_num_seqs, 256);
    ServingEngine v0 = vllm_v0_engine(40000, true);
    EXPECT_TRUE(v0.chunked_prefill);
    EXPECT_EQ(v0.max_batched_tokens, 512);
}

TEST(PlanServing, ABareParameterCountHasNoKvShapes) {
    ModelArch fixed;
    fixed.model_type = "fixed";
    fixed.fixed_params = 7000000000;
    Workload w;
    ServingCard card{"card", 80 * GiB, false};
    EXPECT_THROW(serving_capacity(fixed, w, card, 1, vllm_server_defaults(card.total_bytes, "")), Error);
}
