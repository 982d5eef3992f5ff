// config.json quantization_config: the storage each method implies per quantized weight (scales,
// zero points, group indexes), the modules each method leaves unconverted as its library matches
// their names, the KV-cache dtype a config states, and methods the planner does not model refused
// by name.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "core/error.hpp"
#include "plan/hf_config.hpp"
#include "plan/model_catalog.hpp"
#include "plan/module_pattern.hpp"
#include "plan/quantization.hpp"

using namespace gpuvet;

namespace {
// A small llama-shaped config around the quantization_config under test.
std::string config_with(const std::string& quant, const std::string& extra = "") {
    return R"({"model_type":"llama","hidden_size":64,"intermediate_size":128,"num_attention_heads":4,
        "num_hidden_layers":2,"vocab_size":100,)" +
           extra + R"("quantization_config":)" + quant + "}";
}
const Quantization& quant_of(const ModelArch& m) {
    static const Quantization none;
    EXPECT_TRUE(m.quant);
    return m.quant ? *m.quant : none;
}
// Bits per weight of the default format on a 4096 × 4096 linear layer.
double bits_of(const std::string& quant) {
    ModelArch m = parse_hf_config(config_with(quant), "q.json");
    return quant_of(m).format.bits(4096, 4096) / (4096.0 * 4096);
}
std::string refusal(const std::string& cfg) {
    try {
        parse_hf_config(cfg, "q.json");
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::Input);
        return e.what();
    }
    ADD_FAILURE() << "accepted: " << cfg;
    return "";
}
std::string refusal_of(const std::string& quant) { return refusal(config_with(quant)); }
ModelArch fixture(const std::string& name) {
    return load_hf_config(std::string(GPUVET_TEST_DIR) + "/fixtures/plan/" + name);
}
const WeightPart* part(const Quantization& q, WeightPart::Kind kind, const std::string& dtype = "") {
    for (auto& p : q.parts)
        if (p.kind == kind && (dtype.empty() || p.dtype == dtype)) return &p;
    return nullptr;
}
bool has(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }
}  // namespace

// --- the pattern language of module lists: Python's re.match, run by an NFA ---

TEST(PlanQuantPattern, MatchesLikePythonReMatch) {
    auto p = NamePattern::compile(R"(.*\.layers\.(30|31)\.mlp\.down_proj)");
    EXPECT_TRUE(p.match_start("model.layers.31.mlp.down_proj"));
    EXPECT_FALSE(p.match_start("model.layers.3.mlp.down_proj"));
    // re.match anchors the start only; fullmatch the whole name.
    auto q = NamePattern::compile("model.layers.1");
    EXPECT_TRUE(q.match_start("model.layers.12.mlp.up_proj"));
    EXPECT_FALSE(q.match_whole("model.layers.12"));
    EXPECT_TRUE(NamePattern::compile(R"(model\.layers\.\d+\.self_attn\.[qkv]_proj$)")
                    .match_start("model.layers.7.self_attn.k_proj"));
    EXPECT_FALSE(NamePattern::compile(R"([^m].*)").match_start("model"));
    EXPECT_TRUE(NamePattern::compile(R"(x{2,3}y)").match_start("xxxy"));
    EXPECT_FALSE(NamePattern::compile(R"(x{2,3}y)").match_start("xy"));
    EXPECT_TRUE(NamePattern::compile(R"((?:a|b)+?c)").match_start("ababc"));
    EXPECT_TRUE(NamePattern::compile(R"(lm_head{)").match_start("lm_head{"));  // a literal brace, as in Python
    EXPECT_TRUE(NamePattern::compile("").match_start("anything"));
}

// Nested quantifiers explode a backtracking engine; the NFA answers at once, and what the
// subset does not cover is refused with the reason.
TEST(PlanQuantPattern, HostilePatternsAreBoundedOrRefused) {
    auto p = NamePattern::compile("(.*)*(.*)*(.*)*(x+x+)+y");
    EXPECT_FALSE(p.match_start(std::string(400, 'x')));
    for (const char* bad : {R"((a)\1)", "(?=a)", "a**", "[z-a]", "(a", "a)", "x{5,2}", R"(\b)", "*a"})
        EXPECT_THROW(NamePattern::compile(bad), std::invalid_argument) << bad;
    EXPECT_THROW(NamePattern::compile("(((a{64}){64}){64})"), std::invalid_argument);
    EXPECT_TRUE(is_literal_name("model.layers.0.mlp.down_proj"));
    EXPECT_FALSE(is_literal_name("model.layers.*.mlp"));
}

// --- storage per method ---

