// The run's steady window, its time-weighted statistics and the timeline's memory bound.
#include <gtest/gtest.h>

#include <iostream>

#include "monitor/run_summary.hpp"
#include "support/run_timelines.hpp"

using namespace gpuvet;
using namespace gpuvet::test;

TEST(RunSummary, SteadyWindowDropsWarmupAndTailOfTheGpuSpan) {
    // GPU work from 10 s to 110 s of a 130 s run: span 100 s, warm-up 10 s, tail 5 s.
    auto tl =
        timeline(130, 1, [](int i, RunPoint& p) { p.gpus[0].utilization_percent = (i >= 10 && i < 110) ? 80 : 0; });
    SteadyWindow w = steady_window(tl.points(), kInterval);
    EXPECT_TRUE(w.gpu_bounded);
    EXPECT_DOUBLE_EQ(w.start_s, 20);
    EXPECT_DOUBLE_EQ(w.end_s, 105);
    EXPECT_NE(w.rule.find("10.0 s"), std::string::npos) << w.rule;
    // Long runs: the warm-up is capped at 60 s and the tail at 10 s.
    auto long_run = timeline(2000, 1, [](int, RunPoint& p) { p.gpus[0].utilization_percent = 80; });
    SteadyWindow lw = steady_window(long_run.points(), kInterval);
    EXPECT_DOUBLE_EQ(lw.start_s, 60);
    EXPECT_DOUBLE_EQ(lw.end_s, 1990);
}

TEST(RunSummary, SteadyWindowNeverEndsAfterTheWallTime) {
    // A 2.1 s run sampled each second: ticks at 0, 1 and 2 s, the last one counting until 3 s.
    auto tl = timeline(3, 1, [](int, RunPoint& p) { p.gpus[0].utilization_percent = 0; });
    SteadyWindow w = steady_window(tl.points(), kInterval, 2.1);
    EXPECT_LE(w.end_s, 2.1);
    EXPECT_LE(w.start_s, w.end_s);
    EXPECT_NE(w.rule.find("(0.0 s to 2.1 s)"), std::string::npos) << w.rule;
    SteadyWindow unbounded = steady_window(tl.points(), kInterval);
    EXPECT_DOUBLE_EQ(unbounded.end_s, 3 - 0.05 * 3);
    // GPU work until the last tick: the busy span ends at the wall time too.
    auto busy = timeline(3, 1, [](int, RunPoint& p) { p.gpus[0].utilization_percent = 90; });
    EXPECT_LE(steady_window(busy.points(), kInterval, 2.1).end_s, 2.1);
    // The summary passes it on.
    RunResult r = summarize_run(busy, facts(1), kInterval, 8, true, 2.1);
    EXPECT_LE(r.window_end_s, 2.1);
}

TEST(RunSummary, WeightedStatsCountThinnedPointsForTheirTime) {
    Stat s = weighted_stat({0, 100}, {9, 1});
    EXPECT_DOUBLE_EQ(s.mean, 10);
    EXPECT_DOUBLE_EQ(s.p5, 0);
    EXPECT_DOUBLE_EQ(s.p50, 0);
    EXPECT_DOUBLE_EQ(s.p95, 100);
    EXPECT_DOUBLE_EQ(s.max, 100);
    Stat nan = weighted_stat({kUnmeasured}, {1});
    EXPECT_FALSE(nan.measured());  // nothing measured is absent, never 0
}

TEST(RunTimelineBudget, TenMinutesAndADayOfEightGpusStayWithinTheBudget) {
    auto fill = [](RunTimeline& tl, int ticks) {
        for (int i = 0; i < ticks; ++i) {
            RunPoint p;
            p.t_s = i;
            p.gpus.resize(8);
            for (GpuPoint& g : p.gpus) g.utilization_percent = i % 100;
            tl.push(std::move(p));
        }
    };
    RunTimeline ten;
    fill(ten, 600);
    RunTimeline day;
    fill(day, 86400);
    const std::size_t budget = day.memory_budget_bytes(8);
    std::cout << "timeline bytes: 10 min " << ten.memory_bytes() << ", 24 h " << day.memory_bytes() << ", budget "
              << budget << "\n";
    EXPECT_LE(budget, 8u << 20);  // the fixed budget: 8 MiB for 8 GPUs however long the run
    EXPECT_LE(ten.memory_bytes(), budget);
    EXPECT_LE(day.memory_bytes(), budget);
    EXPECT_LE(day.points().size(), day.capacity());
    EXPECT_EQ(ten.thinned(), 0u);                      // ten minutes at 1 Hz keep every point
    EXPECT_DOUBLE_EQ(day.points().front().t_s, 0);     // the start stays
    EXPECT_DOUBLE_EQ(day.points().back().t_s, 86399);  // and the latest
    // The whole day stays represented: the summary's weights add up to the run's length.
    std::vector<double> w = point_spans(day.points(), 1);
    double total = 0;
    for (double x : w) total += x;
    EXPECT_NEAR(total, 86400, 1);
}
