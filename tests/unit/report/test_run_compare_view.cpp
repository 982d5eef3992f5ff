// Two runs compared on the terminal: which was faster and why.
#include <gtest/gtest.h>

#include "compare/run_compare.hpp"
#include "report/run_compare_view.hpp"
#include "report/run_view.hpp"
#include "support/run_reports.hpp"

using namespace gpuvet;
using namespace gpuvet::test;

TEST(RunCompareView, SaysWhichWasFasterAndWhy) {
    RunResult a = host_only_run(), b = host_only_run();
    a.wall_s = 120;
    b.wall_s = 100;
    RuleFinding steal;
    steal.id = "B7";
    steal.title = "CPU contention or stolen CPU";
    steal.party = RuleParty::kServer;
    steal.message = "the hypervisor stole 12 %";
    a.diagnosis.others.push_back(steal);
    RunComparison c = compare_runs(a, b, "cheap-box", "good-box");
    std::string out = render_run_comparison(c, Style{});
    EXPECT_NE(out.find("good-box was 1.20x faster than cheap-box"), std::string::npos) << out;
    EXPECT_NE(out.find("cheap-box: CPU contention or stolen CPU (B7)"), std::string::npos) << out;
    // Within 3 %: about the same, and no reasons invented.
    b.wall_s = 118;
    RunComparison same = compare_runs(a, b, "x", "y");
    EXPECT_FALSE(same.faster);
    EXPECT_NE(render_run_comparison(same, Style{}).find("About the same speed"), std::string::npos);
    EXPECT_TRUE(same.reasons.empty());
}

// A job that crashed, was killed or stopped ended early: it is never the faster run.
TEST(RunCompareView, FailedOrKilledJobIsNeverRankedFaster) {
    RunResult ok = host_only_run(), bad = host_only_run();
    ok.tag = "boxA";
    ok.wall_s = 3.2;
    ok.end = JobEnd{false, 0, 3.2};
    bad.wall_s = 0.2;
    struct Case {
        std::optional<JobEnd> end;
        int exit_code, stop_signal;
        std::string words, reason;
    };
    for (const Case& k : {Case{JobEnd{false, 1, 0.2}, 1, 0, "exit 1", "boxB's job failed (exit 1)"},
                          Case{JobEnd{true, 9, 0.2}, 137, 0, "killed by signal 9", "killed by signal 9"},
                          Case{JobEnd{false, 0, 0.2}, 0, 15, "exit 0", "stopped by signal 15"},
                          Case{std::nullopt, 3, 0, "did not start", "boxB's job did not start"}}) {
        bad.end = k.end;
        bad.exit_code = k.exit_code;
        bad.stop_signal = k.stop_signal;
        for (bool b_second : {true, false}) {
            RunComparison c = b_second ? compare_runs(ok, bad, "boxA", "boxB") : compare_runs(bad, ok, "boxB", "boxA");
            EXPECT_FALSE(c.faster) << k.words;
            EXPECT_FALSE(measured(c.speedup)) << k.words;
            ASSERT_EQ(c.not_comparable.size(), 1u) << k.words;
            EXPECT_NE(c.not_comparable[0].find(k.reason), std::string::npos) << c.not_comparable[0];
            std::string out = render_run_comparison(c, Style{});
            EXPECT_EQ(out.find("faster"), std::string::npos) << out;
            EXPECT_NE(out.find("Not compared"), std::string::npos) << out;
            EXPECT_NE(out.find(k.words), std::string::npos) << out;  // the job-end row
            std::string json = render_run_comparison_json(c, Envelope{});
            EXPECT_NE(json.find("\"comparable\": false"), std::string::npos) << json;
            EXPECT_NE(json.find("\"faster\": null"), std::string::npos) << json;
            if (k.end) {
                EXPECT_NE(json.find(std::to_string(k.exit_code)), std::string::npos) << json;
            }
        }
    }
}

// "(x s vs y s)" follows the sentence: the faster run's time first.
TEST(RunCompareView, TimesInTheOrderOfTheSentence) {
    RunResult a = host_only_run(), b = host_only_run();
    a.wall_s = 3.2;
    b.wall_s = 1.6;
    std::string out = render_run_comparison(compare_runs(a, b, "boxA", "boxB"), Style{});
    EXPECT_NE(out.find("boxB was 2.00x faster than boxA (1.6 s vs 3.2 s)"), std::string::npos) << out;
    out = render_run_comparison(compare_runs(b, a, "boxB", "boxA"), Style{});
    EXPECT_NE(out.find("boxB was 2.00x faster than boxA (1.6 s vs 3.2 s)"), std::string::npos) << out;
}
