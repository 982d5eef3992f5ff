// A planner estimate held against one published measurement of a real run. Each row prints one
// "published-row" line (id, measured, predicted, signed error, band), so the error distribution in
// docs/plan.md is read from the test log by scripts/plan-errors rather than typed by hand.
#pragma once
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

namespace gpuvet::testing {

// `measured` and `predicted` in the same unit (bytes, tokens...); `band` is relative (0.20 = ±20%).
inline void expect_published(const char* id, double predicted, double measured, double band, const char* unit = "GiB",
                             double unit_scale = 1024.0 * 1024 * 1024) {
    const double err = (predicted - measured) / measured;
    std::printf("published-row %s measured=%.6g%s predicted=%.6g%s error=%+.1f%% band=%.0f%%\n", id,
                measured / unit_scale, unit, predicted / unit_scale, unit, 100 * err, 100 * band);
    EXPECT_TRUE(std::isfinite(predicted)) << id;
    EXPECT_LE(std::fabs(err), band) << id << ": predicted " << predicted / unit_scale << " " << unit << ", measured "
                                    << measured / unit_scale << " " << unit;
}

}  // namespace gpuvet::testing
