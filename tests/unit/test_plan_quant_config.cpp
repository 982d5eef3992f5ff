// config.json quantization_config: the storage each known method implies per quantized weight,
// and a method the planner does not model refused by name.
#include <gtest/gtest.h>

#include <string>

#include "core/error.hpp"
#include "plan/hf_config.hpp"

using namespace gpuvet;

namespace {
// A small llama-shaped config around the quantization_config under test.
std::string config_with(const std::string& quant) {
    return R"({"model_type":"llama","hidden_size":64,"intermediate_size":128,"num_attention_heads":4,
        "num_hidden_layers":2,"vocab_size":100,"quantization_config":)" +
           quant + "}";
}
double bits_of(const std::string& quant) {
    ModelArch m = parse_hf_config(config_with(quant), "q.json");
    EXPECT_TRUE(m.quantized_bits) << quant;
    return m.quantized_bits.value_or(0);
}
std::string refusal(const std::string& quant) {
    try {
        parse_hf_config(config_with(quant), "q.json");
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::Input);
        return e.what();
    }
    ADD_FAILURE() << "accepted: " << quant;
    return "";
}
}  // namespace

// fp8 with 128 × 128 blocks (DeepSeek-V3's and Qwen3-FP8's layout): e4m3 plus an fp32 scale per
// block, 8 + 32/16384 bits; without blocks one scale per tensor.
TEST(PlanQuantConfig, Fp8BlockScales) {
    EXPECT_DOUBLE_EQ(bits_of(R"({"quant_method":"fp8","activation_scheme":"dynamic","fmt":"e4m3",
        "weight_block_size":[128,128]})"),
                     8.0 + 32.0 / 16384);
    EXPECT_DOUBLE_EQ(bits_of(R"({"quant_method":"fp8","activation_scheme":"dynamic"})"), 8.0);
    EXPECT_DOUBLE_EQ(bits_of(R"({"quant_method":"fbgemm_fp8","activation_scale_ub":1200.0})"), 8.0);
    std::string bad = refusal(R"({"quant_method":"fp8","weight_block_size":[128]})");
    EXPECT_NE(bad.find("weight_block_size"), std::string::npos) << bad;
}

// compressed-tensors W4A16 (llm-compressor's int4 group scheme): 4 bits and a bf16 scale per 128
// weights; the FP8 scheme (per-channel) is 8 bits; no scheme stated reads as FP8.
TEST(PlanQuantConfig, CompressedTensorsSchemes) {
    EXPECT_DOUBLE_EQ(bits_of(R"({"quant_method":"compressed-tensors","format":"pack-quantized",
        "config_groups":{"group_0":{"targets":["Linear"],"weights":{"num_bits":4,"type":"int",
        "symmetric":true,"strategy":"group","group_size":128}}},"ignore":["lm_head"]})"),
                     4.0 + 16.0 / 128);
    EXPECT_DOUBLE_EQ(bits_of(R"({"quant_method":"compressed-tensors","format":"float-quantized",
        "config_groups":{"group_0":{"targets":["Linear"],"weights":{"num_bits":8,"type":"float",
        "strategy":"channel"}}},"ignore":["lm_head"]})"),
                     8.0);
    EXPECT_DOUBLE_EQ(bits_of(R"({"quant_method":"compressed-tensors"})"), 8.0);
    std::string bad = refusal(R"({"quant_method":"compressed-tensors","config_groups":{"group_0":
        {"weights":{"num_bits":7}}}})");
    EXPECT_NE(bad.find("num_bits = 7"), std::string::npos) << bad;
}

// GPTQ/AWQ: bits + (fp16 scale + packed zero) per group; bitsandbytes may leave its method out.
TEST(PlanQuantConfig, GptqAwqAndImplicitBitsandbytes) {
    EXPECT_DOUBLE_EQ(bits_of(R"({"bits":4,"group_size":128,"modules_to_not_convert":null,
        "quant_method":"awq","version":"gemm","zero_point":true})"),
                     4.0 + 20.0 / 128);
    EXPECT_DOUBLE_EQ(bits_of(R"({"quant_method":"gptq","bits":8,"group_size":-1})"), 8.0);
    EXPECT_NEAR(bits_of(R"({"load_in_4bit":true,"bnb_4bit_quant_type":"nf4"})"), 4.5, 1e-12);
}

// Methods whose storage is not modelled are refused by name, listing the ones that are.
TEST(PlanQuantConfig, UnknownMethodsAreRefusedByName) {
    std::string mx = refusal(R"({"quant_method":"mxfp4","modules_to_not_convert":["model.layers.*.self_attn"]})");
    EXPECT_NE(mx.find("quant_method 'mxfp4' is not a method the planner models"), std::string::npos) << mx;
    EXPECT_NE(mx.find("known: bitsandbytes, gptq, awq, fp8, fbgemm_fp8, compressed-tensors"), std::string::npos) << mx;
    std::string none = refusal(R"({"bits":4})");
    EXPECT_NE(none.find("has no quant_method"), std::string::npos) << none;
    std::string odd = refusal(R"({"quant_method":"a\u0007b"})");
    EXPECT_NE(odd.find("'a?b'"), std::string::npos) << odd;
}
