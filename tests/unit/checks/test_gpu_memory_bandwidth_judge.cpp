// The judge of gpu.memory_bandwidth on constructed measurements.
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

}  // namespace

TEST(GpuMemoryBandwidthJudge, HealthyBandwidthPasses) {
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

TEST(GpuMemoryBandwidthJudge, BandwidthBelowTheFloorFailsAndBelowTheWarnLineWarns) {
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

TEST(GpuMemoryBandwidthJudge, WrongDataFailsWhateverTheRate) {
    GpuSpec spec = h100();
    CheckResult r;
    judge_stream(stream(3000, 3050, 12), &spec, r);
    EXPECT_EQ(r.verdict, Verdict::Fail);
    ASSERT_EQ(r.findings.size(), 1u);
    EXPECT_EQ(r.findings[0].text, "copy: 12 wrong results");
    EXPECT_EQ(r.findings[0].measurement, "copy_gbps");
    EXPECT_NE(r.summary.find("wrong data in device memory"), std::string::npos) << r.summary;
}

TEST(GpuMemoryBandwidthJudge, WithoutADatasheetFigureNoVerdictOnSpeed) {
    CheckResult r;
    judge_stream(stream(10, 10), nullptr, r);
    EXPECT_EQ(r.verdict, Verdict::Pass);
    EXPECT_FALSE(find(r, "copy_gbps")->reference);
    EXPECT_NE(r.summary.find("no verdict on speed"), std::string::npos);
}
