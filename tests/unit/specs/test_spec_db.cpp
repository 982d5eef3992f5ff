#include <gtest/gtest.h>

#include "core/error.hpp"
#include "specs/spec_db.hpp"

using namespace gpuvet;

namespace {

const SpecDb& db() {
    static SpecDb d = SpecDb::embedded();
    return d;
}

std::string expect_input_error(const std::string& toml) {
    SpecDb d;
    try {
        d.merge_toml(toml, "user.toml");
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::Input);
        return e.what();
    }
    ADD_FAILURE() << "no error for:\n" << toml;
    return {};
}

}  // namespace

TEST(SpecDb, EmbeddedHasEveryRequiredSku) {
    // The SKUs the product promises to know (issue list), by the names people use.
    for (const char* q : {"V100 PCIe 16GB",
                          "V100 PCIe 32GB",
                          "V100 SXM2 32GB",
                          "T4",
                          "A10",
                          "A30",
                          "A40",
                          "A100 PCIe 40GB",
                          "A100 PCIe 80GB",
                          "A100 SXM4 40GB",
                          "A100 SXM4 80GB",
                          "A800",
                          "H100 PCIe",
                          "H100 SXM5",
                          "H100 NVL",
                          "H800",
                          "H20",
                          "H200 SXM",
                          "H200 NVL",
                          "GH200",
                          "B200",
                          "L4",
                          "L20",
                          "L40",
                          "L40S",
                          "RTX 3090",
                          "RTX 4080",
                          "RTX 4090",
                          "RTX 5090",
                          "RTX A6000",
                          "RTX 6000 Ada"}) {
        EXPECT_TRUE(db().try_match(q).has_value()) << q;
    }
    EXPECT_GE(db().all().size(), 31u);
}

TEST(SpecDb, EverySkuIsComplete) {
    for (auto& s : db().all()) {
        SCOPED_TRACE(s.key);
        EXPECT_FALSE(s.source.empty());
        EXPECT_FALSE(s.driver_names.empty());
        EXPECT_FALSE(s.pci_device_ids.empty());
        // NVIDIA counts SMs, AMD compute units (per board).
        EXPECT_TRUE(s.amd() ? s.compute_units.has_value() : s.sm_count.has_value());
        EXPECT_TRUE(s.memory_bandwidth_gbps.has_value());
        EXPECT_TRUE(s.fp32_tflops.has_value());
        EXPECT_TRUE(s.tdp_w.has_value());
        // Tensor cores are never slower than the vector units at the same type.
        if (s.fp16_tensor_tflops && s.fp16_tflops) {
            EXPECT_GE(*s.fp16_tensor_tflops, *s.fp16_tflops);
        }
        if (s.fp64_tensor_tflops && s.fp64_tflops) {
            EXPECT_GE(*s.fp64_tensor_tflops, *s.fp64_tflops);
        }
        // NVLink facts come together or not at all.
        EXPECT_EQ(s.nvlink_generation.has_value(), s.nvlink_bandwidth_gbps.has_value());
    }
}

TEST(SpecDb, PciDeviceIdsAreUnique) {
    for (auto& s : db().all())
        for (auto id : s.pci_device_ids)
            EXPECT_EQ(db().by_pci_device_id(id, s.pci_vendor_id()).size(), 1u) << s.key << " " << id;
}

TEST(SpecDb, FiguresMatchTheDatasheets) {
    // Spot checks against NVIDIA datasheets (dense figures).
    auto h100 = db().match("H100 SXM5 80GB").spec;
    EXPECT_DOUBLE_EQ(*h100->memory_bandwidth_gbps, 3350);
    EXPECT_NEAR(*h100->bf16_tensor_tflops, 989.4, 0.2);
    EXPECT_EQ(*h100->sm_count, 132);
    EXPECT_EQ(*h100->nvlink_bandwidth_gbps, 900);
    auto a100 = db().match("A100 SXM4 80GB").spec;
    EXPECT_DOUBLE_EQ(*a100->fp16_tensor_tflops, 312);
    EXPECT_DOUBLE_EQ(*a100->memory_bandwidth_gbps, 2039);
    EXPECT_DOUBLE_EQ(*db().match("A10").spec->memory_bandwidth_gbps, 600);
    EXPECT_DOUBLE_EQ(*db().match("L40S").spec->memory_bandwidth_gbps, 864);
    EXPECT_DOUBLE_EQ(*db().match("A100 PCIe 80GB").spec->memory_bandwidth_gbps, 1935);
    EXPECT_DOUBLE_EQ(*db().match("4090").spec->memory_bandwidth_gbps, 1008);
    EXPECT_FALSE(db().match("V100").spec->bf16_tensor_tflops.has_value());  // Volta has no BF16
    EXPECT_FALSE(db().match("A100").spec->fp8_tensor_tflops.has_value());   // nor Ampere FP8
}

