// The fleet's pure rules: the outlier rule on constructed nodes (the MAD floor, the baseline that
// drops failing nodes, worst GPU per node), the drain/resume ownership rule, the Slurm GPU variables.
#include <gtest/gtest.h>

#include <map>

#include "core/slurm_env.hpp"
#include "fleet/drain.hpp"
#include "report/fleet.hpp"

namespace gpuvet {
namespace {

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

TEST(FleetOutliers, IdenticalNodesNeverFlagEachOther) {
    std::vector<FleetNodeInput> in;
    for (int i = 0; i < 8; ++i) in.push_back(node("n" + std::to_string(i), 790));
    Fleet f = analyse_fleet(in);
    EXPECT_TRUE(f.outliers.empty());
    ASSERT_EQ(f.metrics.size(), 1u);
    EXPECT_EQ(f.metrics[0].mad, 0);
    EXPECT_DOUBLE_EQ(f.metrics[0].mad_used, 7.9);  // the 1% floor
    EXPECT_EQ(fleet_exit_code(f), 0);
}

TEST(FleetOutliers, NoiseWithinFivePercentIsNotAnOutlier) {
    std::vector<FleetNodeInput> in;
    for (double v : {790.0, 789.0, 791.0, 790.0, 752.0}) in.push_back(node("n" + std::to_string(in.size()), v));
    Fleet f = analyse_fleet(in);  // 752 is 4.8% low: inside the 5% band
    EXPECT_TRUE(f.outliers.empty());
}

TEST(FleetOutliers, ALowNodeIsNamedWithItsWorstGpuAndFailsTheFleet) {
    std::vector<FleetNodeInput> in;
    for (int i = 0; i < 6; ++i) in.push_back(node("n" + std::to_string(i), 790 + i % 2));
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
    for (int i = 0; i < 4; ++i) in.push_back(node("good" + std::to_string(i), 790));
    for (int i = 0; i < 3; ++i) in.push_back(node("bad" + std::to_string(i), 400, RunVerdict::NoGo));
    Fleet f = analyse_fleet(in);
    ASSERT_EQ(f.metrics.size(), 1u);
    EXPECT_DOUBLE_EQ(f.metrics[0].median, 790);
    EXPECT_EQ(f.metrics[0].baseline_nodes, 4u);
    EXPECT_EQ(f.outliers.size(), 3u);
}

TEST(FleetOutliers, TheBaselineDropsItsOwnOutliersRoundByRound) {
    std::vector<FleetNodeInput> in;
    for (int i = 0; i < 5; ++i) in.push_back(node("n" + std::to_string(i), 790));
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
    for (int i = 0; i < 3; ++i) in.push_back(node("n" + std::to_string(i), 790));
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

TEST(FleetDrain, AnOperatorsDrainIsKeptAndNeverResumed) {
    SlurmNodeState op{"n3", "drained", "PSU swap"};
    NodeAction d = plan_drain(op, drain_reason("gpu.health GPU 1 FAIL: rows"));
    EXPECT_TRUE(d.argv.empty());
    EXPECT_EQ(d.note, "left alone: drained by someone else (PSU swap)");
    EXPECT_TRUE(plan_resume(op).argv.empty());
}

TEST(FleetDrain, OwnDrainIsRenewedAndResumedWhenPassing) {
    SlurmNodeState idle{"n2", "idle", ""};
    NodeAction d = plan_drain(idle, drain_reason("gpu.health GPU 1 FAIL:\nrows"));
    ASSERT_EQ(d.argv.size(), 5u);
    EXPECT_EQ(d.argv[4], "Reason=gpuvet: gpu.health GPU 1 FAIL: rows");
    EXPECT_TRUE(plan_resume(idle).argv.empty());  // not drained: nothing to do
    SlurmNodeState ours{"n2", "draining", "gpuvet: gpu.health GPU 1 FAIL: rows"};
    EXPECT_EQ(plan_resume(ours).argv, (std::vector<std::string>{"scontrol", "update", "NodeName=n2", "State=RESUME"}));
    EXPECT_FALSE(plan_drain(ours, drain_reason("x")).argv.empty());
    EXPECT_LE(drain_reason(std::string(500, 'x')).size(), kDrainReasonMaxChars);
}

TEST(FleetDrain, SinfoLinesOncePerNode) {
    auto s = parse_node_states("n1|idle|none\nn2|drained|gpuvet: a b\nn1|idle|none\n");
    ASSERT_EQ(s.size(), 2u);
    EXPECT_EQ(s[0].reason, "");
    EXPECT_TRUE(s[1].drained() && s[1].ours());
}

TEST(SlurmEnv, GpusGivenButNoCudaVisibleDevicesIsAProblem) {
    auto env = [](std::map<std::string, std::string> m) {
        return [m](const char* k) -> std::optional<std::string> {
            auto it = m.find(k);
            if (it == m.end()) return std::nullopt;
            return it->second;
        };
    };
    EXPECT_FALSE(slurm_context(env({})));
    auto s = slurm_context(env({{"SLURM_JOB_ID", "7"}, {"SLURM_GPUS_ON_NODE", "2"}, {"SLURMD_NODENAME", "n5"}}));
    ASSERT_TRUE(s);
    auto p = slurm_gpu_problem(*s);
    ASSERT_TRUE(p);
    EXPECT_NE(p->find("SLURM_GPUS_ON_NODE=2"), std::string::npos);
    EXPECT_NE(p->find("CUDA_VISIBLE_DEVICES is unset on node n5"), std::string::npos);
    s->cuda_visible_devices = "0,1";
    EXPECT_FALSE(slurm_gpu_problem(*s));
    auto none = slurm_context(env({{"SLURM_JOB_ID", "7"}}));
    EXPECT_FALSE(slurm_gpu_problem(*none));  // no GPUs asked for
}

}  // namespace
}  // namespace gpuvet
