// The crafted files of the fuzz corpora (tests/fuzz/corpus/*/crafted_*) are refused by the limit
// each was made to hit, with the file's place in the message; the fuzz replay only shows they do
// not crash.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <unistd.h>

#include "core/error.hpp"
#include "core/input_file.hpp"
#include "order/order.hpp"
#include "plan/hf_config.hpp"
#include "plan/model_catalog.hpp"
#include "plan/rates_sources.hpp"
#include "specs/spec_db.hpp"

using namespace gpuvet;

namespace {

std::string corpus(const std::string& rel) {
    std::ifstream in(std::string(GPUVET_TEST_DIR) + "/fuzz/corpus/" + rel, std::ios::binary);
    EXPECT_TRUE(in) << rel;
    return {std::istreambuf_iterator<char>(in), {}};
}

template <class F>
std::string input_error_of(F&& f) {
    try {
        f();
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::Input) << e.what();
        return e.what();
    }
    ADD_FAILURE() << "accepted";
    return "";
}

const SpecDb& db() {
    static const SpecDb d = SpecDb::embedded();
    return d;
}

#define EXPECT_HAS(text, needle) EXPECT_NE((text).find(needle), std::string::npos) << (text)

}  // namespace

TEST(CraftedInputs, DeepTextConfigIsRefusedBeforeParsing) {
    std::string text = corpus("hf_config/crafted_deep_text_config.json");
    EXPECT_GT(text.size(), 64u * 16);
    EXPECT_HAS(input_error_of([&] { parse_hf_config(text, "deep.json"); }), "deep.json:1:");
    EXPECT_HAS(input_error_of([&] { parse_hf_config(text, "deep.json"); }), "nested deeper than 64");
    EXPECT_HAS(
        input_error_of([&] { parse_measured_report(corpus("measured/crafted_deep_nesting.json"), "r.json", db()); }),
        "nested deeper than 64");
}

TEST(CraftedInputs, ShallowWrappersStillWorkAndDeepOnesAreNamed) {
    const std::string inner = R"({"model_type":"llama","hidden_size":64,"intermediate_size":128,
        "num_attention_heads":4,"num_hidden_layers":2,"vocab_size":100})";
    std::string two = R"({"text_config": {"text_config": )" + inner + "}}";
    EXPECT_EQ(parse_hf_config(two, "two.json").hidden, 64);
    std::string many = inner;
    for (int i = 0; i < 6; ++i) many = R"({"text_config": )" + many + "}";
    EXPECT_HAS(input_error_of([&] { parse_hf_config(many, "many.json"); }), "text_config nested more than 4");
}

TEST(CraftedInputs, FiftyThousandPartKeysAreRefusedBeforeToml) {
    std::string specs = corpus("specs/crafted_dotted_key.toml");
    EXPECT_HAS(input_error_of([&] {
                   SpecDb d = SpecDb::embedded();
                   d.merge_toml(specs, "k.toml");
               }),
               "k.toml:2:");
    EXPECT_HAS(input_error_of([&] {
                   SpecDb d;
                   d.merge_toml(specs, "k.toml");
               }),
               "dotted key of more than 64 parts");
    std::string order = corpus("order/crafted_dotted_key.toml").substr(1);  // the first byte picks the parser
    EXPECT_HAS(input_error_of([&] { parse_order_toml(order, "o.toml", db()); }), "o.toml:1:");
    EXPECT_HAS(input_error_of([&] { parse_prices(corpus("prices/crafted_dotted_key.toml"), "p.toml", db()); }),
               "p.toml:2:");
    EXPECT_HAS(input_error_of([&] { ModelCatalog::parse(corpus("models_toml/crafted_dotted_key.toml"), "m.toml"); }),
               "m.toml:3:");
    EXPECT_HAS(input_error_of([&] {
                   SpecDb d;
                   d.merge_toml(corpus("specs/crafted_nested_arrays.toml"), "n.toml");
               }),
               "nested deeper than 32");
}

