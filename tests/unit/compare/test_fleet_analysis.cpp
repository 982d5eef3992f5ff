// The fleet's outlier rule on constructed nodes: the MAD floor, the baseline that drops failing
// nodes, worst GPU per node, the causes of each node's verdict and the fabric section.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "compare/fleet_analysis.hpp"
#include "core/slurm_env.hpp"
#include "fleet/drain.hpp"

namespace gpuvet {
namespace {

// "n" + 3 (+ suffix): built by appending, which GCC 12's -Wrestrict does not misread at -O3.
std::string numbered(const char* prefix, std::size_t i, const char* suffix = "") {
    std::string s(prefix);
    s += std::to_string(i);
    s += suffix;
    return s;
}

FleetNodeInput node(const std::string& name, double bf16, RunVerdict v = RunVerdict::Go, int gpu = 0) {
    FleetNodeInput n;
    n.name = name;
    n.gpu_model = "h100-sxm5-80gb";
    n.gpu_models = {"h100-sxm5-80gb"};
    n.verdict = v;
    n.exit_code = v == RunVerdict::NoGo ? 1 : 0;
    n.worst.push_back({"bf16_tflops", "BF16 GEMM", "TFLOPS", gpu, bf16, 700.0});
    return n;
}

FleetFabric fabric(Verdict v) {
    FleetFabric f;
    f.result.key = kFabricCheck;
    f.result.verdict = v;
    return f;
}

TEST(FleetOutliers, IdenticalNodesNeverFlagEachOther) {
    std::vector<FleetNodeInput> in;
    for (int i = 0; i < 8; ++i) in.push_back(node(numbered("n", i), 790));
    Fleet f = analyse_fleet(in);
    EXPECT_TRUE(f.outliers.empty());
    ASSERT_EQ(f.metrics.size(), 1u);
    EXPECT_EQ(f.metrics[0].mad, 0);
    EXPECT_DOUBLE_EQ(f.metrics[0].mad_used, 7.9);  // the 1% floor
    EXPECT_EQ(fleet_exit_code(f), 0);
}

TEST(FleetOutliers, NoiseWithinFivePercentIsNotAnOutlier) {
    std::vector<FleetNodeInput> in;
    for (double v : {790.0, 789.0, 791.0, 790.0, 752.0}) in.push_back(node(numbered("n", in.size()), v));
    Fleet f = analyse_fleet(in);  // 752 is 4.8% low: inside the 5% band
    EXPECT_TRUE(f.outliers.empty());
}

TEST(FleetOutliers, ALowNodeIsNamedWithItsWorstGpuAndFailsTheFleet) {
    std::vector<FleetNodeInput> in;
    for (int i = 0; i < 6; ++i) in.push_back(node(numbered("n", i), 790 + i % 2));
    in.push_back(node("slow", 592, RunVerdict::Go, 3));
    Fleet f = analyse_fleet(in);
    ASSERT_EQ(f.outliers.size(), 1u);
    EXPECT_EQ(f.outliers[0].node, "slow");
    EXPECT_EQ(f.outliers[0].gpu, 3);
    EXPECT_TRUE(f.outliers[0].low);
    EXPECT_DOUBLE_EQ(f.outliers[0].median, 790.5);  // the baseline without the slow node
    EXPECT_NEAR(f.outliers[0].gap_fraction, 592.0 / 790.5 - 1, 1e-9);
    EXPECT_EQ(f.nodes.back().status, NodeStatus::NoGo);
    EXPECT_EQ(fleet_exit_code(f), 1);
    EXPECT_NE(nhc_line(f, f.nodes.back()).find("slow | ERROR: gpuvet: low outlier: BF16 GEMM GPU 3 592"),
              std::string::npos);
}

TEST(FleetOutliers, FailingNodesLeaveTheBaseline) {
    // Half the fleet failed its own checks at a low figure: the centre is the passing half's.
    std::vector<FleetNodeInput> in;
    for (int i = 0; i < 4; ++i) in.push_back(node(numbered("good", i), 790));
    for (int i = 0; i < 3; ++i) in.push_back(node(numbered("bad", i), 400, RunVerdict::NoGo));
    Fleet f = analyse_fleet(in);
    ASSERT_EQ(f.metrics.size(), 1u);
    EXPECT_DOUBLE_EQ(f.metrics[0].median, 790);
    EXPECT_EQ(f.metrics[0].baseline_nodes, 4u);
    EXPECT_EQ(f.outliers.size(), 3u);
}

TEST(FleetOutliers, TheBaselineDropsItsOwnOutliersRoundByRound) {
    std::vector<FleetNodeInput> in;
    for (int i = 0; i < 5; ++i) in.push_back(node(numbered("n", i), 790));
    in.push_back(node("low1", 600));
    in.push_back(node("low2", 620));
    in.push_back(node("low3", 640));
    Fleet f = analyse_fleet(in);
    EXPECT_DOUBLE_EQ(f.metrics[0].median, 790);
    EXPECT_GE(f.metrics[0].rounds, 2);
    EXPECT_EQ(f.outliers.size(), 3u);
}

TEST(FleetNodes, AnotherModelAndAMissingReportAreNamedTheRestJudged) {
    std::vector<FleetNodeInput> in;
    for (int i = 0; i < 3; ++i) in.push_back(node(numbered("n", i), 790));
    FleetNodeInput other = node("rebadged", 790);
    other.gpu_model = "h100-sxm5-80gb + h800-sxm5-80gb";
    other.gpu_models = {"h100-sxm5-80gb", "h800-sxm5-80gb"};
    in.push_back(other);
    in.push_back(failed_node("gone", "", "did not finish within the node deadline of 60 s"));
    Fleet f = analyse_fleet(in);
    EXPECT_EQ(f.gpu_model, "h100-sxm5-80gb");
    EXPECT_EQ(f.nodes[3].status, NodeStatus::NoGo);
    EXPECT_NE(nhc_line(f, f.nodes[3]).find("GPU 1 is h800-sxm5-80gb, the fleet is h100-sxm5-80gb"), std::string::npos);
    EXPECT_EQ(f.nodes[4].status, NodeStatus::Error);
    EXPECT_EQ(nhc_line(f, f.nodes[4]), "gone | ERROR: gpuvet: did not finish within the node deadline of 60 s");
    EXPECT_EQ(f.nodes[0].status, NodeStatus::Go);
    EXPECT_EQ(fleet_exit_code(f), 1);
}

TEST(FleetNodes, OnlyMissingReportsExitThree) {
    std::vector<FleetNodeInput> in{node("a", 790), failed_node("b", "", "no report")};
    EXPECT_EQ(fleet_exit_code(analyse_fleet(in)), 3);
    EXPECT_EQ(fleet_exit_code(analyse_fleet({})), 3);
}

TEST(FleetCauses, AFailedCheckAnOutlierAndAnotherModelAreTheirOwnCauses) {
    std::vector<FleetNodeInput> in;
    for (int i = 0; i < 5; ++i) {
        in.push_back(node(numbered("n", i), 790));
        in.back().passed_checks = {"gpu.gemm", "gpu.health"};
    }
    in.push_back(node("slow", 592));
    in.back().passed_checks = {"gpu.gemm", "gpu.health"};
    in.push_back(node("broken", 790, RunVerdict::NoGo));
    in.back().failed = {"gpu.health GPU 1 FAIL: rows"};
    in.back().failed_checks = {"gpu.health"};
    in.back().passed_checks = {"gpu.gemm"};
    Fleet f = analyse_fleet(in);
    EXPECT_EQ(node_causes(f, f.nodes[5]), (std::vector<std::string>{"fleet.bf16_tflops"}));
    EXPECT_EQ(node_causes(f, f.nodes[6]), (std::vector<std::string>{"gpu.health"}));
    auto cleared = node_cleared(f, f.nodes[0]);
    for (const char* c : {"gpu.gemm", "gpu.health", "fleet.bf16_tflops", kCauseGpuModel})
        EXPECT_NE(std::find(cleared.begin(), cleared.end(), c), cleared.end()) << c;
    auto slow = node_cleared(f, f.nodes[5]);
    EXPECT_EQ(std::find(slow.begin(), slow.end(), "fleet.bf16_tflops"), slow.end());
    // One node alone judges no figure and no model against a fleet: it clears neither.
    Fleet one = analyse_fleet({node("solo", 790)});
    EXPECT_TRUE(node_cleared(one, one.nodes[0]).empty());
}

TEST(FleetNodes, AGpuUuidOnTwoNodesIsAFindingOnBoth) {
    std::vector<FleetNodeInput> in;
    for (int i = 0; i < 4; ++i) {
        in.push_back(node(numbered("n", i), 790));
        in.back().gpu_uuids = {numbered("GPU-", i, "-a"), numbered("GPU-", i, "-b")};
    }
    in[3].gpu_uuids[1] = "GPU-1-a";  // n3's GPU 1 is n1's GPU 0
    Fleet f = analyse_fleet(in);
    EXPECT_EQ(f.nodes[0].status, NodeStatus::Go);
    EXPECT_EQ(f.nodes[1].status, NodeStatus::NoGo);
    EXPECT_EQ(f.nodes[3].status, NodeStatus::NoGo);
    EXPECT_EQ(nhc_line(f, f.nodes[3]), "n3 | ERROR: gpuvet: GPU identity: GPU 1 GPU-1-a is also GPU 0 of n1");
    EXPECT_EQ(nhc_line(f, f.nodes[1]), "n1 | ERROR: gpuvet: GPU identity: GPU 0 GPU-1-a is also GPU 1 of n3");
    EXPECT_EQ(node_causes(f, f.nodes[1]), (std::vector<std::string>{kCauseGpuUuid}));
    ASSERT_EQ(f.notes.size(), 1u);
    EXPECT_NE(f.notes[0].find("GPU GPU-1-a is reported by n1 and n3"), std::string::npos);
    EXPECT_EQ(fleet_exit_code(f), 1);
    auto cleared = node_cleared(f, f.nodes[0]);
    EXPECT_NE(std::find(cleared.begin(), cleared.end(), kCauseGpuUuid), cleared.end());
}

TEST(FleetFabricSection, TheNodeItBlamesIsNoGoAndItsFigureJoinsTheOutliers) {
    std::vector<FleetNodeInput> in;
    for (int i = 0; i < 4; ++i) in.push_back(node(numbered("n", i), 790));
    FleetFabric f = fabric(Verdict::Fail);
    f.blamed = {{"n2", "node n2 is the slow one: every slow pair includes it"}};
    f.node_busbw_gbps = {{"n0", 93}, {"n1", 92.5}, {"n2", 51}, {"n3", 93}};
    Fleet fl = analyse_fleet(in, f);
    EXPECT_EQ(fl.nodes[2].status, NodeStatus::NoGo);
    EXPECT_EQ(fl.nodes[1].status, NodeStatus::Go);
    EXPECT_EQ(node_causes(fl, fl.nodes[2]), (std::vector<std::string>{"fabric.allreduce", "fleet.fabric_busbw_gbps"}));
    ASSERT_EQ(fl.outliers.size(), 1u);
    EXPECT_EQ(fl.outliers[0].node, "n2");
    EXPECT_NE(nhc_line(fl, fl.nodes[2]).find("fabric.allreduce FAIL: node n2 is the slow one"), std::string::npos);
    EXPECT_EQ(fleet_exit_code(fl), 1);
    // Not cleared on a node it failed; cleared on the others only when the fabric passed.
    auto cleared = node_cleared(fl, fl.nodes[1]);
    EXPECT_EQ(std::count(cleared.begin(), cleared.end(), "fabric.allreduce"), 0);
    Fleet ok = analyse_fleet(in, fabric(Verdict::Pass));
    cleared = node_cleared(ok, ok.nodes[1]);
    EXPECT_EQ(std::count(cleared.begin(), cleared.end(), "fabric.allreduce"), 1);
}

TEST(FleetFabricSection, AFailNamingNoNodeStillFailsTheFleetAndNothingMeasuredIsIncomplete) {
    std::vector<FleetNodeInput> in{node("a", 790), node("b", 790)};
    Fleet slow = analyse_fleet(in, fabric(Verdict::Fail));  // the whole job below its band, no culprit
    EXPECT_EQ(slow.nodes[0].status, NodeStatus::Go);
    EXPECT_EQ(fleet_exit_code(slow), 1);
    EXPECT_EQ(fleet_exit_code(analyse_fleet(in, fabric(Verdict::Error))), 3);
    EXPECT_EQ(fleet_exit_code(analyse_fleet(in, fabric(Verdict::Warn))), 0);
}

}  // namespace
}  // namespace gpuvet
