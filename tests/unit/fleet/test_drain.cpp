// The drain/resume ownership rule: gpuvet drains and resumes only what its own runs caused.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "compare/fleet_analysis.hpp"
#include "core/slurm_env.hpp"
#include "fleet/drain.hpp"

namespace gpuvet {
namespace {

TEST(FleetDrain, AnOperatorsDrainIsKeptAndNeverResumed) {
    SlurmNodeState op{"n3", "drained", "PSU swap"};
    NodeAction d = plan_drain(op, "gpu.health GPU 1 FAIL: rows", {"gpu.health"}, {});
    EXPECT_TRUE(d.argv.empty());
    EXPECT_EQ(d.note, "left alone: drained by someone else (PSU swap)");
    EXPECT_TRUE(plan_resume(op, {"gpu.health", "gpu.gemm"}).argv.empty());
}

TEST(FleetDrain, TheReasonRecordsTheCausesAndKeepsThemWholeWhenShortened) {
    EXPECT_EQ(drain_reason("gpu.health GPU 1 FAIL:\nrows", {"gpu.health"}),
              "gpuvet: gpu.health GPU 1 FAIL: rows (checks: gpu.health)");
    std::string long_one = drain_reason(std::string(500, 'x'), {"gpu.gemm", "fleet.bf16_tflops"});
    EXPECT_LE(long_one.size(), kDrainReasonMaxChars);
    EXPECT_EQ(drain_causes(long_one), (std::vector<std::string>{"gpu.gemm", "fleet.bf16_tflops"}));
    EXPECT_NE(long_one.find("xxx... (checks: "), std::string::npos);
    // An older gpuvet's reason: its first word, when a check key, is the cause.
    EXPECT_EQ(drain_causes("gpuvet: gpu.health GPU 1 FAIL: rows"), (std::vector<std::string>{"gpu.health"}));
    EXPECT_TRUE(drain_causes("gpuvet: low outlier: BF16 GEMM GPU 3").empty());
    EXPECT_TRUE(drain_causes("PSU swap (checks: gpu.health").empty());
    // No cause to name: recorded as such, and only an operator resumes the node.
    std::string none = drain_reason("run verdict NO-GO", {});
    EXPECT_EQ(none, "gpuvet: run verdict NO-GO (checks: unlisted)");
    EXPECT_TRUE(drain_causes(none).empty());
    EXPECT_TRUE(plan_resume(SlurmNodeState{"n1", "drained", none}, {"gpu.health"}).argv.empty());
}

TEST(FleetDrain, ResumedOnlyWhenThisRunRanWhatCausedTheDrainAndItPasses) {
    const std::vector<std::string> passive = {"gpu.driver", "gpu.identity", "gpu.health", "gpu.pcie_link"};
    SlurmNodeState gemm{"n2", "drained", drain_reason("gpu.gemm GPU 3 FAIL: 592 TFLOPS", {"gpu.gemm"})};
    NodeAction hc = plan_resume(gemm, passive);  // a passive health check one interval later
    EXPECT_TRUE(hc.argv.empty());
    EXPECT_NE(hc.note.find("not resumed: drained for gpu.gemm, which this run did not check"), std::string::npos);
    std::vector<std::string> with_gemm = passive;
    with_gemm.push_back("gpu.gemm");
    EXPECT_EQ(plan_resume(gemm, with_gemm).argv,
              (std::vector<std::string>{"scontrol", "update", "NodeName=n2", "State=RESUME"}));
    SlurmNodeState outlier{"n4", "draining", drain_reason("low outlier: BF16 GEMM", {"fleet.bf16_tflops"})};
    EXPECT_TRUE(plan_resume(outlier, with_gemm).argv.empty());
    with_gemm.push_back("fleet.bf16_tflops");
    EXPECT_FALSE(plan_resume(outlier, with_gemm).argv.empty());
    SlurmNodeState unknown{"n5", "drained", "gpuvet: low outlier: BF16 GEMM GPU 3"};
    NodeAction u = plan_resume(unknown, with_gemm);
    EXPECT_TRUE(u.argv.empty());
    EXPECT_NE(u.note.find("resume it by hand"), std::string::npos);
    EXPECT_TRUE(plan_resume(SlurmNodeState{"n6", "idle", ""}, passive).argv.empty());  // not drained
}

TEST(FleetDrain, ARenewedDrainKeepsTheEarlierCausesThisRunDidNotClear) {
    SlurmNodeState gemm{"n2", "drained", drain_reason("gpu.gemm GPU 3 FAIL: 592 TFLOPS", {"gpu.gemm"})};
    NodeAction d = plan_drain(gemm, "gpu.health GPU 1 FAIL: rows", {"gpu.health"}, {"gpu.driver"});
    ASSERT_EQ(d.argv.size(), 5u);
    EXPECT_EQ(d.argv[4], "Reason=gpuvet: gpu.health GPU 1 FAIL: rows (checks: gpu.health,gpu.gemm)");
    NodeAction again = plan_drain(gemm, "gpu.health GPU 1 FAIL: rows", {"gpu.health"}, {"gpu.gemm"});
    EXPECT_EQ(again.argv[4], "Reason=gpuvet: gpu.health GPU 1 FAIL: rows (checks: gpu.health)");
    EXPECT_TRUE(plan_drain(SlurmNodeState{"n7", "down*", "Not responding"}, "x", {"gpu.health"}, {}).argv.empty());
}

TEST(FleetDrain, SinfoLinesOncePerNode) {
    auto s = parse_node_states("n1|idle|none\nn2|drained|gpuvet: a b\nn1|idle|none\n");
    ASSERT_EQ(s.size(), 2u);
    EXPECT_EQ(s[0].reason, "");
    EXPECT_TRUE(s[1].drained() && s[1].ours());
}

}  // namespace
}  // namespace gpuvet
