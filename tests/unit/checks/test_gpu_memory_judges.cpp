// The judges of gpu.memory_bandwidth and gpu.memtest on constructed measurements.
#include <gtest/gtest.h>

#include "support/check_helpers.hpp"
#include "checks/gpu_memory_bandwidth_judge.hpp"
#include "checks/gpu_memtest_judge.hpp"
#include "specs/gpu_spec.hpp"

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

StreamRun stream(double copy, double triad, std::uint64_t wrong_copy = 0) {
    StreamRun run;
    run.gpu = 1;
    run.buffer_bytes = 1ull << 30;
    run.l2_cache_bytes = 50ull << 20;
    run.ops = {{"copy", "copy_gbps", "Copy", copy, wrong_copy},
               {"read", "read_gbps", "Read", 100, 0},  // read and write carry no verdict
               {"write", "write_gbps", "Write", 100, 0},
               {"triad", "triad_gbps", "Triad", triad, 0}};
    return run;
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

TEST(StreamVerdict, HealthyBandwidthPasses) {
    GpuSpec spec = h100();
    CheckResult r;
    judge_stream(stream(3000, 3050), &spec, r);
    EXPECT_EQ(r.verdict, Verdict::Pass) << r.summary;
    EXPECT_EQ(r.summary, "copy 3000 GB/s, triad 3050 GB/s (90% of the 3350 GB/s spec; healthy is 83-93%).");
    EXPECT_NEAR(*find(r, "copy_gbps")->reference->fail_below, 3350 * 0.70, 1e-9);
    EXPECT_FALSE(find(r, "read_gbps")->reference->fail_below);  // % of spec only
    EXPECT_EQ(*find(r, "buffer_bytes")->value, double(1ull << 30));
    EXPECT_EQ(find(r, "triad_gbps")->gpu, 1);
}

TEST(StreamVerdict, BandwidthBelowTheFloorFailsAndBelowTheWarnLineWarns) {
    GpuSpec spec = h100();
    CheckResult fail;
    judge_stream(stream(3000, 1500), &spec, fail);  // triad 45% of spec
    EXPECT_EQ(fail.verdict, Verdict::Fail);
    EXPECT_EQ(fail.summary,
              "memory bandwidth 45% of the 3350 GB/s spec, below the 70% floor: copy 3000 GB/s, "
              "triad 1500 GB/s.");
    CheckResult warn;
    judge_stream(stream(2500, 3000), &spec, warn);  // copy 75%
    EXPECT_EQ(warn.verdict, Verdict::Warn);
}

TEST(StreamVerdict, WrongDataFailsWhateverTheRate) {
    GpuSpec spec = h100();
    CheckResult r;
    judge_stream(stream(3000, 3050, 12), &spec, r);
    EXPECT_EQ(r.verdict, Verdict::Fail);
    ASSERT_EQ(r.findings.size(), 1u);
    EXPECT_EQ(r.findings[0].text, "copy: 12 wrong results");
    EXPECT_EQ(r.findings[0].measurement, "copy_gbps");
    EXPECT_NE(r.summary.find("wrong data in device memory"), std::string::npos) << r.summary;
}

TEST(StreamVerdict, WithoutADatasheetFigureNoVerdictOnSpeed) {
    CheckResult r;
    judge_stream(stream(10, 10), nullptr, r);
    EXPECT_EQ(r.verdict, Verdict::Pass);
    EXPECT_FALSE(find(r, "copy_gbps")->reference);
    EXPECT_NE(r.summary.find("no verdict on speed"), std::string::npos);
}

TEST(MemtestVerdict, NoErrorsOverTheMemorySoldPasses) {
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
TEST(MemtestVerdict, AStoppedRunRatesOnlyWhatItTested) {
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

TEST(MemtestVerdict, TooLittleMemoryTestedWarns) {
    GpuSpec spec = h100();
    CheckResult r;
    judge_memtest(memtest(60), &spec, r);  // below 85% of 80 GiB
    EXPECT_EQ(r.verdict, Verdict::Warn);
    EXPECT_NE(r.summary.find("of the 80 GiB sold"), std::string::npos) << r.summary;
}

TEST(MemtestVerdict, MemoryErrorsFailAndEachIsAFinding) {
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

TEST(MemtestVerdict, AStopWithoutErrorsHasNoVerdictButErrorsBeforeItStillFail) {
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
