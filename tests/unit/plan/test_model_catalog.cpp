// Parameter counts and KV-cache bytes of every catalog model against published figures.
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "plan/hf_config.hpp"
#include "plan/quantization.hpp"
#include "plan/model_catalog.hpp"

using namespace gpuvet;

namespace {
const ModelCatalog& cat() {
    static ModelCatalog c = ModelCatalog::embedded();
    return c;
}
}  // namespace

// Published counts: the `published_params` of each entry, whose `source` is the model card /
// config (Hugging Face "Model size" = safetensors parameter count; torchvision num_params).
TEST(PlanModels, EveryCatalogCountMatchesItsPublishedCount) {
    ASSERT_GE(cat().all().size(), 18u);
    for (auto& m : cat().all()) {
        ASSERT_TRUE(m.published_params) << m.key;
        EXPECT_EQ(parameter_count(m), *m.published_params) << m.key;
    }
}

// The same figures written here, so a change to the data file cannot silently move both sides.
TEST(PlanModels, ParameterCountsMatchThePublishedCheckpoints) {
    EXPECT_EQ(parameter_count(cat().find("llama-2-7b")), 6738415616);  // HF Llama-2-7b-hf
    EXPECT_EQ(parameter_count(cat().find("llama-2-70b")), 68976648192);
    EXPECT_EQ(parameter_count(cat().find("llama-3-8b")), 8030261248);  // HF Meta-Llama-3-8B
    EXPECT_EQ(parameter_count(cat().find("llama-3.1-405b")), 405853388800);
    EXPECT_EQ(parameter_count(cat().find("mixtral-8x7b")), 46702792704);
    EXPECT_EQ(parameter_count(cat().find("qwen2.5-72b")), 72706203648);
    EXPECT_EQ(parameter_count(cat().find("gpt2")), 124439808);
    EXPECT_EQ(parameter_count(cat().find("bert-base")), 109482240);
    EXPECT_EQ(parameter_count(cat().find("deepseek-v3")), 671026419200);
}

// Active parameters: Mixtral "12.9B active" (Mistral AI announcement, 12.88B exact from the
// shapes), DeepSeek-V3 "37B activated" (arXiv:2412.19437).
TEST(PlanModels, ActiveParametersOfMoE) {
    EXPECT_NEAR(double(active_parameter_count(cat().find("mixtral"))) / 1e9, 12.9, 0.05);
    EXPECT_NEAR(double(active_parameter_count(cat().find("deepseek-v3"))) / 1e9, 37.5, 0.6);
    EXPECT_EQ(active_parameter_count(cat().find("llama-3-8b")), parameter_count(cat().find("llama-3-8b")));
}

// KV cache per token at 16 bits = 2 (K,V) x layers x kv_heads x head_dim x 2 bytes.
// Llama-2-7B 512 KiB (MHA), Llama-3-8B 128 KiB (GQA 8 heads), Llama-3-70B 320 KiB,
// DeepSeek-V3 MLA 61 x (512+64) x 2 = 70,272 bytes (DeepSeek-V2 paper's latent cache).
TEST(PlanModels, KvBytesPerTokenExact) {
    EXPECT_DOUBLE_EQ(kv_bytes_per_token(cat().find("llama-2-7b"), 2), 524288);
    EXPECT_DOUBLE_EQ(kv_bytes_per_token(cat().find("llama-2-13b"), 2), 819200);
    EXPECT_DOUBLE_EQ(kv_bytes_per_token(cat().find("llama-2-70b"), 2), 327680);
    EXPECT_DOUBLE_EQ(kv_bytes_per_token(cat().find("llama-3-8b"), 2), 131072);
    EXPECT_DOUBLE_EQ(kv_bytes_per_token(cat().find("llama-3-70b"), 2), 327680);
    EXPECT_DOUBLE_EQ(kv_bytes_per_token(cat().find("llama-3.1-405b"), 2), 516096);
    EXPECT_DOUBLE_EQ(kv_bytes_per_token(cat().find("qwen2.5-7b"), 2), 57344);
    EXPECT_DOUBLE_EQ(kv_bytes_per_token(cat().find("qwen2.5-14b"), 2), 196608);
    EXPECT_DOUBLE_EQ(kv_bytes_per_token(cat().find("qwen2.5-32b"), 2), 262144);
    EXPECT_DOUBLE_EQ(kv_bytes_per_token(cat().find("qwen2.5-72b"), 2), 327680);
    EXPECT_DOUBLE_EQ(kv_bytes_per_token(cat().find("mistral-7b"), 2), 131072);
    EXPECT_DOUBLE_EQ(kv_bytes_per_token(cat().find("mixtral-8x7b"), 2), 131072);
    EXPECT_DOUBLE_EQ(kv_bytes_per_token(cat().find("deepseek-v3"), 2), 70272);
    EXPECT_DOUBLE_EQ(kv_bytes_per_token(cat().find("gpt2"), 2), 36864);
    EXPECT_DOUBLE_EQ(kv_bytes_per_token(cat().find("bert-base"), 2), 0);  // encoder: no cache
    EXPECT_DOUBLE_EQ(kv_bytes_per_token(cat().find("resnet-50"), 2), 0);
}