// fp8 with 128 × 128 blocks (DeepSeek-V3's and Qwen3-FP8's layout): e4m3 plus an fp32 scale per
// block; without blocks one scale per tensor; fbgemm_fp8 keeps an fp32 scale per output row.
TEST(PlanQuantConfig, Fp8ScalesPerBlockTensorOrRow) {
    EXPECT_DOUBLE_EQ(bits_of(R"({"quant_method":"fp8","activation_scheme":"dynamic","fmt":"e4m3",
        "weight_block_size":[128,128]})"),
                     8.0 + 32.0 / 16384);
    EXPECT_DOUBLE_EQ(bits_of(R"({"quant_method":"fp8","activation_scheme":"dynamic"})"), 8.0 + 32.0 / (4096.0 * 4096));
    EXPECT_DOUBLE_EQ(bits_of(R"({"quant_method":"fbgemm_fp8","activation_scale_ub":1200.0})"), 8.0 + 32.0 / 4096);
    std::string bad = refusal_of(R"({"quant_method":"fp8","weight_block_size":[128]})");
    EXPECT_TRUE(has(bad, "weight_block_size")) << bad;
}

// GPTQ: bits, an fp16 scale and a packed zero point per group, and an int32 g_idx per input
// column; group_size -1 is one scale per output row. AWQ has no g_idx.
TEST(PlanQuantConfig, GptqAndAwqGroups) {
    EXPECT_DOUBLE_EQ(bits_of(R"({"quant_method":"gptq","bits":4,"group_size":128,"desc_act":false})"),
                     4.0 + 20.0 / 128 + 32.0 / 4096);
    EXPECT_DOUBLE_EQ(bits_of(R"({"quant_method":"gptq","bits":8,"group_size":-1})"), 8.0 + 24.0 / 4096 + 32.0 / 4096);
    EXPECT_DOUBLE_EQ(bits_of(R"({"bits":4,"group_size":128,"modules_to_not_convert":null,
        "quant_method":"awq","version":"gemm","zero_point":true})"),
                     4.0 + 20.0 / 128);
    EXPECT_DOUBLE_EQ(bits_of(R"({"quant_method":"awq","w_bit":4,"q_group_size":64,"zero_point":false})"),
                     4.0 + 16.0 / 64);
}

// bitsandbytes: 4-bit with an fp32 absmax per 64 (double quantization: 8-bit absmax + an fp32 per
// 256 blocks); LLM.int8() with an fp32 statistic per row; the method may be left implicit.
TEST(PlanQuantConfig, BitsandbytesBlocksAndRows) {
    EXPECT_NEAR(bits_of(R"({"load_in_4bit":true,"bnb_4bit_quant_type":"nf4"})"), 4.5, 1e-12);
    EXPECT_NEAR(bits_of(R"({"quant_method":"bitsandbytes","load_in_4bit":true,"bnb_4bit_use_double_quant":true})"),
                4.0 + 8.125 / 64, 1e-12);
    EXPECT_NEAR(bits_of(R"({"quant_method":"bitsandbytes","load_in_8bit":true})"), 8.0 + 32.0 / 4096, 1e-12);
    std::string none = refusal_of(R"({"quant_method":"bitsandbytes","load_in_4bit":false})");
    EXPECT_TRUE(has(none, "neither load_in_4bit nor load_in_8bit")) << none;
}

