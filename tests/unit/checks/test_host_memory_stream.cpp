// host.memory's STREAM judge: verdicts and sentences from measured rates, without running STREAM.
#include <gtest/gtest.h>

#include "checks/host_memory_stream.hpp"

#include "support/check_helpers.hpp"

using namespace gpuvet;

namespace {

StreamRun verified_run(double triad_gbps) {
    StreamRun run;
    run.result.copy_gbps = triad_gbps * 0.9;
    run.result.scale_gbps = triad_gbps * 0.9;
    run.result.add_gbps = triad_gbps;
    run.result.triad_gbps = triad_gbps;
    run.result.verified = true;
    run.result.threads = 64;
    run.result.array_bytes = 1ull << 30;
    run.repeats = 3;
    run.cpus_used = 64;
    run.numa_nodes = 2;
    return run;
}

DimmFindings theoretical(double gbps) {
    DimmFindings d;
    Reference ref;
    ref.spec = gbps;
    ref.expected_fraction = kStreamExpectedFraction;
    ref.source = "theoretical = 16 channels";
    d.stream_reference = ref;
    return d;
}

CheckResult judged(const StreamRun& run, const StreamHost& host, const DimmFindings& dimms) {
    CheckResult r;
    r.verdict = Verdict::Pass;
    judge_stream(r, run, host, dimms);
    return r;
}

}  // namespace

TEST(HostMemoryStream, HealthyTriadPassesWithItsShareOfTheTheoreticalRate) {
    CheckResult r = judged(verified_run(300), StreamHost{1ull << 40, 64}, theoretical(400));
    EXPECT_EQ(r.verdict, Verdict::Pass);
    EXPECT_EQ(r.summary,
              "1.0 TiB RAM, STREAM triad 300 GB/s with 64 threads, results verified, 75% of the theoretical 400 GB/s.");
    ASSERT_TRUE(find(r, "triad_gbps"));
    EXPECT_DOUBLE_EQ(find(r, "triad_gbps")->reference->warn_below.value_or(0), 200);
    EXPECT_FALSE(find(r, "copy_gbps")->reference->warn_below);  // only triad is graded
    EXPECT_DOUBLE_EQ(find(r, "numa_nodes_used")->value.value_or(0), 2);
}

TEST(HostMemoryStream, TriadBelowHalfTheTheoreticalRateWarns) {
    CheckResult r = judged(verified_run(150), StreamHost{1ull << 40, 64}, theoretical(400));
    EXPECT_EQ(r.verdict, Verdict::Warn);
    EXPECT_EQ(r.summary.rfind("STREAM triad 150 GB/s is only 37.5% of the theoretical 400 GB/s", 0), 0u) << r.summary;
}

TEST(HostMemoryStream, FewerCpusThanTheHostIsShownButNotGraded) {
    StreamRun run = verified_run(150);
    run.cpus_used = 4;
    CheckResult r = judged(run, StreamHost{1ull << 40, 64}, theoretical(400));
    EXPECT_EQ(r.verdict, Verdict::Pass);
    EXPECT_FALSE(find(r, "triad_gbps")->reference->warn_below);
    EXPECT_NE(r.summary.find("(not graded: 4 of 64 CPUs allowed)"), std::string::npos) << r.summary;
}

TEST(HostMemoryStream, WrongResultsFailAndNoResultsSkip) {
    StreamRun wrong = verified_run(300);
    wrong.result.verified = false;
    wrong.result.verify_error = "triad mismatch at element 7";
    CheckResult r = judged(wrong, StreamHost{}, DimmFindings{});
    EXPECT_EQ(r.verdict, Verdict::Fail);
    EXPECT_EQ(r.summary, "STREAM results were wrong: triad mismatch at element 7 (memory or CPU fault).");

    StreamRun none;
    none.result.verify_error = "could not allocate the arrays";
    CheckResult s = judged(none, StreamHost{}, DimmFindings{});
    EXPECT_EQ(s.verdict, Verdict::Skip);
    ASSERT_TRUE(find(s, "triad_gbps"));
    EXPECT_FALSE(find(s, "triad_gbps")->present());
    EXPECT_EQ(find(s, "triad_gbps")->absent_reason, "could not allocate the arrays");
}

TEST(HostMemoryStream, DimmWarningLeadsTheSummaryAndWarns) {
    DimmFindings d = theoretical(400);
    d.warnings.push_back("only 4 of 16 DIMM slots are populated");
    CheckResult r = judged(verified_run(300), StreamHost{std::nullopt, 64}, d);
    EXPECT_EQ(r.verdict, Verdict::Warn);
    EXPECT_EQ(r.summary.rfind("Only 4 of 16 DIMM slots are populated; STREAM triad 300 GB/s, results verified", 0), 0u)
        << r.summary;
}
