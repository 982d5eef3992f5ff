// The registry (cli/registry.cpp) and select_checks: the one filter behind check --only, bench,
// burn and host.
#include <gtest/gtest.h>

#include <set>

#include "cli/registry.hpp"
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
    std::vector<std::string> rows;
    for (const auto& row : registry()) rows.emplace_back(row.key);
    EXPECT_EQ(keys_of(select_checks({})), rows);
}

TEST(SelectChecks, EveryRowMakesTheCheckItNamesOnce) {
    std::set<std::string> seen;
    for (const auto& row : registry()) {
        CheckPtr c = row.make(CheckSettings{});
        EXPECT_EQ(c->key(), row.key);
        EXPECT_TRUE(c->key() == row.area || c->key().substr(0, row.area.size() + 1) == std::string(row.area) + ".")
            << row.key << " is not in area " << row.area;
        EXPECT_TRUE(seen.insert(std::string(row.key)).second) << row.key << " is listed twice";
    }
}

TEST(SelectChecks, AreaOrderSelectsTheOrderCheck) {
    EXPECT_EQ(keys_of(select_checks({"order."})), (std::vector<std::string>{"order"}));
}

TEST(SelectChecks, ChecksThatReadOthersNameRegisteredKeys) {
    std::set<std::string> keys;
    for (const auto& row : registry()) keys.emplace(row.key);
    for (const auto& c : select_checks({}))
        for (const auto& r : c->reads()) EXPECT_TRUE(keys.count(r)) << c->key() << " reads unknown " << r;
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

TEST(SelectChecks, ReportChecksFollowOnlyAsTheRegistryDoes) {
    // history.drift is made from the finished report: --only selects it like any other check.
    EXPECT_TRUE(selects_report_check({}, "history.drift"));
    EXPECT_TRUE(selects_report_check({"history.drift"}, "history.drift"));
    EXPECT_TRUE(selects_report_check({"gpu.identity", "history."}, "history.drift"));
    EXPECT_FALSE(selects_report_check({"gpu.identity", "order"}, "history.drift"));
    EXPECT_FALSE(selects_report_check({"gpu."}, "history.drift"));
    EXPECT_NO_THROW(require_known_checks({"history.drift", "history."}));
    // It is not a registry row: select_checks never makes it.
    EXPECT_TRUE(select_checks({"history."}).empty());
}