// compressed-tensors: each config_groups entry's scheme (W4A16 groups, FP8 channels, asymmetric
// zero points, int-quantized's 8-bit containers), "Linear" targets, and the KV-cache scheme.
TEST(PlanQuantConfig, CompressedTensorsSchemes) {
    EXPECT_DOUBLE_EQ(bits_of(R"({"quant_method":"compressed-tensors","format":"pack-quantized",
        "config_groups":{"group_0":{"targets":["Linear"],"weights":{"num_bits":4,"type":"int",
        "symmetric":true,"strategy":"group","group_size":128}}},"ignore":["lm_head"]})"),
                     4.0 + 16.0 / 128);
    EXPECT_DOUBLE_EQ(bits_of(R"({"quant_method":"compressed-tensors","format":"float-quantized",
        "config_groups":{"group_0":{"targets":["Linear"],"weights":{"num_bits":8,"type":"float",
        "strategy":"channel"}}},"ignore":["lm_head"]})"),
                     8.0 + 16.0 / 4096);
    EXPECT_DOUBLE_EQ(bits_of(R"({"quant_method":"compressed-tensors","format":"pack-quantized",
        "config_groups":{"group_0":{"targets":["Linear"],"weights":{"num_bits":4,"type":"int",
        "symmetric":false,"strategy":"group","group_size":64}}}})"),
                     4.0 + 20.0 / 64);
    EXPECT_DOUBLE_EQ(bits_of(R"({"quant_method":"compressed-tensors","format":"int-quantized",
        "config_groups":{"group_0":{"targets":["Linear"],"weights":{"num_bits":4,"type":"int",
        "strategy":"channel"}}}})"),
                     8.0 + 16.0 / 4096);
    ModelArch kv = parse_hf_config(config_with(R"({"quant_method":"compressed-tensors","format":"float-quantized",
        "config_groups":{"group_0":{"targets":["Linear"],"weights":{"num_bits":8,"type":"float","strategy":"tensor"}}},
        "kv_cache_scheme":{"num_bits":8,"type":"float","strategy":"tensor"}})"),
                                   "q.json");
    EXPECT_EQ(quant_of(kv).kv_cache_dtype.value_or(""), "fp8");
    std::string bad = refusal_of(R"({"quant_method":"compressed-tensors","config_groups":{"group_0":
        {"targets":["Linear"],"weights":{"num_bits":7}}}})");
    EXPECT_TRUE(has(bad, "num_bits = 7")) << bad;
    std::string empty = refusal_of(R"({"quant_method":"compressed-tensors"})");
    EXPECT_TRUE(has(empty, "no config_groups")) << empty;
    std::string fmt = refusal_of(R"({"quant_method":"compressed-tensors","format":"sparse-24-bitmask",
        "config_groups":{"group_0":{"targets":["Linear"],"weights":{"num_bits":8}}}})");
    EXPECT_TRUE(has(fmt, "format 'sparse-24-bitmask'")) << fmt;
    std::string kv4 = refusal_of(R"({"quant_method":"compressed-tensors","config_groups":{"group_0":
        {"targets":["Linear"],"weights":{"num_bits":8}}},"kv_cache_scheme":{"num_bits":4,"type":"int"}})");
    EXPECT_TRUE(has(kv4, "kv_cache_scheme")) << kv4;
}

// --- modules left unconverted, matched as each library matches them ---

// transformers (bitsandbytes, fp8, fbgemm_fp8): an entry matches the name's start as re.match does,
// or its end; compressed-tensors: the whole name or a "re:" regex; AWQ: any part of the name.
TEST(PlanQuantConfig, UnconvertedModulesPerMethod) {
    auto kept = [](const std::string& quant) {
        ModelArch m = parse_hf_config(config_with(quant), "q.json");
        const WeightPart* p = part(quant_of(m), WeightPart::Unconverted);
        return p ? p->modules : std::string("(none)");
    };
    EXPECT_EQ(kept(R"({"quant_method":"fbgemm_fp8","modules_to_not_convert":["model.layers.1.mlp.up_proj"]})"),
              "up_proj: layer 1");
    EXPECT_EQ(kept(R"({"load_in_8bit":true,"llm_int8_skip_modules":["mlp.down_proj"]})"), "down_proj: all 2 layers");
    EXPECT_EQ(kept(R"({"quant_method":"fp8","ignored_layers":["model.layers.0.self_attn"]})"),
              "q_proj, k_proj, v_proj, o_proj: layer 0");
    EXPECT_EQ(kept(R"({"quant_method":"awq","modules_to_not_convert":["layers.1.","o_proj"]})"),
              "q_proj, k_proj, v_proj, gate_proj, up_proj, down_proj: layer 1; o_proj: all 2 layers");
    EXPECT_EQ(kept(R"({"quant_method":"compressed-tensors","config_groups":{"group_0":{"targets":["Linear"],
        "weights":{"num_bits":8,"type":"float","strategy":"channel"}}},
        "ignore":["lm_head","re:.*layers\\.0\\.mlp\\..*","model.layers.1.self_attn.v_proj"]})"),
              "v_proj: layer 1; gate_proj, up_proj, down_proj: layer 0");
    // A compressed-tensors entry is a whole name: a prefix leaves nothing unconverted.
    EXPECT_EQ(kept(R"({"quant_method":"compressed-tensors","config_groups":{"group_0":{"targets":["Linear"],
        "weights":{"num_bits":8,"type":"float","strategy":"channel"}}},"ignore":["model.layers.0"]})"),
              "(none)");
}

