// select_checks: the one filter behind check --only and the bench table.
#include <gtest/gtest.h>

#include "core/check.hpp"
#include "core/error.hpp"

using namespace gpuvet;

namespace {
std::vector<std::string> keys_of(const CheckList& l) {
    std::vector<std::string> k;
    for (const auto& c : l) k.emplace_back(c->key());
    return k;
}
}  // namespace

TEST(SelectChecks, EmptyMeansAllInRegistryOrder) {
    EXPECT_EQ(keys_of(select_checks({})), keys_of(all_checks()));
}

TEST(SelectChecks, ExactKeysKeepRegistryOrder) {
    auto k = keys_of(select_checks({"gpu.p2p", "gpu.h2d_d2h"}));
    EXPECT_EQ(k, (std::vector<std::string>{"gpu.h2d_d2h", "gpu.p2p"}));
}

TEST(SelectChecks, AreaPrefixEndsInDot) {
    auto k = keys_of(select_checks({"host."}));
    ASSERT_FALSE(k.empty());
    for (const auto& key : k) EXPECT_EQ(key.rfind("host.", 0), 0u) << key;
    // "gpu.p" is neither a key nor an area: no silent partial matching.
    EXPECT_THROW(select_checks({"gpu.p"}), Error);
}

TEST(SelectChecks, UnknownKeyIsAUsageErrorListingTheKeys) {
    try {
        select_checks({"gpu.p2p", "gpu.nonsense"});
        FAIL() << "no error";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::Usage);
        EXPECT_NE(std::string(e.what()).find("gpu.nonsense"), std::string::npos);
        EXPECT_NE(e.advice().find("gpu.memory_bandwidth"), std::string::npos);
    }
}
