// gpu.h2d_d2h's judge on constructed copy figures: the link it grades against, its findings and
// the GPUs that share an uplink.
#include <gtest/gtest.h>

#include "support/check_helpers.hpp"
#include "checks/gpu_h2d_d2h_judge.hpp"

using namespace gpuvet;

namespace {

// A GPU on a Gen5 x16 link (63.008 GB/s) copying at `gbps` each way, alone and with the others.
HostCopyMeasured gen5_gpu(int gpu, double gbps = 55, std::optional<double> all_gbps = 55) {
    HostCopyMeasured g;
    g.gpu = gpu;
    g.alone = {gbps, gbps, 2 * gbps, 0};
    if (all_gbps) g.all = HostCopyRates{*all_gbps, *all_gbps, 2 * *all_gbps, 0};
    g.under_load = {5, 16, ""};
    g.idle_gen = 1;  // idle links drop their generation
    g.idle_width = 16;
    g.max_gen = 5;
    return g;
}

HostCopyGroup group_of(int measured, std::vector<int> shared = {}, std::string path = {}) {
    return HostCopyGroup{measured, 256u << 20, std::move(shared), std::move(path)};
}

}  // namespace

TEST(HostCopyJudge, HealthyCopiesPassAgainstTheLinkUnderLoad) {
    CheckResult r = judge_host_copies(gen5_gpu(3), group_of(8));
    EXPECT_EQ(r.verdict, Verdict::Pass) << r.summary;
    EXPECT_EQ(r.gpu, 3);
    EXPECT_TRUE(r.findings.empty());
    EXPECT_EQ(r.summary,
              "H2D 55.0, D2H 55.0, both ways 110.0 GB/s (87% of the Gen5 x16 link's 63.0 GB/s; healthy ~82%); "
              "all 8 GPUs at once: 55.0 / 55.0 GB/s.");
    const Measurement* h2d = find(r, "h2d_gbps");
    ASSERT_TRUE(h2d && h2d->reference);
    EXPECT_NEAR(*h2d->reference->spec, 63.008, 1e-9);
    EXPECT_NEAR(*h2d->reference->fail_below, 0.5 * 63.008, 1e-9);
    EXPECT_NE(h2d->reference->source.find("link Gen5 x16 read from NVML while the copies ran"), std::string::npos);
    EXPECT_NEAR(*find(r, "bidir_gbps")->reference->spec, 2 * 63.008, 1e-9);
    EXPECT_EQ(find(r, "link_gen_under_load")->value, 5);
    EXPECT_EQ(find(r, "buffer_bytes")->value, double(256u << 20));
    EXPECT_DOUBLE_EQ(*find(r, "h2d_all_gbps")->reference->warn_below, 0.70 * 55);
}

TEST(HostCopyJudge, CopiesUnderTheFloorFailAndBetweenTheLinesWarn) {
    HostCopyMeasured slow = gen5_gpu(0);
    slow.alone.d2h_gbps = 30;  // 48% of 63.0: under the 50% floor
    CheckResult r = judge_host_copies(slow, group_of(8));
    EXPECT_EQ(r.verdict, Verdict::Fail);
    ASSERT_EQ(r.findings.size(), 1u);
    EXPECT_EQ(r.findings[0].measurement, "d2h_gbps");
    EXPECT_NE(r.findings[0].text.find(
                  "host copies reach only 48% of the Gen5 x16 link's 63.0 GB/s (healthy is about 82%, floor 50%)"),
              std::string::npos)
        << r.findings[0].text;
    EXPECT_EQ(r.summary, r.findings[0].text + ".");
    ASSERT_EQ(r.details.size(), 1u);  // the figures, as context
    EXPECT_EQ(r.details[0].rfind("H2D 55.0, D2H 30.0", 0), 0u) << r.details[0];

    HostCopyMeasured meh = gen5_gpu(0, 40);  // 63%: under 72%, over 50%
    CheckResult w = judge_host_copies(meh, group_of(8));
    EXPECT_EQ(w.verdict, Verdict::Warn);
    ASSERT_EQ(w.findings.size(), 1u);
    EXPECT_NE(w.findings[0].text.find("floor 72%"), std::string::npos) << w.findings[0].text;
}

