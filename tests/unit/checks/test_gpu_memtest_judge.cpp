// The judge of gpu.memtest on constructed measurements.
#include <gtest/gtest.h>

#include "checks/gpu_memory_bandwidth_judge.hpp"
#include "checks/gpu_memtest_judge.hpp"
#include "specs/gpu_spec.hpp"
#include "support/check_helpers.hpp"

using namespace gpuvet;
using namespace gpuvet::measure;

namespace {

GpuSpec h100() {
    GpuSpec s;
    s.key = "h100-sxm5-80gb";
    s.name = "H100 SXM5 80GB";
    s.memory_size_gib = 80;
    s.memory_bandwidth_gbps = 3350;
    return s;
}

MemtestRun memtest(double tested_gib, std::uint64_t errors = 0) {
    MemtestRun run;
    run.gpu = 2;
    run.tested_bytes = static_cast<std::uint64_t>(tested_gib * double(1ull << 30));
    run.memory_total_bytes = 80ull << 30;
    run.patterns = 4;
    run.passes = 1;
    run.errors = errors;
    for (std::uint64_t i = 0; i < errors; ++i)
        run.first_errors.push_back({8 * i, 0x7f0000000000 + 8 * i, "random", 0xff, 0xf7});
    run.ms_total = 1000;
    run.processed_bytes = run.tested_bytes * 4;  // every pattern over all of it
    return run;
}

}  // namespace

TEST(GpuMemtestJudge, NoErrorsOverTheMemorySoldPasses) {
    GpuSpec spec = h100();
    CheckResult r;
    judge_memtest(memtest(78), &spec, r);
    EXPECT_EQ(r.verdict, Verdict::Pass) << r.summary;
    EXPECT_EQ(r.summary, "no errors in 78.0 GiB tested with 4 pattern(s) x 1 pass(es).");
    EXPECT_EQ(*find(r, "errors")->value, 0);
    EXPECT_EQ(*find(r, "patterns")->value, 4);
    EXPECT_NEAR(*find(r, "test_gbps")->value, 2.0 * 78 * double(1ull << 30) * 4 / 1e9, 1e-6);
    EXPECT_FALSE(find(r, "nvml_memory_total_bytes"));
}

// A stop after errors: the rate is over what was written and verified, not over the plan.
TEST(GpuMemtestJudge, AStoppedRunRatesOnlyWhatItTested) {
    GpuSpec spec = h100();
    MemtestRun run = memtest(78, 1);
    run.interrupted = true;
    run.processed_bytes = run.tested_bytes;  // one pattern of four done
    run.ms_total = 250;
    CheckResult r;
    judge_memtest(run, &spec, r);
    EXPECT_EQ(r.verdict, Verdict::Fail);
    EXPECT_NEAR(*find(r, "test_gbps")->value, 2.0 * 78 * double(1ull << 30) / 0.25 / 1e9, 1e-6);
}

TEST(GpuMemtestJudge, TooLittleMemoryTestedWarns) {
    GpuSpec spec = h100();
    CheckResult r;
    judge_memtest(memtest(60), &spec, r);  // below 85% of 80 GiB
    EXPECT_EQ(r.verdict, Verdict::Warn);
    EXPECT_NE(r.summary.find("of the 80 GiB sold"), std::string::npos) << r.summary;
}

TEST(GpuMemtestJudge, MemoryErrorsFailAndEachIsAFinding) {
    GpuSpec spec = h100();
    CheckResult r;
    judge_memtest(memtest(78, 2), &spec, r);
    EXPECT_EQ(r.verdict, Verdict::Fail);
    EXPECT_EQ(*find(r, "errors")->value, 2);
    ASSERT_EQ(r.findings.size(), 2u);
    EXPECT_EQ(r.findings[1].verdict, Verdict::Fail);
    EXPECT_EQ(r.findings[1].measurement, "errors");
    EXPECT_EQ(r.findings[1].text,
              "bit error at byte offset 8 of the memory tested (address 0x7f0000000008), pattern "
              "random: wrote 0xff, read 0xf7, flipped bits 0x8");
    EXPECT_NE(r.summary.find(r.findings[0].text), std::string::npos) << r.summary;
    for (const auto& d : r.details) EXPECT_EQ(d.find("bit error"), std::string::npos) << d;
}

TEST(GpuMemtestJudge, AStopWithoutErrorsHasNoVerdictButErrorsBeforeItStillFail) {
    GpuSpec spec = h100();
    CheckResult clean;
    MemtestRun run = memtest(78);
    run.interrupted = true;
    judge_memtest(run, &spec, clean);
    EXPECT_EQ(clean.verdict, Verdict::Skip);
    CheckResult bad;
    run = memtest(78, 1);
    run.interrupted = true;
    judge_memtest(run, &spec, bad);
    EXPECT_EQ(bad.verdict, Verdict::Fail);
    EXPECT_NE(bad.details.front().find("interrupted before the whole memory was tested"), std::string::npos);
}
