// gpu.p2p's judge on constructed pair figures: verdicts, findings and the absent figures of a stop.
#include <gtest/gtest.h>

#include "support/check_helpers.hpp"
#include "checks/gpu_p2p_judge.hpp"
#include "gpu/inventory.hpp"
#include "specs/gpu_spec.hpp"

using namespace gpuvet;

namespace {

// Every directed pair of `gpus` measured over NV18 against 450 GB/s per direction.
P2pMeasured nvlink_box(const std::vector<int>& gpus, double uni_gbps = 370, double bidir_gbps = 740) {
    P2pMeasured in;
    in.gpus = gpus;
    in.buffer_bytes = 32u << 20;
    for (int a : gpus)
        for (int b : gpus) {
            if (a == b) continue;
            P2pPairFigures& p = in.pairs[{a, b}];
            p.can_access = p.enabled = true;
            p.path = "NV18";
            p.nvlinks = 18;
            p.uni_gbps = uni_gbps;
            p.latency_us = 2.5;
            if (a < b) p.bidir_gbps = bidir_gbps;
            p.expected = {450.0, "NVLink NV18"};
        }
    return in;
}

// The same pairs over PCIe (PXB) against 63 GB/s per direction.
P2pMeasured pcie_box(const std::vector<int>& gpus, double uni_gbps) {
    P2pMeasured in = nvlink_box(gpus, uni_gbps, 2 * uni_gbps);
    for (auto& [k, p] : in.pairs) {
        p.path = "PXB";
        p.nvlinks = 0;
        p.expected = {63.0, "PCIe (PXB)"};
    }
    return in;
}

}  // namespace

TEST(P2pJudge, HealthyNvlinkPairsPassWithTheSlowestPairGraded) {
    CheckResult r = judge_p2p(nvlink_box({0, 1, 2}));
    EXPECT_EQ(r.verdict, Verdict::Pass) << r.summary;
    EXPECT_TRUE(r.findings.empty());
    EXPECT_NE(r.summary.find("6 directed pairs of 3 GPUs"), std::string::npos) << r.summary;
    EXPECT_NE(r.summary.find("82% of 450 GB/s"), std::string::npos) << r.summary;
    ASSERT_GE(r.measurements.size(), 3u);
    EXPECT_EQ(r.measurements[0].key, "latency_us_max");
    EXPECT_EQ(r.measurements[1].key, "uni_gbps_min");
    EXPECT_EQ(r.measurements[2].key, "bidir_gbps_of_slowest_pair");
    EXPECT_EQ(r.measurements[1].reference->spec, 450);
    EXPECT_DOUBLE_EQ(*r.measurements[1].reference->warn_below, 0.75 * 450);
    EXPECT_DOUBLE_EQ(*r.measurements[2].reference->fail_below, 2 * 0.50 * 450);
    ASSERT_NE(find(r, "bidir_gbps_0_2"), nullptr);
    EXPECT_EQ(find(r, "bidir_gbps_2_0"), nullptr);  // both ways: the (lower, higher) entry only
    EXPECT_EQ(find(r, "buffer_bytes")->value, double(32u << 20));
}

TEST(P2pJudge, APairBelowTheNvlinkFloorFails) {
    P2pMeasured in = nvlink_box({0, 1, 2});
    in.pairs[{2, 1}].uni_gbps = 200;  // 44% of 450, under the 50% floor
    CheckResult r = judge_p2p(in);
    EXPECT_EQ(r.verdict, Verdict::Fail) << r.summary;
    ASSERT_EQ(r.findings.size(), 1u);
    EXPECT_EQ(r.findings[0].verdict, Verdict::Fail);
    EXPECT_EQ(r.findings[0].measurement, "uni_gbps_min");
    EXPECT_NE(r.findings[0].text.find("GPU 2 -> 1 copies at 200.0 GB/s over NV18, 44% of its 450 GB/s"),
              std::string::npos)
        << r.findings[0].text;
    EXPECT_EQ(r.summary, r.findings[0].text + ".");
    EXPECT_EQ(find(r, "uni_gbps_min")->value, 200);
}