TEST(HostCopyJudge, WrongWordsFailAlongsideTheRest) {
    HostCopyMeasured g = gen5_gpu(1);
    g.alone.wrong_words = 2;
    g.all->wrong_words = 3;
    g.under_load.gen = 4;                      // also below its maximum
    g.alone.h2d_gbps = g.alone.d2h_gbps = 27;  // 86% of Gen4 x16's 31.5: fast enough for the link it ran at
    CheckResult r = judge_host_copies(g, group_of(8));
    EXPECT_EQ(r.verdict, Verdict::Fail);
    ASSERT_EQ(r.findings.size(), 2u);
    EXPECT_EQ(r.findings[0].verdict, Verdict::Fail);  // the worst first
    EXPECT_NE(r.findings[0].text.find("wrong data after host<->GPU copies: 5 8-byte words differ"), std::string::npos);
    EXPECT_EQ(r.findings[1].verdict, Verdict::Warn);
    EXPECT_EQ(r.findings[1].measurement, "link_gen_under_load");
    EXPECT_EQ(r.findings[1].text, "the link stayed at Gen4 during the copies where Gen5 is possible");
}

TEST(HostCopyJudge, TheIdleReadingStandsInWhenNvmlCannotSayUnderLoad) {
    HostCopyMeasured g = gen5_gpu(0);
    g.under_load = {std::nullopt, std::nullopt, "no permission"};
    g.idle_gen = 4;
    CheckResult r = judge_host_copies(g, group_of(8));
    EXPECT_FALSE(find(r, "link_gen_under_load")->value);
    EXPECT_EQ(find(r, "link_gen_under_load")->absent_reason, "no permission");
    EXPECT_NEAR(*find(r, "link_gbps")->value, 31.504, 1e-9);
    EXPECT_NE(
        find(r, "h2d_gbps")->reference->source.find("Gen4 x16 read at idle before the test (no permission under load)"),
        std::string::npos);
    EXPECT_EQ(r.verdict, Verdict::Pass);  // no under-load generation: no generation warning

    g.idle_gen.reset();
    CheckResult u = judge_host_copies(g, group_of(8));
    EXPECT_EQ(u.verdict, Verdict::Pass);
    EXPECT_EQ(find(u, "link_gbps")->absent_reason, "link state unknown");
    EXPECT_FALSE(find(u, "h2d_gbps")->reference);
    EXPECT_NE(u.summary.find("link rate unknown, so no verdict on speed"), std::string::npos) << u.summary;
}

TEST(HostCopyJudge, GpusThatSlowDownTogetherShareTheirSwitch) {
    std::vector<HostCopyMeasured> gpus;
    for (int i = 0; i < 8; ++i) gpus.push_back(gen5_gpu(i, 55, i >= 4 ? 16.0 : 55.0));
    const std::vector<int> shared = gpus_sharing_uplink(gpus);
    EXPECT_EQ(shared, (std::vector<int>{4, 5, 6, 7}));

    TopologyLabels labels;
    for (int a = 4; a < 8; ++a)
        for (int b = a + 1; b < 8; ++b) labels[{a, b}] = "PXB";
    EXPECT_EQ(shared_path(shared, labels), "one PCIe switch (topology PXB)");
    labels[{5, 7}] = "SYS";
    EXPECT_EQ(shared_path(shared, labels), "a PCIe switch or uplink");
    labels.erase({5, 7});
    EXPECT_EQ(shared_path(shared, labels), "a PCIe switch or uplink");  // a label unknown

    CheckResult r = judge_host_copies(gpus[5], group_of(8, shared, "one PCIe switch (topology PXB)"));
    EXPECT_EQ(r.verdict, Verdict::Warn);
    ASSERT_EQ(r.findings.size(), 1u);
    EXPECT_EQ(r.findings[0].measurement, "h2d_all_gbps");
    EXPECT_NE(r.findings[0].text.find("16.0 / 16.0 GB/s (H2D / D2H), 29% of its 55.0 / 55.0 alone: GPUs 4, 5, 6, 7 "
                                      "slow down together, so they share one PCIe switch (topology PXB)"),
              std::string::npos)
        << r.findings[0].text;
    EXPECT_EQ(judge_host_copies(gpus[2], group_of(8, shared, "x")).verdict, Verdict::Pass);
}

TEST(HostCopyJudge, TheAllAtOncePhaseMissingIsAbsentWithItsReason) {
    CheckResult one = judge_host_copies(gen5_gpu(0, 55, std::nullopt), group_of(1));
    EXPECT_EQ(find(one, "h2d_all_gbps")->absent_reason, "only one GPU could be measured");
    EXPECT_EQ(one.summary.find("at once"), std::string::npos) << one.summary;
    CheckResult cut = judge_host_copies(gen5_gpu(0, 55, std::nullopt), group_of(4));
    EXPECT_EQ(find(cut, "bidir_all_gbps")->absent_reason, "not measured (interrupted)");
    EXPECT_EQ(cut.verdict, Verdict::Pass);
}
