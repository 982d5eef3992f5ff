#include <gtest/gtest.h>

#include "core/result.hpp"

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

TEST(Report, ExitCodes) {
    Report r;
    r.finalize();
    EXPECT_EQ(r.exit_code, 0);  // nothing ran: nothing failed

    r.checks.push_back(check("a", Verdict::Warn));
    r.finalize();
    EXPECT_EQ(r.exit_code, 0);  // warnings allowed
    EXPECT_EQ(r.verdict, Verdict::Warn);

    r.checks.push_back(check("b", Verdict::Error));
    r.finalize();
    EXPECT_EQ(r.exit_code, 3);  // could not run

    r.checks.push_back(check("c", Verdict::Fail));
    r.finalize();
    EXPECT_EQ(r.exit_code, 1);  // a hardware finding outranks an errored check

    r.fatal = ReportError{"x", "driver", "boom", ""};
    r.finalize();
    EXPECT_EQ(r.exit_code, 3);
}

TEST(Measurement, AbsentCarriesReason) {
    auto m = Measurement::absent("copy_gbps", "Device copy", "GB/s", "GPU lost");
    EXPECT_FALSE(m.present());
    EXPECT_EQ(m.absent_reason, "GPU lost");
    auto n = Measurement::number("copy_gbps", "Device copy", 3000, "GB/s");
    EXPECT_TRUE(n.present());
}