// Mistral-7B v0.1's 4096-token sliding window caps the cache; a Llama-3-8B cache grows linearly.
TEST(PlanModels, SlidingWindowCapsTheCache) {
    auto& mi = cat().find("mistral-7b");
    EXPECT_DOUBLE_EQ(kv_cache_bytes(mi, 32768, 2), kv_cache_bytes(mi, 4096, 2));
    auto& l3 = cat().find("llama-3-8b");
    EXPECT_DOUBLE_EQ(kv_cache_bytes(l3, 8192, 2), 2 * kv_cache_bytes(l3, 4096, 2));
}

TEST(PlanModels, ForgivingNamesAndClosestOnUnknown) {
    EXPECT_EQ(cat().find("Llama 3 8B").key, "llama-3-8b");
    EXPECT_EQ(cat().find("meta-llama/Llama-2-7b-hf").key, "llama-2-7b");
    try {
        cat().find("llama-4-8b");
        FAIL() << "no error";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::Input);
        EXPECT_NE(std::string(e.what()).find("closest: llama"), std::string::npos) << e.what();
    }
}

// A real Llama-3-8B config.json reproduces the catalog count; missing fields are named.
TEST(PlanHfConfig, ReadsLlamaConfigAndNamesMissingFields) {
    const char* cfg = R"({"architectures":["LlamaForCausalLM"],"model_type":"llama","hidden_size":4096,
      "intermediate_size":14336,"num_attention_heads":32,"num_hidden_layers":32,"num_key_value_heads":8,
      "vocab_size":128256,"max_position_embeddings":8192,"tie_word_embeddings":false,"torch_dtype":"bfloat16"})";
    EXPECT_EQ(parameter_count(parse_hf_config(cfg, "c.json")), 8030261248);
    try {
        parse_hf_config(R"({"model_type":"llama","hidden_size":4096})", "bad.json");
        FAIL();
    } catch (const Error& e) {
        std::string w = e.what();
        for (auto f : {"num_hidden_layers", "num_attention_heads", "vocab_size", "intermediate_size"})
            EXPECT_NE(w.find(f), std::string::npos) << w;
    }
    EXPECT_THROW(parse_hf_config("{not json", "x.json"), Error);
    EXPECT_THROW(parse_hf_config("[1,2]", "x.json"), Error);
}

// Explicit head_dim (Qwen3-style), tied embeddings, and NF4 double quantization.
TEST(PlanHfConfig, HeadDimTiedAndQuantization) {
    const char* cfg = R"({"model_type":"qwen3","hidden_size":1024,"intermediate_size":3072,
      "num_attention_heads":16,"num_key_value_heads":8,"head_dim":128,"num_hidden_layers":28,
      "vocab_size":151936,"tie_word_embeddings":true,
      "quantization_config":{"quant_method":"bitsandbytes","load_in_4bit":true,"bnb_4bit_use_double_quant":true}})";
    ModelArch m = parse_hf_config(cfg, "q.json");
    EXPECT_EQ(m.head_dim, 128);
    EXPECT_DOUBLE_EQ(kv_bytes_per_token(m, 2), 2.0 * 28 * 8 * 128 * 2);
    ASSERT_TRUE(m.quant);
    // QLoRA paper: 0.127 bits per parameter over 4 with double quantization.
    EXPECT_NEAR(m.quant->format.bits(1024, 3072) / (1024.0 * 3072), 4.127, 0.001);
    // Qwen3-0.6B: 596,049,920 parameters (HF model card "0.6B"), the per-head q/k norm weights
    // (28 layers x 2 x 128) included.
    EXPECT_EQ(parameter_count(m), 596049920);
}

// --- config.json families: known, read generically with a note, refused ---

namespace {
std::string refusal_of(const char* cfg) {
    try {
        parse_hf_config(cfg, "c.json");
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::Input);
        EXPECT_NE(e.advice().find("--params"), std::string::npos) << e.advice();
        return e.what();
    }
    ADD_FAILURE() << "accepted: " << cfg;
    return "";
}
}  // namespace