TEST(P2pJudge, APairBetweenWarnAndFailLinesWarns) {
    P2pMeasured in = nvlink_box({0, 1});
    in.pairs[{0, 1}].uni_gbps = 300;  // 67%: under 75%, over 50%
    EXPECT_EQ(judge_p2p(in).verdict, Verdict::Warn);
}

TEST(P2pJudge, BothWaysBelowTheLineWarnsEvenWhenOneWayPasses) {
    CheckResult r = judge_p2p(nvlink_box({0, 1}, 370, 600));  // 600 of 900: under 2 x 75%
    EXPECT_EQ(r.verdict, Verdict::Warn) << r.summary;
    ASSERT_EQ(r.findings.size(), 1u);
    EXPECT_EQ(r.findings[0].verdict, Verdict::Warn);
}

TEST(P2pJudge, AVerificationMismatchFails) {
    P2pMeasured in = nvlink_box({0, 1});
    in.pairs[{0, 1}].wrong_words = 5;
    CheckResult r = judge_p2p(in);
    EXPECT_EQ(r.verdict, Verdict::Fail);
    ASSERT_EQ(r.findings.size(), 1u);
    EXPECT_NE(r.findings[0].text.find("wrong data copied GPU 0 -> 1: 5 words differ"), std::string::npos)
        << r.findings[0].text;
}

TEST(P2pJudge, MissingPeerAccessOverNvlinkFailsAndOverPcieWarns) {
    P2pMeasured in = nvlink_box({2, 3, 4});
    for (auto k : {std::pair{2, 3}, std::pair{3, 2}, std::pair{3, 4}, std::pair{4, 3}}) {
        in.pairs[k].can_access = in.pairs[k].enabled = false;
        in.pairs[k].uni_gbps = 27.4;  // staged through the host
    }
    CheckResult r = judge_p2p(in);
    EXPECT_EQ(r.verdict, Verdict::Fail);
    ASSERT_FALSE(r.findings.empty());
    EXPECT_EQ(r.findings[0].verdict, Verdict::Fail);
    EXPECT_NE(r.findings[0].text.find("not supported between GPUs 2-3, 3-4, which are joined by NV18"),
              std::string::npos)
        << r.findings[0].text;
    EXPECT_NE(r.findings[0].text.find("(27.4 GB/s)"), std::string::npos);
    bool starred = false;
    for (auto& d : r.details) starred = starred || d.find("27*") != std::string::npos;
    EXPECT_TRUE(starred);

    P2pMeasured pcie = pcie_box({0, 1}, 40);
    for (auto& [k, p] : pcie.pairs) p.can_access = p.enabled = false;
    CheckResult w = judge_p2p(pcie);
    EXPECT_EQ(w.verdict, Verdict::Warn) << w.summary;
    ASSERT_EQ(w.findings.size(), 1u);
    EXPECT_NE(w.findings[0].text.find("peer access is off between GPUs 0-1 (PCIe only)"), std::string::npos);
}

TEST(P2pJudge, PeerAccessSupportedButNotEnabledFails) {
    P2pMeasured in = nvlink_box({0, 1});
    in.pairs[{1, 0}].enabled = false;
    in.pairs[{1, 0}].enable_error = "cuCtxEnablePeerAccess failed";
    CheckResult r = judge_p2p(in);
    EXPECT_EQ(r.verdict, Verdict::Fail);
    ASSERT_EQ(r.findings.size(), 1u);
    EXPECT_NE(r.findings[0].text.find("between GPUs 1 and 0 is supported but could not be enabled: cuCtx"),
              std::string::npos);
}

TEST(P2pJudge, PcieP2pOnlyWarnsBelowFortyPercent) {
    EXPECT_EQ(judge_p2p(pcie_box({0, 1}, 30)).verdict, Verdict::Pass);  // 48%: PCIe P2P varies with the path
    CheckResult r = judge_p2p(pcie_box({0, 1}, 20));                    // 32%
    EXPECT_EQ(r.verdict, Verdict::Warn);
    ASSERT_EQ(r.findings.size(), 1u);
    EXPECT_NE(r.findings[0].text.find("over PCIe (PXB)"), std::string::npos) << r.findings[0].text;
    EXPECT_FALSE(find(r, "uni_gbps_min")->reference->fail_below);
}

