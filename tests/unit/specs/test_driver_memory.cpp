// What the driver reports as a GPU's memory, per SKU and ECC state (specs/driver_memory).
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "core/runner.hpp"
#include "checks/gpu_identity.hpp"
#include "checks/gpu_nvlink.hpp"
#include "gpu/identify.hpp"
#include "support/inventory_fixtures.hpp"
#include "support/lineup_cards.hpp"
#include "order/order.hpp"
#include "checks/order_verify.hpp"
#include "specs/driver_memory.hpp"

using namespace gpuvet;
using namespace gpuvet::testing;

TEST(DriverMemory, PublishedFiguresForTheEccState) {
    // L40S: 46068 MiB with ECC on (published); ECC off has no published figure: the rule, 48 GiB.
    auto on = expected_driver_memory(spec("l40s-48gb"), true);
    EXPECT_DOUBLE_EQ(on.expected_mib, 46068);
    EXPECT_NE(on.basis.find("published"), std::string::npos) << on.basis;
    auto off = expected_driver_memory(spec("l40s-48gb"), false);
    EXPECT_DOUBLE_EQ(off.expected_mib, 49152);
    EXPECT_NE(off.basis.find("rule"), std::string::npos) << off.basis;
    // HBM: ECC does not change the capacity, and the state does not matter.
    EXPECT_DOUBLE_EQ(expected_driver_memory(spec("h100-sxm5-80gb"), false).expected_mib, 81559);
    EXPECT_DOUBLE_EQ(expected_driver_memory(spec("h200-sxm-141gb"), std::nullopt).expected_mib, 143771);
    EXPECT_DOUBLE_EQ(expected_driver_memory(spec("b200-180gb"), true).expected_mib, 183359);
    // Unknown ECC state on GDDR: either state's figure.
    auto either = expected_driver_memory(spec("a10"), std::nullopt);
    EXPECT_LT(either.low_mib, 23028);
    EXPECT_GT(either.high_mib, 24576);
}

TEST(DriverMemory, RuleMatchesThePublishedFigures) {
    // The fallback rule lands within the tolerance of every published figure in the database.
    int checked = 0;
    for (const GpuSpec& s : spec_db().all()) {
        for (bool ecc : {true, false}) {
            const std::optional<int>& pub = (ecc || !ecc_changes_capacity(s.memory_type)) ? s.driver_memory_ecc_on_mib
                                                                                          : s.driver_memory_ecc_off_mib;
            if (!pub) continue;
            GpuSpec bare = s;
            bare.driver_memory_ecc_on_mib.reset();
            bare.driver_memory_ecc_off_mib.reset();
            auto rule = expected_driver_memory(bare, ecc);
            EXPECT_GE(*pub, rule.low_mib) << s.key;
            EXPECT_LE(*pub, rule.high_mib) << s.key;
            ++checked;
        }
    }
    EXPECT_GE(checked, 15);
}

TEST(DriverMemory, DatabaseRefusesImpossibleFigures) {
    auto error_of = [](const char* toml) {
        SpecDb db = SpecDb::embedded();
        try {
            db.merge_toml(toml, "x.toml");
        } catch (const Error& e) {
            return std::string(e.what());
        }
        return std::string();
    };
    EXPECT_NE(
        error_of("[[gpu]]\nkey = \"h100-sxm5-80gb\"\ndriver_memory_ecc_off_mib = 81559\n").find("ECC does not change"),
        std::string::npos);
    EXPECT_NE(error_of("[[gpu]]\nkey = \"l40s-48gb\"\ndriver_memory_ecc_on_mib = 23028\n").find("does not fit"),
              std::string::npos);
    EXPECT_NE(
        error_of("[[gpu]]\nkey = \"x\"\nname = \"X\"\narchitecture = \"A\"\ncompute_capability = \"8.0\"\n"
                 "memory_size_gib = 24\nmemory_type = \"GDDR6\"\nsource = \"s\"\ndriver_memory_ecc_on_mib = 23028\n")
            .find("driver_memory_source"),
        std::string::npos);
}