TEST(SpecDb, SeedArticleComparisons) {
    auto r = [&](const char* a, const char* b, auto field) {
        return *field(*db().match(b).spec) / *field(*db().match(a).spec);
    };
    auto bw = [](const GpuSpec& s) { return s.memory_bandwidth_gbps; };
    auto bf16 = [](const GpuSpec& s) { return s.bf16_tensor_tflops; };
    auto tf32 = [](const GpuSpec& s) { return s.tf32_tensor_tflops; };
    auto fp64 = [](const GpuSpec& s) { return s.fp64_tflops; };
    // H200 vs H100 SXM: bandwidth x1.43, BF16 x1.00.
    EXPECT_NEAR(r("H100 SXM", "H200 SXM", bw), 1.43, 0.005);
    EXPECT_NEAR(r("H100 SXM", "H200 SXM", bf16), 1.00, 0.005);
    // H100 vs A100: FP16/BF16 tensor about 3x, bandwidth ~1.6x, same 80 GB.
    EXPECT_NEAR(r("A100 SXM4 80GB", "H100 SXM", bf16), 3.17, 0.05);
    EXPECT_GT(r("A100 SXM4 80GB", "H100 SXM", tf32), 3.0);
    EXPECT_GT(r("A100 SXM4 80GB", "H100 SXM", fp64), 3.0);
    // A10 < L40S < A100 < H100 bandwidth, as the articles' table says.
    EXPECT_LT(*db().match("A10").spec->memory_bandwidth_gbps, *db().match("L40S").spec->memory_bandwidth_gbps);
    // RTX 4090 vs A100: FP32 higher on the 4090, bandwidth about half, no NVLink, no ECC.
    auto g = db().match("4090").spec;
    auto a = db().match("A100 SXM4 80GB").spec;
    EXPECT_GT(*g->fp32_tflops, *a->fp32_tflops);
    EXPECT_NEAR(*g->memory_bandwidth_gbps / *a->memory_bandwidth_gbps, 0.49, 0.02);
    EXPECT_FALSE(g->nvlink_generation.has_value());
    EXPECT_FALSE(g->ecc);
}

TEST(SpecMatch, ForgivesHowPeopleWriteModels) {
    EXPECT_EQ(db().match("h100").spec->key, db().match("H100 SXM5 80GB").spec->key);
    EXPECT_EQ(db().match("H100-SXM-80G").spec->name, db().match("H100 SXM5 80GB").spec->name);
    EXPECT_EQ(db().match("NVIDIA H100 80GB HBM3").spec->name, db().match("H100 SXM5 80GB").spec->name);
    EXPECT_EQ(db().match("a100 80g pcie").spec->name, db().match("A100 PCIe 80GB").spec->name);
    EXPECT_NE(db().match("4090").spec->name.find("4090"), std::string::npos);
    EXPECT_NE(db().match("l40s").spec->name.find("L40S"), std::string::npos);
    EXPECT_EQ(db().match("l40").spec->name.find("L40S"), std::string::npos);  // L40 is not L40S
}

TEST(SpecMatch, SaysWhichSkuItChoseAmongSeveral) {
    auto m = db().match("h100");
    EXPECT_FALSE(m.how.empty());
    auto v = db().match("v100");
    EXPECT_FALSE(v.alternatives.empty());  // several V100s: the others are listed
}

TEST(SpecMatch, UnknownNameListsClosest) {
    try {
        db().match("h1OO");
        FAIL() << "expected an error";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::Input);
        EXPECT_NE(std::string(e.what()).find("closest"), std::string::npos);
        EXPECT_NE(std::string(e.what()).find("H100"), std::string::npos);
    }
    EXPECT_FALSE(db().try_match("").has_value());
    EXPECT_FALSE(db().try_match("banana").has_value());
}

TEST(SpecTokens, NormaliseMemoryAndFormFactors) {
    auto t = spec_name_tokens("NVIDIA H100-SXM5 80G");
    EXPECT_EQ(t, (std::vector<std::string>{"h100", "sxm5", "sxm", "80gb"}));
}

TEST(SpecFile, ErrorsNameFileLineAndColumn) {
    auto e = expect_input_error("[[gpu]]\nkey = \"x\"\nname = \"X\"\nmemory_size_gib = \"eighty\"\n");
    EXPECT_NE(e.find("user.toml:4:"), std::string::npos) << e;
    EXPECT_NE(e.find("memory_size_gib"), std::string::npos) << e;
    e = expect_input_error("[[gpu]\n");
    EXPECT_NE(e.find("user.toml:1:"), std::string::npos) << e;
    e = expect_input_error("[[gpu]]\nkey = \"x\"\nmemory_bandwith_gbps = 1\n");
    EXPECT_NE(e.find("unknown key 'memory_bandwith_gbps'"), std::string::npos) << e;
    e = expect_input_error("[[gpu]]\nname = \"X\"\n");
    EXPECT_NE(e.find("needs key"), std::string::npos) << e;
    e = expect_input_error("[[gpu]]\nkey = \"x\"\nname = \"X\"\n");
    EXPECT_NE(e.find("needs 'architecture'"), std::string::npos) << e;
    e = expect_input_error("[[gpu]]\nkey = \"x\"\nfp32_tflops = 0\n");
    EXPECT_NE(e.find("greater than 0"), std::string::npos) << e;
    e = expect_input_error("[[gpu]]\nkey = \"x\"\npci_device_ids = [0x123456]\n");
    EXPECT_NE(e.find("16-bit"), std::string::npos) << e;
    e = expect_input_error("[gpux]\n");
    EXPECT_NE(e.find("unknown top-level key"), std::string::npos) << e;
}

TEST(SpecFile, UserFileAddsAndOverrides) {
    SpecDb d = SpecDb::embedded();
    auto n = d.all().size();
    d.merge_toml(R"([[gpu]]
key = "h100-sxm5-80gb"
memory_bandwidth_gbps = 3000

[[gpu]]
key = "my-card"
name = "My Card 12GB"
architecture = "Ada Lovelace"
compute_capability = "8.9"
memory_size_gib = 12
memory_type = "GDDR6X"
source = "vendor sheet"
)",
                 "mine.toml");
    EXPECT_EQ(d.all().size(), n + 1);
    EXPECT_DOUBLE_EQ(*d.by_key("h100-sxm5-80gb")->memory_bandwidth_gbps, 3000);
    EXPECT_EQ(*d.by_key("h100-sxm5-80gb")->sm_count, 132);  // untouched fields stay
    EXPECT_EQ(d.match("my card").spec->key, "my-card");
}
