#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "core/error.hpp"
#include "gpu/kernels.hpp"

using namespace gpuvet;
using namespace gpuvet::kernels;

namespace {
// .entry name( .param .type name, ... ) -> name -> ordered parameter types
std::map<std::string, std::vector<std::string>> parse_entries(const std::string& ptx) {
    std::map<std::string, std::vector<std::string>> out;
    const std::regex entry(R"(\.entry\s+(\w+)\s*\(([^)]*)\))");
    const std::regex param(R"(\.param\s+\.(\w+)\s+\w+)");
    for (auto it = std::sregex_iterator(ptx.begin(), ptx.end(), entry); it != std::sregex_iterator(); ++it) {
        const std::string body = (*it)[2];
        auto& types = out[(*it)[1]];
        for (auto p = std::sregex_iterator(body.begin(), body.end(), param); p != std::sregex_iterator(); ++p)
            types.push_back((*p)[1]);
    }
    return out;
}

std::string ptx_type(Param p) {
    switch (p) {
        case Param::ptr:
        case Param::u64: return "u64";
        case Param::u32: return "u32";
        case Param::f32: return "f32";
        case Param::f64: return "f64";
        case Param::b32: return "b32";
    }
    return "?";
}

std::string read_source(std::string_view stem) {
    std::ifstream in(std::string(GPUVET_SOURCE_DIR) + "/src/gpu/kernels/" + std::string(stem) + ".ptx");
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}
}  // namespace

TEST(KernelCatalogue, EveryModuleIsEmbeddedAsTheSourceFile) {
    ASSERT_EQ(modules().size(), 5u);
    for (const auto& m : modules()) {
        const std::string_view text = m.text();
        EXPECT_GT(text.size(), 500u) << m.stem;
        EXPECT_EQ(text, read_source(m.stem)) << m.stem << " embedded text differs from the file";
    }
}

TEST(KernelCatalogue, VersionAndTargetAreTheDocumentedMinimum) {
    for (const auto& m : modules()) {
        const std::string text(m.text());
        std::smatch v, t;
        ASSERT_TRUE(std::regex_search(text, v, std::regex(R"(\n\.version\s+(\d+)\.(\d+))"))) << m.stem;
        ASSERT_TRUE(std::regex_search(text, t, std::regex(R"(\n\.target\s+sm_(\d+)\s*\n)"))) << m.stem;
        EXPECT_EQ(std::stoi(v[1]), m.isa_major) << m.stem;
        EXPECT_EQ(std::stoi(v[2]), m.isa_minor) << m.stem;
        EXPECT_EQ(std::stoi(t[1]), m.target_sm) << m.stem;
        EXPECT_NE(text.find("\n.address_size 64\n"), std::string::npos) << m.stem;
        // Volta must stay loadable: only the BF16 module may need more than sm_70 / PTX 6.0.
        if (m.stem != "fma_bf16") {
            EXPECT_EQ(m.target_sm, 70) << m.stem;
            EXPECT_EQ(m.isa_major * 10 + m.isa_minor, 60) << m.stem;
        }
    }
    EXPECT_EQ(find_module("fma_bf16")->target_sm, 80);
    EXPECT_EQ(find_module("fma_bf16")->isa_major * 10 + find_module("fma_bf16")->isa_minor, 70);
}

TEST(KernelCatalogue, EntriesAndParametersMatchThePtx) {
    std::set<std::string> catalogued;
    for (const auto& k : catalogue()) {
        const PtxModule* m = find_module(k.module);
        ASSERT_NE(m, nullptr) << k.name;
        const auto entries = parse_entries(std::string(m->text()));
        const auto it = entries.find(std::string(k.name));
        ASSERT_NE(it, entries.end()) << k.name << " is not an .entry of " << k.module;
        ASSERT_EQ(it->second.size(), k.params.size()) << k.name;
        for (size_t i = 0; i < k.params.size(); ++i)
            EXPECT_EQ(it->second[i], ptx_type(k.params[i])) << k.name << " parameter " << i;
        EXPECT_GE(k.min_cc, m->target_sm) << k.name;
        catalogued.insert(std::string(k.name));
    }
    // and no .entry goes uncatalogued
    for (const auto& m : modules())
        for (const auto& [name, types] : parse_entries(std::string(m.text())))
            EXPECT_TRUE(catalogued.count(name)) << name << " in " << m.stem << " is missing from the catalogue";
    EXPECT_EQ(catalogued.size(), 13u);
}

TEST(KernelCatalogue, LookupAndLaunchGeometry) {
    const KernelInfo* k = find_kernel("stream_triad");
    ASSERT_NE(k, nullptr);
    EXPECT_EQ(k->module, "stream");
    const auto g = launch_geometry(*k, 132);
    EXPECT_EQ(g.grid, 528u);
    EXPECT_EQ(g.block, 256u);
    EXPECT_EQ(g.threads(), 135168u);
    EXPECT_EQ(find_kernel("fma_bf16x2")->min_cc, 80);
    EXPECT_EQ(find_kernel("nope"), nullptr);
    EXPECT_THROW(launch_geometry(*k, 0), Error);
    EXPECT_EQ(param_bytes(Param::ptr), 8u);
    EXPECT_EQ(param_bytes(Param::b32), 4u);
}
