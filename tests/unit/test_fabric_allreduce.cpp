// The multi-node all-reduce's pure parts: NCCL's log as it writes it (NCCL_DEBUG=INFO lines from
// NVIDIA/nccl's src/transport/net_ib, src/transport.cc, src/init.cc) and the judge of measured
// figures against the fabric.
#include <gtest/gtest.h>

#include "checks/fabric_allreduce_verdict.hpp"
#include "gpu/nccl_log.hpp"

using namespace gpuvet;
using namespace gpuvet::fabric_allreduce;

namespace {

const char* kRdmaLog =
    "node1:4242:4242 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>\n"
    "node1:4242:4242 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB [RO]; OOB eth0:10.0.0.1<0>\n"
    "node1:4242:4242 [0] NCCL INFO Using network IB\n"
    "node1:4242:4300 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/IPC\n"
    "node1:4242:4300 [0] NCCL INFO Channel 00/0 : 8[0] -> 0[0] [receive] via NET/IB/0/GDRDMA\n"
    "node1:4242:4300 [0] NCCL INFO Channel 01/0 : 0[0] -> 8[0] [send] via NET/IB/1/GDRDMA\n";

const char* kSocketLog =
    "node2:77:77 [0] NCCL INFO NET/IB : No device found.\n"
    "node2:77:77 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.2<0>\n"
    "node2:77:77 [0] NCCL INFO Using network Socket\n"
    "node2:77:90 [0] NCCL INFO Channel 00/0 : 8[0] -> 0[0] [send] via NET/Socket/0\n";

const char* kNoGdrLog =
    "node3:5:5 [0] NCCL INFO NET/IB : GPU Direct RDMA Disabled for HCA 0 'mlx5_0'\n"
    "node3:5:5 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/RoCE [RO]; OOB ens1np0:10.0.0.3<0>\n"
    "node3:5:5 [0] NCCL INFO Using network IB\n"
    "node3:5:9 [0] NCCL INFO Channel 00/0 : 16[0] -> 0[0] [receive] via NET/IB/0\n";

NodeFabric node(const std::string& name, const char* log, int nics = 2, double rate = 400) {
    NodeFabric n;
    n.node = name;
    n.rdma_nics = nics;
    n.nic_gbitps = rate;
    n.logs.push_back(parse_nccl_log(log));
    return n;
}

Measured measured(std::vector<std::string> nodes, double busbw, std::optional<int> rail = std::nullopt) {
    Measured m;
    m.nodes = std::move(nodes);
    m.rail = rail;
    m.bytes = 8ull << 30;
    m.busbw_gbps = busbw;
    m.checked = 1000;
    return m;
}

int count(const CheckResult& r, Verdict v, const std::string& words) {
    int n = 0;
    for (const Finding& f : r.findings) n += f.verdict == v && f.text.find(words) != std::string::npos;
    return n;
}

}  // namespace

TEST(NcclLog, RdmaWithGpuDirect) {
    NcclLog log = parse_nccl_log(kRdmaLog);
    EXPECT_EQ(log.network.value_or(""), "IB");
    ASSERT_EQ(log.nics.size(), 2u);
    EXPECT_EQ(log.nics[1].name, "mlx5_1");
    EXPECT_EQ(log.nics[1].port, 1);
    EXPECT_EQ(log.nics[1].link, "IB");
    ASSERT_EQ(log.channels.size(), 3u);
    EXPECT_FALSE(log.channels[0].network());
    EXPECT_TRUE(log.channels[1].network() && log.channels[1].gdr());
    EXPECT_EQ(log.channels[1].from_rank, 8);
    EXPECT_EQ(log.channels[1].direction, "receive");
    EXPECT_EQ(log.channels[2].via, "NET/IB/1/GDRDMA");
}

TEST(NcclLog, SocketFallbackAndGdrOff) {
    NcclLog s = parse_nccl_log(kSocketLog);
    EXPECT_TRUE(s.ib_no_device);
    EXPECT_EQ(s.network.value_or(""), "Socket");
    ASSERT_EQ(s.channels.size(), 1u);
    EXPECT_TRUE(s.channels[0].socket());
    NcclLog g = parse_nccl_log(kNoGdrLog);
    ASSERT_EQ(g.gdr_disabled.size(), 1u);
    EXPECT_EQ(g.gdr_disabled[0], "mlx5_0");
    EXPECT_EQ(g.nics.at(0).link, "RoCE");
    EXPECT_FALSE(g.channels.at(0).gdr());
    NcclLog w = parse_nccl_log("h:1:1 [0] NCCL WARN Failed to initialize any NET plugin\n");
    EXPECT_TRUE(w.no_net_plugin);
    EXPECT_TRUE(parse_nccl_log("Channel\nNCCL INFO Channel xx : ->\nNET/IB : Using [\n").channels.empty());
}

