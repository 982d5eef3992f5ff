#include <gtest/gtest.h>

#include "core/result.hpp"
#include "support/result_fixtures.hpp"

using namespace gpuvet;

namespace {
CheckResult check(const char* key, Verdict v) {
    CheckResult c;
    c.key = key;
    c.verdict = v;
    return c;
}
}  // namespace

TEST(Verdict, WorstFoldsBySeverity) {
    EXPECT_EQ(worst(Verdict::Pass, Verdict::Warn), Verdict::Warn);
    EXPECT_EQ(worst(Verdict::Fail, Verdict::Warn), Verdict::Fail);
    EXPECT_EQ(worst(Verdict::Skip, Verdict::Pass), Verdict::Pass);
    EXPECT_EQ(worst(Verdict::Error, Verdict::Fail), Verdict::Error);
}

TEST(Report, ExitCodeIsOneForAFindingThreeForAnErrorOrNothingRunAndZeroWithWarnings) {
    Report r;
    r.finalize();
    EXPECT_EQ(r.exit_code, 3);  // nothing ran: nothing was checked, which is not a pass
    EXPECT_EQ(r.verdict, RunVerdict::CouldNotRun);

    r.checks.push_back(check("a", Verdict::Warn));
    r.finalize();
    EXPECT_EQ(r.exit_code, 0);  // warnings allowed
    EXPECT_EQ(r.verdict, RunVerdict::GoWithWarnings);
    EXPECT_EQ(r.worst_check, Verdict::Warn);

    r.checks.push_back(check("b", Verdict::Error));
    r.finalize();
    EXPECT_EQ(r.exit_code, 3);  // a check could not run
    EXPECT_EQ(r.verdict, RunVerdict::Incomplete);

    r.checks.push_back(check("c", Verdict::Fail));
    r.finalize();
    EXPECT_EQ(r.exit_code, 1);  // a hardware finding outranks an errored check

    r.fatal = ReportError{"x", "driver", "boom", ""};
    r.finalize();
    EXPECT_EQ(r.exit_code, 3);
}

TEST(Report, NothingCheckedIsNotAPass) {
    Report r;
    r.checks.push_back(test::result_of("gpu.burn", Verdict::Skip, "no NVIDIA driver"));
    r.checks.push_back(test::result_of("gpu.p2p", Verdict::Skip));
    r.finalize();
    EXPECT_EQ(r.verdict, RunVerdict::CouldNotRun);
    EXPECT_EQ(r.exit_code, 3);
    EXPECT_STREQ(to_string(r.verdict), "COULD_NOT_RUN");
}

TEST(Report, InterruptedIsNeverGo) {
    Report r;
    r.checks.push_back(test::result_of("gpu.memory_bandwidth", Verdict::Pass));
    r.checks.push_back(test::result_of("gpu.burn", Verdict::Skip, kNotRunInterrupted));
    r.interrupted = true;
    r.finalize();
    EXPECT_EQ(r.verdict, RunVerdict::Incomplete);
    EXPECT_EQ(r.exit_code, 3);
    EXPECT_STREQ(to_string(r.verdict), "INCOMPLETE");

    // What already failed stays a failure: NO-GO, exit 1, interrupted or not.
    r.checks.push_back(test::result_of("gpu.p2p", Verdict::Fail));
    r.finalize();
    EXPECT_EQ(r.verdict, RunVerdict::NoGo);
    EXPECT_EQ(r.exit_code, 1);

    // Interrupted before anything was judged: nothing checked.
    Report early;
    early.checks.push_back(test::result_of("gpu.p2p", Verdict::Skip, "interrupted before a result"));
    early.interrupted = true;
    early.finalize();
    EXPECT_EQ(early.verdict, RunVerdict::CouldNotRun);
    EXPECT_EQ(early.exit_code, 3);
}

TEST(Report, CompleteRunIsGo) {
    Report r;
    r.checks.push_back(test::result_of("a", Verdict::Pass));
    r.checks.push_back(test::result_of("b", Verdict::Skip));
    r.finalize();
    EXPECT_EQ(r.verdict, RunVerdict::Go);
    EXPECT_EQ(r.exit_code, 0);
    EXPECT_STREQ(to_string(r.verdict), "PASS");
}

TEST(Measurement, AbsentCarriesReason) {
    auto m = Measurement::absent("copy_gbps", "Device copy", "GB/s", "GPU lost");
    EXPECT_FALSE(m.present());
    EXPECT_EQ(m.absent_reason, "GPU lost");
    auto n = Measurement::number("copy_gbps", "Device copy", 3000, "GB/s");
    EXPECT_TRUE(n.present());
}