// A module no config_groups entry targets keeps its dtype; a name or regex target wins over the
// "Linear" class target, whatever the order of the groups.
TEST(PlanQuantConfig, CompressedTensorsTargetsDecide) {
    ModelArch m = parse_hf_config(config_with(R"({"quant_method":"compressed-tensors","format":"pack-quantized",
        "config_groups":{"group_0":{"targets":["Linear"],"weights":{"num_bits":8,"type":"int","strategy":"channel"}},
        "group_1":{"targets":["re:.*mlp\\.down_proj"],"weights":{"num_bits":4,"type":"int","strategy":"group",
        "group_size":32}}}})"),
                                  "q.json");
    const WeightPart* int4 = part(quant_of(m), WeightPart::Quantized, "int4");
    ASSERT_NE(int4, nullptr);
    EXPECT_EQ(int4->modules, "down_proj: all 2 layers");
    ModelArch only = parse_hf_config(config_with(R"({"quant_method":"compressed-tensors","config_groups":{"group_0":
        {"targets":["re:.*self_attn.*"],"weights":{"num_bits":8,"type":"float","strategy":"tensor"}}}})"),
                                     "q.json");
    const WeightPart* u = part(quant_of(only), WeightPart::Unconverted);
    ASSERT_NE(u, nullptr);
    EXPECT_EQ(u->why, "no config_groups target");
    EXPECT_EQ(u->params, 2 * 3 * 64 * 128);  // gate, up and down of both layers
}

// GPTQ: dynamic "-:" leaves modules unconverted and "+:" changes their bits (first key wins, in
// the file's order); modules_in_block_to_quantize limits the rest; lm_head: true quantizes the head.
TEST(PlanQuantConfig, GptqDynamicBlocksAndHead) {
    ModelArch m = fixture("config_gptq_dynamic.json");
    const Quantization& q = quant_of(m);
    const WeightPart* kept = part(q, WeightPart::Unconverted);
    ASSERT_NE(kept, nullptr);
    EXPECT_EQ(kept->modules, "q_proj, k_proj, v_proj, o_proj, gate_proj, up_proj, down_proj: layer 0");
    EXPECT_EQ(kept->dtype, "fp16");
    const WeightPart* int8 = part(q, WeightPart::Quantized, "int8");
    ASSERT_NE(int8, nullptr);
    EXPECT_EQ(int8->modules, "down_proj: layers 30, 31");
    WeightFormat g8 = WeightFormat::of("int8", 8);
    g8.group = 32;
    g8.group_bits = 16 + 8;  // fp16 scale + 8-bit zero point
    g8.column_bits = 32;     // g_idx
    EXPECT_DOUBLE_EQ(int8->bytes * 8, 2 * g8.bits(14336, 4096));
    ModelArch blocks = parse_hf_config(config_with(R"({"quant_method":"gptq","bits":4,"group_size":128,"lm_head":true,
        "modules_in_block_to_quantize":[["self_attn.q_proj","self_attn.k_proj"],["mlp.down_proj"]]})"),
                                       "q.json");
    const Quantization& b = quant_of(blocks);
    EXPECT_EQ(part(b, WeightPart::Quantized)->modules, "q_proj, k_proj, down_proj: all 2 layers; lm_head");
    EXPECT_EQ(part(b, WeightPart::Unconverted)->why, "not in modules_in_block_to_quantize");
    EXPECT_EQ(part(b, WeightPart::Rest)->modules, "embeddings, norms");  // the head is quantized
}

// Every module, quantized or not, is counted once: the parts add up to the model's parameters,
// and the rest (embeddings, lm_head, norms) keeps torch_dtype — 4 B in a float32 checkpoint.
TEST(PlanQuantConfig, PartsCoverTheModelAtItsDtype) {
    ModelArch m = parse_hf_config(config_with(R"({"quant_method":"fbgemm_fp8","modules_to_not_convert":["lm_head"]})",
                                              R"("torch_dtype":"float32",)"),
                                  "q.json");
    const Quantization& q = quant_of(m);
    std::int64_t sum = 0;
    for (auto& p : q.parts) sum += p.params;
    EXPECT_EQ(sum, parameter_count(m));
    const WeightPart* rest = part(q, WeightPart::Rest);
    ASSERT_NE(rest, nullptr);
    EXPECT_EQ(rest->dtype, "fp32");
    EXPECT_DOUBLE_EQ(rest->bytes, 4.0 * double(rest->params));
    EXPECT_EQ(rest->modules, "embeddings, lm_head, norms");
    std::string dt = refusal(config_with(R"({"quant_method":"fp8"})", R"("torch_dtype":"float8",)"));
    EXPECT_TRUE(has(dt, "torch_dtype 'float8'")) << dt;
}