// A family with rules is read without a note; one without rules (gemma) is read as a llama-style
// decoder and the plan says so, naming the fields it used. Gemma-2B: 2,506,172,416 parameters
// (google/gemma-2b config.json, tied embeddings; HF "2.51B").
TEST(PlanHfConfig, KnownFamiliesReadSilentlyOthersWithANote) {
    const char* llama = R"({"model_type":"llama","hidden_size":64,"intermediate_size":128,
        "num_attention_heads":4,"num_hidden_layers":2,"vocab_size":100})";
    EXPECT_TRUE(parse_hf_config(llama, "c.json").notes.empty());
    const char* gemma = R"({"model_type":"gemma","hidden_size":2048,"intermediate_size":16384,
        "num_attention_heads":8,"num_key_value_heads":1,"head_dim":256,"num_hidden_layers":18,
        "vocab_size":256000,"tie_word_embeddings":true})";
    ModelArch g = parse_hf_config(gemma, "c.json");
    EXPECT_EQ(parameter_count(g), 2506172416);
    ASSERT_EQ(g.notes.size(), 1u);
    EXPECT_NE(g.notes[0].find("'gemma' has no rules"), std::string::npos) << g.notes[0];
    EXPECT_NE(g.notes[0].find("llama-style decoder"), std::string::npos) << g.notes[0];
    EXPECT_NE(g.notes[0].find("head_dim=256"), std::string::npos) << g.notes[0];
}

// An unknown family lacking a standard field is named with what was found and what is missing.
TEST(PlanHfConfig, UnknownFamilyNamesFoundAndMissingFields) {
    std::string e = refusal_of(R"({"model_type":"acme-lm","hidden_size":4096,"num_hidden_layers":32,
        "vocab_size":32000})");
    EXPECT_NE(e.find("'acme-lm' has no rules"), std::string::npos) << e;
    EXPECT_NE(e.find("num_attention_heads, intermediate_size (missing)"), std::string::npos) << e;
    EXPECT_NE(e.find("found: hidden_size=4096, num_hidden_layers=32, vocab_size=32000"), std::string::npos) << e;
}

// Architectures whose layers are not a decoder block: refused by model_type or by their fields,
// each naming the fields found and missing. Fields as in each family's published config.json
// (state-spaces/mamba-2.8b-hf, google-t5/t5-small, openai/clip-vit-large-patch14-336 vision tower).
TEST(PlanHfConfig, RefusesArchitecturesItDoesNotModel) {
    std::string mamba = refusal_of(R"({"model_type":"mamba","hidden_size":2560,"num_hidden_layers":64,
        "vocab_size":50280,"state_size":16,"intermediate_size":5120})");
    EXPECT_NE(mamba.find("state-space"), std::string::npos) << mamba;
    EXPECT_NE(mamba.find("fields found: hidden_size=2560, num_hidden_layers=64"), std::string::npos) << mamba;
    EXPECT_NE(mamba.find("missing for a transformer decoder: num_attention_heads"), std::string::npos) << mamba;
    std::string t5 = refusal_of(R"({"model_type":"t5","d_model":512,"d_ff":2048,"num_heads":8,
        "num_layers":6,"vocab_size":32128,"is_encoder_decoder":true})");
    EXPECT_NE(t5.find("'t5' is an encoder-decoder"), std::string::npos) << t5;
    EXPECT_NE(t5.find("d_model=512"), std::string::npos) << t5;
    std::string vit = refusal_of(R"({"model_type":"clip_vision_model","hidden_size":1024,
        "intermediate_size":4096,"num_attention_heads":16,"num_hidden_layers":24})");
    EXPECT_NE(vit.find("vision or audio encoder"), std::string::npos) << vit;
    EXPECT_NE(vit.find("missing for a transformer decoder: vocab_size"), std::string::npos) << vit;
    // An unknown model_type is refused by its tell-tale fields.
    EXPECT_NE(refusal_of(R"({"model_type":"acme-s2s","hidden_size":64,"num_hidden_layers":2,
        "num_attention_heads":4,"intermediate_size":128,"vocab_size":100,"is_encoder_decoder":true})")
                  .find("is_encoder_decoder is true"),
              std::string::npos);
    EXPECT_NE(refusal_of(R"({"model_type":"acme-ssm","hidden_size":64,"num_hidden_layers":2,
        "vocab_size":100,"ssm_state_size":16})")
                  .find("state-space model (it states ssm_state_size)"),
              std::string::npos);
    EXPECT_NE(refusal_of(R"({"_class_name":"UNet2DConditionModel","block_out_channels":[320,640,1280]})")
                  .find("diffusers component (_class_name UNet2DConditionModel)"),
              std::string::npos);
}

// A multimodal wrapper with its own model_type is followed into text_config (the language model),
// with a note that the vision tower is not counted; before, its model_type was read as the model.
TEST(PlanHfConfig, MultimodalWrapperReadsTheLanguageModel) {
    const char* llava = R"({"model_type":"llava","text_config":{"model_type":"llama","hidden_size":4096,
        "intermediate_size":11008,"num_attention_heads":32,"num_hidden_layers":32,"vocab_size":32000},
        "vision_config":{"model_type":"clip_vision_model","hidden_size":1024}})";
    ModelArch m = parse_hf_config(llava, "c.json");
    EXPECT_EQ(parameter_count(m), 6738415616);  // the Llama-2-7B language model
    ASSERT_EQ(m.notes.size(), 1u);
    EXPECT_NE(m.notes[0].find("vision tower (vision_config of llava) is not counted"), std::string::npos) << m.notes[0];
}
