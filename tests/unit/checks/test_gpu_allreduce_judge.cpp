// gpu.allreduce's judge on constructed sweeps: busbw against the floor, wrong sums, stops.
#include <gtest/gtest.h>

#include <algorithm>

#include "support/check_helpers.hpp"
#include "checks/gpu_allreduce_judge.hpp"
#include "specs/gpu_spec.hpp"

using namespace gpuvet;
using namespace gpuvet::allreduce;

namespace {

GpuSpec h100() {
    GpuSpec s;
    s.key = "h100-sxm5-80gb";
    s.name = "H100 SXM5 80GB";
    return s;
}

// 8 GPUs on NVLink, 1 MiB to 1 GiB, the largest at `busbw`.
AllReduceRun sweep(double busbw, std::uint64_t wrong_at_16mib = 0) {
    AllReduceRun run;
    run.ranks = 8;
    run.all_nvlink = true;
    run.max_bytes = 1ull << 30;
    run.algorithm = "NCCL default";
    run.nccl_path = "/lib/libnccl.so.2";
    run.nccl_version = "2.21.5";
    for (std::uint64_t b = 1ull << 20; b <= run.max_bytes; b *= 4) {
        double bus = b == run.max_bytes ? busbw : busbw / 2;
        run.sizes.push_back({b, bus / 1.75, bus, 1000, b == (16ull << 20) ? wrong_at_16mib : 0});
    }
    return run;
}

}  // namespace

TEST(AllReduceVerdict, BusbwAboveTheFloorPasses) {
    GpuSpec spec = h100();
    CheckResult r = judge_allreduce(sweep(500), &spec);  // 8xH100 floor 460, WARN below 483
    EXPECT_EQ(r.verdict, Verdict::Pass) << r.summary;
    EXPECT_DOUBLE_EQ(*find(r, "busbw_gbps")->value, 500);
    EXPECT_DOUBLE_EQ(*find(r, "busbw_gbps")->reference->fail_below, 460);
    EXPECT_DOUBLE_EQ(*find(r, "peak_busbw_gbps")->value, 500);
    EXPECT_EQ(r.summary, "busbw 500.0 GB/s at 1 GiB over 8 GPUs (floor 460), all results verified");
    EXPECT_TRUE(r.findings.empty());
}

TEST(AllReduceVerdict, BusbwBelowTheFloorFailsAndJustAboveWarns) {
    GpuSpec spec = h100();
    EXPECT_EQ(judge_allreduce(sweep(400), &spec).verdict, Verdict::Fail);
    EXPECT_EQ(judge_allreduce(sweep(470), &spec).verdict, Verdict::Warn);  // within 5% of 460
}

TEST(AllReduceVerdict, WrongSumsFailWhateverTheSpeedAndAreFindings) {
    GpuSpec spec = h100();
    CheckResult r = judge_allreduce(sweep(500, 7), &spec);
    EXPECT_EQ(r.verdict, Verdict::Fail);
    EXPECT_EQ(r.summary, "7 of 6000 checked all-reduce results are WRONG");
    ASSERT_EQ(r.findings.size(), 1u);
    EXPECT_EQ(r.findings[0].verdict, Verdict::Fail);
    EXPECT_EQ(r.findings[0].text, "16 MiB: 7 of 1000 checked elements WRONG");
    for (const auto& d : r.details) EXPECT_EQ(d.find("WRONG"), std::string::npos) << d;
}

TEST(AllReduceVerdict, WithoutNvlinkThereIsNoFloorAndNoVerdictOnSpeed) {
    GpuSpec spec = h100();
    AllReduceRun run = sweep(10);
    run.all_nvlink = false;
    CheckResult r = judge_allreduce(run, &spec);
    EXPECT_EQ(r.verdict, Verdict::Pass);
    EXPECT_FALSE(find(r, "busbw_gbps")->reference);
    EXPECT_NE(r.details.back().find("no published floor"), std::string::npos) << r.details.back();
}

TEST(AllReduceVerdict, AStopBeforeTheLargestSizeLeavesItsFiguresAbsent) {
    GpuSpec spec = h100();
    AllReduceRun run = sweep(100);
    run.sizes.pop_back();  // the 1 GiB size was not reached
    run.interrupted = true;
    CheckResult r = judge_allreduce(run, &spec);
    EXPECT_EQ(r.verdict, Verdict::Skip);
    EXPECT_EQ(find(r, "busbw_gbps")->absent_reason, kInterrupted);
    EXPECT_DOUBLE_EQ(*find(r, "peak_busbw_gbps")->value, 50);
    EXPECT_NE(r.summary.find("peak so far 50.0 GB/s"), std::string::npos) << r.summary;
    // Wrong sums found before the stop still fail.
    run.sizes[2].wrong = 1;
    EXPECT_EQ(judge_allreduce(run, &spec).verdict, Verdict::Fail);
}

TEST(AllReduceVerdict, RcclOnXgmiIsReportedWithoutASpeedVerdictAndSaysWhy) {
    GpuSpec spec;
    spec.key = "mi300x";
    spec.name = "Instinct MI300X";
    AllReduceRun run = sweep(120);
    run.all_nvlink = false;
    run.library = "RCCL";
    run.nccl_path = "/opt/rocm/lib/librccl.so.1";
    run.unjudged_reason = "no published RCCL all-reduce floor for Instinct MI300X";
    CheckResult r = judge_allreduce(run, &spec);
    EXPECT_EQ(r.verdict, Verdict::Pass) << r.summary;
    EXPECT_EQ(r.summary,
              "busbw 120.0 GB/s at 1 GiB over 8 GPUs, all results verified; speed not judged (no "
              "published floor)");
    EXPECT_FALSE(find(r, "busbw_gbps")->reference);
    EXPECT_EQ(find(r, "nccl")->label, "RCCL used");
    EXPECT_NE(std::find(r.details.begin(), r.details.end(), run.unjudged_reason), r.details.end());
    // A wrong sum still fails.
    run.sizes[2].wrong = 3;
    EXPECT_EQ(judge_allreduce(run, &spec).verdict, Verdict::Fail);
}
