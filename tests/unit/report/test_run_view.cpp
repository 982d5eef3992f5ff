// The terminal printer of the trial run: the verdict comes first with its numbers and action, the
// seed test is always stated, a host-only run says no GPU was visible.
#include <gtest/gtest.h>

#include "compare/run_compare.hpp"
#include "report/run_compare_view.hpp"
#include "report/run_view.hpp"
#include "support/run_reports.hpp"

using namespace gpuvet;
using namespace gpuvet::test;

TEST(RunView, VerdictFirstThenTheSeedTestAndNoGpu) {
    std::string out = render_run_summary(host_only_run(), Style{false, 100, false});
    auto verdict = out.find("Verdict: MOSTLY WAITING (info, rule H3, the job)");
    ASSERT_NE(verdict, std::string::npos) << out;
    EXPECT_LT(verdict, out.find("Host over the steady window"));
    EXPECT_NE(out.find("→ Look at what it waits for."), std::string::npos);
    EXPECT_NE(out.find("GPU utilization peak ≥ 90 %: not judged"), std::string::npos) << out;
    EXPECT_NE(out.find("No GPU was visible (libnvidia-ml.so.1 could not be loaded): host side only."),
              std::string::npos);
    EXPECT_NE(out.find("gpuvet run: python3 -c import time time.sleep(1)"), std::string::npos) << out;  // one line
}

TEST(RunView, SeedTestReachedAndNotReached) {
    RunResult r = host_only_run();
    r.diagnosis.seed_peak_reached = false;
    r.diagnosis.seed_peak_percent = 41;
    EXPECT_NE(render_run_summary(r, Style{}).find("GPU utilization peak ≥ 90 %: not reached (41 %)"),
              std::string::npos);
    r.diagnosis.seed_peak_reached = true;
    r.diagnosis.seed_peak_percent = 97;
    EXPECT_NE(render_run_summary(r, Style{}).find("GPU utilization peak ≥ 90 %: reached (97 %)"), std::string::npos);
}