TEST(FabricAllReduce, PerNicFigures) {
    EXPECT_EQ(per_nic_busbw_gbps(400), 47);
    EXPECT_EQ(per_nic_busbw_gbps(200), 24);
    EXPECT_EQ(per_nic_busbw_gbps(100), 12);
    EXPECT_NEAR(per_nic_busbw_gbps(800), 94, 1e-9);
    EXPECT_NE(per_nic_source(800).find("extrapolation"), std::string::npos);
}

TEST(FabricAllReduce, HealthyWithinTheBand) {
    FabricRun run;
    run.nodes = {node("node1", kRdmaLog), node("node4", kRdmaLog)};
    run.all = measured({"node1", "node4"}, 91);  // 2 x 47 = 94 expected
    CheckResult r = judge(run);
    EXPECT_EQ(r.verdict, Verdict::Pass) << r.summary;
    EXPECT_TRUE(r.findings.empty());
    ASSERT_EQ(r.measurements.size(), 1u);
    EXPECT_EQ(r.measurements[0].reference->spec.value_or(0), 94);
}

TEST(FabricAllReduce, SocketsOnRdmaFabricAndNoGdr) {
    FabricRun run;
    run.nodes = {node("node1", kRdmaLog), node("node2", kSocketLog), node("node3", kNoGdrLog, 1)};
    run.all = measured({"node1", "node2", "node3"}, 3);
    CheckResult r = judge(run);
    EXPECT_EQ(r.verdict, Verdict::Fail);
    EXPECT_EQ(count(r, Verdict::Fail, "NCCL used sockets on a fabric with RDMA NICs: node node2"), 1);
    EXPECT_EQ(count(r, Verdict::Fail, "no GPUDirect RDMA on node node3: 1 of 1 inter-node channels lack /GDRDMA"), 1);
    EXPECT_EQ(count(r, Verdict::Fail, "NCCL disabled it for mlx5_0"), 1);
    EXPECT_EQ(count(r, Verdict::Fail, "all 3 nodes reaches 3 GB/s"), 1);
    EXPECT_EQ(count(r, Verdict::Fail, "node1"), 0);  // the healthy node is not blamed
}

TEST(FabricAllReduce, TheNodeCommonToAllSlowPairsIsTheCulprit) {
    FabricRun run;
    for (const char* n : {"a", "b", "c", "d"}) run.nodes.push_back(node(n, kRdmaLog));
    run.pairs = {measured({"a", "b"}, 93), measured({"a", "c"}, 40), measured({"b", "c"}, 41),
                 measured({"c", "d"}, 39), measured({"a", "d"}, 92), measured({"b", "d"}, 94)};
    CheckResult r = judge(run);
    EXPECT_EQ(r.verdict, Verdict::Fail);
    EXPECT_EQ(count(r, Verdict::Fail, "node c is the slow one: every slow pair includes it (a+c, b+c, c+d)"), 1);
    EXPECT_EQ(r.findings.size(), 1u);  // the pairs are not each blamed
    EXPECT_EQ(r.measurements.size(), 6u);
}

TEST(FabricAllReduce, SlowRailAndUnusedNicsAndWrongSums) {
    FabricRun run;
    run.nodes = {node("a", kRdmaLog, 8), node("b", kRdmaLog, 8)};
    run.rails = {measured({"a", "b"}, 46, 0), measured({"a", "b"}, 20, 3)};
    run.rails[0].wrong = 2;
    CheckResult r = judge(run);
    EXPECT_EQ(count(r, Verdict::Fail, "rail 3 reaches 20 GB/s busbw, 42.6% of the 47 GB/s"), 1);
    EXPECT_EQ(count(r, Verdict::Fail, "rail 0: 2 of 1000 reduced elements are wrong"), 1);
    EXPECT_EQ(count(r, Verdict::Warn, "NCCL on node a used 2 of its 8 RDMA NICs (mlx5_0, mlx5_1)"), 1);
}

TEST(FabricAllReduce, NothingMeasuredIsNeverAPass) {
    FabricRun run;
    run.nodes = {node("a", kRdmaLog)};
    EXPECT_EQ(judge(run).verdict, Verdict::Error);
}
