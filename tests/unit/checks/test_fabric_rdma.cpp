// The RDMA write test's pure parts: the queue-pair details the ranks hand each other, a link's
// record in a rank's report, the ports' data rate and the judge of the links.
#include <gtest/gtest.h>

#include "checks/fabric_allreduce_plan.hpp"
#include "checks/fabric_rdma.hpp"
#include "core/error.hpp"

using namespace gpuvet;
using namespace gpuvet::fabric_rdma;

namespace {

RdmaLink link(int rail, std::string from, std::string to, std::optional<double> gbps, double rate = 400,
              std::string speed = "NDR") {
    RdmaLink l;
    l.rail = rail;
    l.from_node = std::move(from), l.to_node = std::move(to);
    l.from_nic = l.to_nic = "mlx5_" + std::to_string(rail);
    l.from_gbitps = l.to_gbitps = rate;
    l.from_speed = l.to_speed = speed;
    l.memory = "GPU";
    l.memory_why = "GPUDirect RDMA through nvidia-peermem: GPU memory";
    l.message_bytes = 1 << 20;
    l.gbps = gbps;
    l.verified_bytes = 8 << 20;
    return l;
}

const Measurement* find(const Judged& j, const std::string& key) {
    for (const Measurement& m : j.measurements)
        if (m.key == key) return &m;
    return nullptr;
}

}  // namespace

TEST(FabricRdma, QueuePairDetailsRoundTrip) {
    QpInfo q;
    q.node = "gpu-node-07", q.nic = "mlx5_3", q.lid = 17, q.qpn = 0x123456, q.psn = 42, q.rkey = 0xdeadbeef;
    q.addr = 0x7f0000000000, q.bytes = 8 << 20, q.rate_gbitps = 400, q.speed = "NDR";
    auto back = parse_qp_info(to_text(q));
    ASSERT_TRUE(back);
    EXPECT_EQ(back->node, q.node);
    EXPECT_EQ(back->nic, q.nic);
    EXPECT_EQ(back->lid, 17);
    EXPECT_EQ(back->qpn, 0x123456u);
    EXPECT_EQ(back->rkey, 0xdeadbeefu);
    EXPECT_EQ(back->addr, q.addr);
    EXPECT_EQ(back->rate_gbitps, 400);
    EXPECT_EQ(back->speed, "NDR");
    // A reason with the separators in it survives.
    q.skipped = "skip:no libibverbs (libibverbs.so.1: cannot open; a=b 100%)";
    back = parse_qp_info(to_text(q));
    ASSERT_TRUE(back);
    EXPECT_EQ(back->skipped, q.skipped);
}

TEST(FabricRdma, MalformedQueuePairDetailsAreRefused) {
    for (const char* bad :
         {"", "node=n1", "node=n1;nic=mlx5_0", "node=n1;nic=mlx5_0;qpn=16777216", "node=n1;nic=mlx5_0;qpn=1;qpn=2",
          "node=n1;nic=mlx5_0;qpn=x", "node=n1;nic=mlx5_0;qpn=1;gid=zz", "node=n1;nic=mlx5_0;qpn=1;rate=-4",
          "node=n1;nic=mlx5_0;qpn=1;skipped=%4", "node=n 1;nic=mlx5_0;qpn=1", "garbage"})
        EXPECT_FALSE(parse_qp_info(bad)) << bad;
    EXPECT_TRUE(parse_qp_info("node=n1;nic=mlx5_0;qpn=1;later_key=7"));  // a later gpuvet's field
}

TEST(FabricRdma, DataRateAfterTheLineEncoding) {
    EXPECT_DOUBLE_EQ(data_rate_gbitps(40, "QDR"), 32);    // 8b/10b
    EXPECT_DOUBLE_EQ(data_rate_gbitps(2.5, "SDR"), 2);    // 8b/10b
    EXPECT_NEAR(data_rate_gbitps(56, "FDR"), 54.3, 0.1);  // 64b/66b
    EXPECT_DOUBLE_EQ(data_rate_gbitps(400, "NDR"), 400);  // the kernel reports the data rate
    EXPECT_DOUBLE_EQ(data_rate_gbitps(100, ""), 100);     // Ethernet
}

TEST(FabricRdma, HealthyLinksPassAgainstTheDataRate) {
    Judged j = judge_links({link(0, "n1", "n2", 48.5), link(0, "n2", "n1", 48.9)});
    EXPECT_EQ(j.verdict, Verdict::Pass);
    EXPECT_TRUE(j.findings.empty());
    const Measurement* m = find(j, "rdma_rail0_n1_to_n2_gbps");
    ASSERT_TRUE(m && m->reference);
    EXPECT_DOUBLE_EQ(*m->reference->spec, 50);
    EXPECT_DOUBLE_EQ(*m->reference->fail_below, 45);
    EXPECT_NE(m->reference->source.find("180 Gbit/s"), std::string::npos);
}