TEST(P2pJudge, NoExpectedRateMeansNoVerdictOnSpeed) {
    P2pMeasured in = nvlink_box({0, 1}, 10, 20);
    for (auto& [k, p] : in.pairs) p.expected = {};
    CheckResult r = judge_p2p(in);
    EXPECT_EQ(r.verdict, Verdict::Pass);
    EXPECT_EQ(find(r, "uni_gbps_min"), nullptr);
    EXPECT_NE(r.summary.find("no NVLink or PCIe rate known"), std::string::npos) << r.summary;
}

TEST(P2pJudge, AStopWithNothingFoundGivesNoVerdictAndAbsentFigures) {
    P2pMeasured in = nvlink_box({0, 1, 2});
    in.interrupted = true;
    for (auto& [k, p] : in.pairs)
        if (k != std::pair{0, 1} && k != std::pair{0, 2}) p.uni_gbps = p.latency_us = p.bidir_gbps = std::nullopt;
    in.pairs[{0, 1}].bidir_gbps = in.pairs[{0, 2}].bidir_gbps = std::nullopt;
    CheckResult r = judge_p2p(in);
    EXPECT_EQ(r.verdict, Verdict::Skip);
    EXPECT_EQ(r.summary,
              "interrupted after 2 of 6 directed pairs of 3 GPUs were measured ('?': not measured); no verdict.");
    EXPECT_EQ(r.details.front(), "interrupted after 2 of 6 directed pairs of 3 GPUs were measured ('?': not measured)");
    const Measurement* cut = find(r, "uni_gbps_1_2");
    ASSERT_NE(cut, nullptr);
    EXPECT_FALSE(cut->value);
    EXPECT_EQ(cut->absent_reason, kInterrupted);
    EXPECT_FALSE(find(r, "bidir_gbps_of_slowest_pair")->value);
}

TEST(P2pJudge, AStopAfterAFailureKeepsTheFailure) {
    P2pMeasured in = nvlink_box({0, 1});
    in.interrupted = true;
    in.pairs[{1, 0}].uni_gbps = std::nullopt;
    in.pairs[{0, 1}].wrong_words = 1;
    CheckResult r = judge_p2p(in);
    EXPECT_EQ(r.verdict, Verdict::Fail);
    EXPECT_NE(r.details.front().find("interrupted after 1 of 2"), std::string::npos);
}

TEST(P2pJudge, ExpectationFromTheNvlinkSpecOrThePcieLinks) {
    GpuSpec h100;
    h100.name = "H100 SXM5 80GB";
    h100.nvlink_bandwidth_gbps = 900;
    P2pExpectation nv = p2p_expectation("NV18", &h100, &h100, nullptr, nullptr);
    ASSERT_TRUE(nv.gbps);
    EXPECT_DOUBLE_EQ(*nv.gbps, 450);  // link count unknown: all of them
    EXPECT_NE(nv.source.find("900 GB/s total per GPU (H100 SXM5 80GB)"), std::string::npos) << nv.source;
    EXPECT_FALSE(p2p_expectation("NV18", nullptr, &h100, nullptr, nullptr).gbps);

    GpuInfo gen5, gen4;
    gen5.pcie_gen_max_gpu = 5;
    gen5.pcie_width_max = 16;
    gen4.pcie_gen_max_gpu = 5;
    gen4.pcie_gen_max_host = 4;  // the host side limits it
    gen4.pcie_width_max = 16;
    P2pExpectation pcie = p2p_expectation("PXB", nullptr, nullptr, &gen5, &gen4);
    ASSERT_TRUE(pcie.gbps);
    EXPECT_NEAR(*pcie.gbps, 31.504, 1e-9);
    EXPECT_FALSE(p2p_expectation("PXB", nullptr, nullptr, &gen5, nullptr).gbps);
}