TEST(CraftedInputs, OversizedFilesAreRefusedWithTheLimit) {
    auto path = std::filesystem::temp_directory_path() / ("gpuvet-big-" + std::to_string(::getpid()) + ".toml");
    {
        std::ofstream out(path);
        out << std::string(kInputFileLimitBytes + 1, '#');
    }
    EXPECT_HAS(input_error_of([&] {
                   SpecDb d;
                   d.merge_file(path);
               }),
               "larger than the 4.0 MiB limit");
    EXPECT_HAS(input_error_of([&] { load_order_file(path.string(), db()); }), "--order");
    EXPECT_HAS(input_error_of([&] { read_prices(path.string(), db()); }), "4.0 MiB");
    EXPECT_HAS(input_error_of([&] { load_hf_config(path.string()); }), "--config");
    EXPECT_HAS(input_error_of([&] {
                   SpecDb d;
                   d.merge_file("/dev/zero");
               }),
               "limit");
    std::filesystem::remove(path);
}

TEST(CraftedInputs, FieldValuesOutsideTheirRangesAreRefused) {
    EXPECT_HAS(input_error_of([&] { parse_hf_config(corpus("hf_config/crafted_head_dim_zero.json"), "c.json"); }),
               "head_dim = 0: too small");
    EXPECT_HAS(input_error_of([&] { parse_hf_config(corpus("hf_config/crafted_gptq_bits.json"), "c.json"); }),
               "give one of 2, 3, 4, 5, 6, 8, 16");
    EXPECT_HAS(input_error_of([&] { parse_prices(corpus("prices/crafted_unknown_key.toml"), "p.toml", db()); }),
               "p.toml:1:1: unknown key 'curency'");
    EXPECT_HAS(input_error_of([&] { parse_prices(corpus("prices/crafted_inf.toml"), "p.toml", db()); }),
               "not a finite number");
    EXPECT_HAS(input_error_of([&] {
                   SpecDb d = SpecDb::embedded();
                   d.merge_toml(corpus("specs/crafted_inf.toml"), "s.toml");
               }),
               "s.toml:3:");
    std::string takeover = input_error_of([&] {
        SpecDb d = SpecDb::embedded();
        d.merge_toml(corpus("specs/crafted_takeover.toml"), "t.toml");
    });
    EXPECT_HAS(takeover, "claims PCI device id 0x2330 of SKU 'h100-sxm5-80gb'");
}

TEST(CraftedInputs, MistypedConfigFieldIsNotCalledMissing) {
    std::string e = input_error_of([&] {
        parse_hf_config(R"({"model_type":"llama","hidden_size":"4096","intermediate_size":128,
            "num_attention_heads":4,"num_hidden_layers":2,"vocab_size":100})",
                        "c.json");
    });
    EXPECT_HAS(e, "hidden_size must be a number");
    EXPECT_EQ(e.find("missing"), std::string::npos) << e;
}

// Each field within its range, their products beyond int64: refused before any count is taken.
TEST(CraftedInputs, FieldProductsBeyondAnyModelAreRefused) {
    const char* mla = R"({"model_type":"deepseek_v3","hidden_size":64,"num_hidden_layers":1,
        "num_attention_heads":16777216,"num_key_value_heads":16777216,"vocab_size":100,"intermediate_size":64,
        "kv_lora_rank":16777216,"qk_nope_head_dim":65536,"qk_rope_head_dim":65536,"v_head_dim":65536})";
    EXPECT_HAS(input_error_of([&] { parse_hf_config(mla, "mla.json"); }), "implausibly large model");
    const char* dense = R"({"model_type":"llama","hidden_size":64,"num_hidden_layers":2,"num_attention_heads":4,
        "vocab_size":100,"intermediate_size":64,"num_local_experts":4,"num_experts_per_tok":2,
        "first_k_dense_replace":3})";
    EXPECT_HAS(input_error_of([&] { parse_hf_config(dense, "moe.json"); }), "first_k_dense_replace (3)");
}