TEST(FabricRdma, JustBelowTheThresholdFails) {
    // 90% of 2 Gbit/s of data (2.5 Gbit/s 1X SDR) is 0.225 GB/s.
    Judged j = judge_links({link(0, "n1", "n2", 0.2249, 2.5, "SDR"), link(0, "n2", "n1", 0.2251, 2.5, "SDR")});
    EXPECT_EQ(j.verdict, Verdict::Fail);
    ASSERT_EQ(j.findings.size(), 1u);
    EXPECT_NE(j.findings[0].text.find("mlx5_0 on n1 -> mlx5_0 on n2"), std::string::npos) << j.findings[0].text;
    EXPECT_EQ(j.findings[0].text.find("mlx5_0 on n2 -> mlx5_0 on n1"), std::string::npos) << j.findings[0].text;
}

TEST(FabricRdma, TheNicCommonToEveryBadLinkOfARailIsNamed) {
    // A ring over three nodes: n2's mlx5_1 writes slowly and is written to slowly.
    Judged j = judge_links({link(1, "n1", "n2", 24), link(1, "n2", "n3", 24.5), link(1, "n3", "n1", 48.7),
                            link(0, "n1", "n2", 48.6), link(0, "n2", "n3", 48.6), link(0, "n3", "n1", 48.6)});
    EXPECT_EQ(j.verdict, Verdict::Fail);
    ASSERT_EQ(j.findings.size(), 1u);
    EXPECT_EQ(j.findings[0].text.rfind("rail 1: mlx5_1 on n2 is the slow or failing NIC", 0), 0u) << j.findings[0].text;
    ASSERT_EQ(j.blamed.size(), 1u);
    EXPECT_EQ(j.blamed[0].first, "n2");
}

TEST(FabricRdma, WithTwoNodesBothEndsAreNamedAndNoneBlamed) {
    Judged j = judge_links({link(1, "n1", "n2", 20), link(1, "n2", "n1", 20)});
    ASSERT_EQ(j.findings.size(), 1u);
    EXPECT_NE(j.findings[0].text.find("(mlx5_1 on n1 or mlx5_1 on n2"), std::string::npos) << j.findings[0].text;
    EXPECT_TRUE(j.blamed.empty());
}

TEST(FabricRdma, AFailedConnectionIsAFindingAndAReasonIsANote) {
    RdmaLink failed = link(0, "n1", "n2", std::nullopt);
    failed.error = "the reading end mlx5_0 on n2 could not connect: ibv_modify_qp to RTR failed: Invalid argument";
    RdmaLink skipped = link(1, "n1", "n2", std::nullopt);
    skipped.skipped = "no libibverbs (libibverbs.so.1: cannot open shared object file)";
    Judged j = judge_links({failed, skipped});
    EXPECT_EQ(j.verdict, Verdict::Fail);
    ASSERT_EQ(j.findings.size(), 1u);
    EXPECT_NE(j.findings[0].text.find("could not run: the reading end mlx5_0 on n2 could not connect"),
              std::string::npos);
    const Measurement* m = find(j, "rdma_rail0_n1_to_n2_gbps");
    ASSERT_TRUE(m);
    EXPECT_FALSE(m->value);
    EXPECT_NE(m->absent_reason.find("RTR"), std::string::npos);
    ASSERT_EQ(j.notes.size(), 1u);
    EXPECT_NE(j.notes[0].find("not measured: no libibverbs"), std::string::npos);
    EXPECT_FALSE(find(j, "rdma_rail1_n1_to_n2_gbps"));
}

TEST(FabricRdma, OnlyReasonsLeaveTheVerdictUnset) {
    RdmaLink skipped = link(0, "n1", "n2", std::nullopt);
    skipped.skipped = "no libibverbs";
    Judged j = judge_links({skipped});
    EXPECT_EQ(j.verdict, Verdict::Skip);
    EXPECT_TRUE(j.measurements.empty());
}

TEST(FabricRdma, WrongBytesFailEvenAtFullSpeed) {
    RdmaLink l = link(0, "n1", "n2", 49);
    l.wrong_bytes = 12;
    Judged j = judge_links({l});
    EXPECT_EQ(j.verdict, Verdict::Fail);
    ASSERT_EQ(j.findings.size(), 1u);
    EXPECT_NE(j.findings[0].text.find("12 of 8388608 bytes checked arrived wrong"), std::string::npos);
}

TEST(FabricRdma, ALinkTravelsInTheRankReport) {
    fabric_allreduce::RankReport r;
    r.node = "n1", r.nodes = 2, r.per_node = 1;
    r.rdma = link(0, "n1", "n2", 47.25);
    auto back = fabric_allreduce::rank_report_from_json(nlohmann::json::parse(fabric_allreduce::to_json(r).dump()));
    ASSERT_TRUE(back.rdma);
    EXPECT_EQ(back.rdma->to_node, "n2");
    EXPECT_EQ(back.rdma->gbps, 47.25);
    EXPECT_EQ(back.rdma->memory, "GPU");
    nlohmann::json j = nlohmann::json::parse(fabric_allreduce::to_json(r).dump());
    j["rdma"]["gbps"] = "fast";
    EXPECT_THROW(fabric_allreduce::rank_report_from_json(j), Error);
    j["rdma"] = nullptr;  // a rank of a single-node run
    EXPECT_FALSE(fabric_allreduce::rank_report_from_json(j).rdma);
}