// Meta's FP8 405B as the catalog carries it: fbgemm_fp8 on the feed-forward of layers 1–124,
// bf16 for every attention projection, the first and last feed-forward, and lm_head.
TEST(PlanQuantConfig, Llama405bFp8FollowsThePublishedLayout) {
    static ModelCatalog c = ModelCatalog::embedded();
    const ModelArch& m = c.find("meta-llama/Llama-3.1-405B-Instruct-FP8");
    const Quantization& q = quant_of(m);
    EXPECT_EQ(q.method, "fbgemm_fp8");
    EXPECT_EQ(q.not_converted.text.size(), 511u);
    const double ffn = 3.0 * 16384 * 53248;
    const WeightPart* fp8 = part(q, WeightPart::Quantized);
    ASSERT_NE(fp8, nullptr);
    EXPECT_EQ(fp8->modules, "gate_proj, up_proj, down_proj: layers 1–124");
    EXPECT_EQ(fp8->params, std::int64_t(124 * ffn));
    const WeightPart* bf16 = part(q, WeightPart::Unconverted);
    ASSERT_NE(bf16, nullptr);
    EXPECT_EQ(bf16->modules,
              "q_proj, k_proj, v_proj, o_proj: all 126 layers; gate_proj, up_proj, down_proj: layers 0, 125");
    EXPECT_EQ(bf16->why, "modules_to_not_convert");
    const double attn = 2.0 * 16384 * 16384 + 2.0 * 16384 * 1024;
    EXPECT_EQ(bf16->params, std::int64_t(126 * attn + 2 * ffn));
    // The config.json fixture reads the same.
    ModelArch f = fixture("config_llama405b_fbgemm_fp8.json");
    EXPECT_DOUBLE_EQ(quant_of(f).weight_bytes(), q.weight_bytes());
}

// Routed experts, fused projections and other families are named as their checkpoints name them.
TEST(PlanQuantConfig, ModuleNamesFollowEachFamily) {
    static ModelCatalog c = ModelCatalog::embedded();
    EXPECT_EQ(module_name(c.find("mixtral-8x7b"), "experts.gate_proj", 3, 5),
              "model.layers.3.block_sparse_moe.experts.5.w1");
    EXPECT_EQ(module_name(c.find("deepseek-v3"), "shared_experts.down_proj", 9),
              "model.layers.9.mlp.shared_experts.down_proj");
    EXPECT_EQ(module_name(c.find("starcoder"), "k_proj", 2), "transformer.h.2.attn.c_attn");
    EXPECT_EQ(module_name(c.find("bert-base"), "o_proj", 1), "bert.encoder.layer.1.attention.output.dense");
    EXPECT_EQ(module_name(c.find("llama-3-8b"), "down_proj", 31), "model.layers.31.mlp.down_proj");
}

// Lists are bounded, mistyped or unmatchable entries named, and a model with more modules than
// the planner matches is refused rather than walked for minutes.
TEST(PlanQuantConfig, BadListsAreNamed) {
    std::string typed = refusal_of(R"({"quant_method":"fbgemm_fp8","modules_to_not_convert":"lm_head"})");
    EXPECT_TRUE(has(typed, "modules_to_not_convert must be a list of module names")) << typed;
    std::string re = refusal_of(R"({"quant_method":"fp8","modules_to_not_convert":["model.(layers"]})");
    EXPECT_TRUE(has(re, "'model.(layers' is not a pattern the planner can match")) << re;
    std::string dyn = refusal_of(R"({"quant_method":"gptq","dynamic":{"+:.*":4}})");
    EXPECT_TRUE(has(dyn, "must map to an object")) << dyn;
    std::string huge = refusal(R"({"model_type":"mixtral","hidden_size":8,"intermediate_size":8,"num_attention_heads":1,
        "num_hidden_layers":100000,"vocab_size":8,"num_local_experts":64,"num_experts_per_tok":1,
        "quantization_config":{"quant_method":"awq","modules_to_not_convert":["gate"]}})");
    EXPECT_TRUE(has(huge, "modules to match")) << huge;
}

// Methods whose storage is not modelled are refused by name, listing the ones that are.
TEST(PlanQuantConfig, UnknownMethodsAreRefusedByName) {
    std::string mx = refusal_of(R"({"quant_method":"mxfp4","modules_to_not_convert":["model.layers.*.self_attn"]})");
    EXPECT_TRUE(has(mx, "quant_method 'mxfp4' is not a method the planner models")) << mx;
    EXPECT_TRUE(has(mx, "known: bitsandbytes, gptq, awq, fp8, fbgemm_fp8, compressed-tensors")) << mx;
    std::string none = refusal_of(R"({"bits":4})");
    EXPECT_TRUE(has(none, "has no quant_method")) << none;
    std::string odd = refusal_of(R"({"quant_method":"a\u0007b"})");
    EXPECT_TRUE(has(odd, "'a?b'")) << odd;
}
