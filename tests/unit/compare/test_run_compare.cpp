// Two runs compared from their reports.
#include <gtest/gtest.h>

#include <algorithm>

#include "compare/run_compare.hpp"
#include "core/clock_reasons.hpp"
#include "core/error.hpp"
#include "report/run_json.hpp"
#include "report/run_report_reader.hpp"
#include "support/run_reports.hpp"
#include "support/run_timelines.hpp"

using namespace gpuvet;
using namespace gpuvet::test;

TEST(RunCompare, TheFasterRunIsNamedWithTheRuleThatHeldTheOtherBack) {
    RunResult slow = read_run_report(report_of(power_capped_run()), "a.json");
    RunResult fast = judge(timeline(100, 1,
                                    [](int, RunPoint& p) {
                                        p.gpus[0].utilization_percent = 97;
                                        p.gpus[0].power_w = 600;
                                    }),
                           1);
    fast.command = slow.command;
    fast.wall_s = 80;
    fast.end = JobEnd{false, 0, 80};
    RunComparison c = compare_runs(slow, fast, "box-a", "box-b");
    ASSERT_TRUE(c.faster);
    EXPECT_EQ(*c.faster, 1);
    EXPECT_NEAR(c.speedup, 1.25, 1e-9);
    ASSERT_FALSE(c.reasons.empty());
    EXPECT_NE(c.reasons[0].find("F1"), std::string::npos) << c.reasons[0];
    EXPECT_NE(c.reasons[0].find("box-a"), std::string::npos);
}
