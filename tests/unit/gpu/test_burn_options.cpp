// gpu.burn's options: durations by tier and the parsers behind `gpuvet burn` flags.
#include <gtest/gtest.h>

#include "core/context.hpp"
#include "core/error.hpp"
#include "gpu/burn.hpp"
#include "checks/gpu_burn.hpp"

using namespace gpuvet;

TEST(BurnOptions, DurationsParseWithUnits) {
    EXPECT_DOUBLE_EQ(parse_duration_s("90s"), 90);
    EXPECT_DOUBLE_EQ(parse_duration_s("45"), 45);
    EXPECT_DOUBLE_EQ(parse_duration_s("10m"), 600);
    EXPECT_DOUBLE_EQ(parse_duration_s("1.5h"), 5400);
    for (const char* bad : {"", "ten", "10x", "-5s", "0", "nan", "5 s"}) {
        try {
            parse_duration_s(bad);
            ADD_FAILURE() << "accepted '" << bad << "'";
        } catch (const Error& e) {
            EXPECT_EQ(e.kind(), ErrorKind::Usage) << bad;
        }
    }
}

TEST(BurnOptions, DtypeAndLoadNamesRoundTrip) {
    for (BurnDtype d : {BurnDtype::bf16, BurnDtype::fp16, BurnDtype::tf32, BurnDtype::fp32, BurnDtype::fp64})
        EXPECT_EQ(parse_burn_dtype(to_string(d)), d);
    for (BurnLoad l : {BurnLoad::gemm, BurnLoad::memory, BurnLoad::mixed}) EXPECT_EQ(parse_burn_load(to_string(l)), l);
    EXPECT_THROW(parse_burn_dtype("int4"), Error);
    EXPECT_THROW(parse_burn_load("disk"), Error);
}

TEST(BurnOptions, CheckDurationFollowsTierUnlessGiven) {
    EXPECT_EQ(GpuBurnCheck::duration_for(Tier::Quick, std::nullopt), 20);
    EXPECT_EQ(GpuBurnCheck::duration_for(Tier::Standard, std::nullopt), 60);
    EXPECT_EQ(GpuBurnCheck::duration_for(Tier::Full, std::nullopt), 600);
    EXPECT_EQ(GpuBurnCheck::duration_for(Tier::Full, 5.0), 5);
}
