// The multi-node all-reduce's pure parts: NCCL's log as it writes it (NCCL_DEBUG=INFO lines from
// NVIDIA/nccl's src/transport/net_ib, src/transport.cc, src/init.cc) and the judge of measured
// figures against the fabric.
#include <gtest/gtest.h>

#include "checks/fabric_allreduce_plan.hpp"
#include "checks/fabric_allreduce_rank.hpp"
#include "checks/fabric_allreduce_judge.hpp"
#include "core/error.hpp"
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

TEST(FabricAllReduce, PerNicBusBandwidthFollowsTheLinkRateAndBeyondTheTableSaysExtrapolated) {
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
    EXPECT_EQ(count(r, Verdict::Fail, "rail 3 (GPU 3 of every node) reaches 20 GB/s busbw, 42.6% of the 47 GB/s"), 1);
    EXPECT_EQ(count(r, Verdict::Fail, "rail 0 (GPU 0 of every node): 2 of 1000 reduced elements are wrong"), 1);
    EXPECT_EQ(count(r, Verdict::Warn, "NCCL on node a used 2 of its 8 RDMA NICs (mlx5_0, mlx5_1)"), 1);
}

TEST(FabricAllReduce, NothingMeasuredIsNeverAPass) {
    FabricRun run;
    run.nodes = {node("a", kRdmaLog)};
    EXPECT_EQ(judge(run).verdict, Verdict::Error);
}

TEST(FabricAllReduce, ANodesNicsCountUpToItsGpus) {
    // Two GPUs per node use two of the eight 400G NICs: 2 x 47 GB/s is expected, not 8 x 47.
    FabricRun run;
    run.nodes = {node("a", kRdmaLog, 8), node("b", kRdmaLog, 8)};
    for (auto& n : run.nodes) n.gpus = 2;
    run.all = measured({"a", "b"}, 93);
    run.rails = {measured({"a", "b"}, 46.5, 1)};
    run.nodes[0].rail_nics = {"mlx5_0", "mlx5_1"};
    run.nodes[1].rail_nics = {"mlx5_0", "mlx5_1"};
    CheckResult r = judge(run);
    EXPECT_EQ(r.verdict, Verdict::Pass) << r.summary;
    EXPECT_EQ(r.measurements[0].reference->spec.value_or(0), 94);
    EXPECT_EQ(r.measurements[1].reference->spec.value_or(0), 47);
    EXPECT_EQ(nics_in_use(run.nodes[0]), 2);
    // The same rail at half speed names its NIC on each node.
    run.rails[0].busbw_gbps = 23;
    r = judge(run);
    EXPECT_EQ(count(r, Verdict::Fail, "rail 1 (GPU 1 of every node) reaches 23 GB/s"), 1);
    EXPECT_EQ(count(r, Verdict::Fail, "its NICs: mlx5_1 on a, b"), 1);
}

TEST(FabricAllReduce, TheNodesAtFaultAreNamedForTheFleet) {
    FabricRun run;
    run.nodes = {node("a", kRdmaLog), node("b", kSocketLog), node("c", kNoGdrLog), node("d", kRdmaLog)};
    run.nodes[1].hints = {"NCCL_IB_DISABLE=1 is set in the job's environment"};
    run.pairs = {measured({"a", "b"}, 3), measured({"b", "c"}, 3), measured({"c", "d"}, 93), measured({"d", "a"}, 93)};
    Judged j = judge_run(run);
    std::vector<std::string> named;
    for (auto& [node, text] : j.blamed) named.push_back(node);
    EXPECT_EQ(named, (std::vector<std::string>{"b", "c", "b"}));  // sockets, no GDR, the slow pairs' culprit
    EXPECT_EQ(count(j.result, Verdict::Fail, "host.fabric on b: NCCL_IB_DISABLE=1 is set"), 1);
}

TEST(FabricAllReduce, RdmaThatDidNotInitialiseIsAFailNotAnError) {
    FabricRun run;
    run.nodes = {node("a", "h:1:1 [0] NCCL WARN Failed to initialize any NET plugin\n"), node("b", "")};
    run.nodes[0].hints = {"no verbs device in /dev/infiniband"};
    Judged j = judge_run(run);
    EXPECT_EQ(j.result.verdict, Verdict::Fail) << j.result.summary;
    EXPECT_EQ(count(j.result, Verdict::Fail, "NCCL on node a could not initialise its RDMA network"), 1);
    EXPECT_EQ(count(j.result, Verdict::Fail, "host.fabric on a: no verbs device in /dev/infiniband"), 1);
    EXPECT_NE(j.result.summary.find("Nothing was measured across nodes: NCCL on node a"), std::string::npos);
    ASSERT_EQ(j.blamed.size(), 1u);
    EXPECT_EQ(j.blamed[0].first, "a");
}

TEST(FabricAllReducePlan, TheWholeJobThenEachRailThenNeighbouringPairs) {
    std::vector<Comm> p = plan_comms(3, 2);
    ASSERT_EQ(p.size(), 1u + 2u + 3u);
    EXPECT_EQ(p[0].kind, CommKind::All);
    EXPECT_EQ(p[0].slots, (std::vector<int>{0, 1, 2, 3, 4, 5}));
    EXPECT_EQ(p[1].kind, CommKind::Rail);
    EXPECT_EQ(p[2].slots, (std::vector<int>{1, 3, 5}));  // rail 1: GPU 1 of every node
    // Pairs in rounds where no node is in two pairs: (0,1) then (1,2) then the closing (2,0).
    EXPECT_EQ(p[3].nodes, (std::vector<int>{0, 1}));
    EXPECT_EQ(p[4].nodes, (std::vector<int>{1, 2}));
    EXPECT_EQ(p[5].nodes, (std::vector<int>{2, 0}));
    EXPECT_EQ(p[5].slots, (std::vector<int>{4, 5, 0, 1}));
    // Four nodes: two rounds of two disjoint pairs.
    std::vector<Comm> q = plan_comms(4, 1);
    std::vector<int> rounds;
    for (const Comm& c : q)
        if (c.kind == CommKind::Pair) rounds.push_back(pair_round(c.index, 4));
    EXPECT_EQ(rounds, (std::vector<int>{0, 0, 1, 1}));
    EXPECT_EQ(plan_comms(2, 8).size(), 1u + 8u);  // two nodes: the whole job is their pair
    EXPECT_EQ(plan_comms(1, 8).size(), 1u);
}

TEST(FabricAllReducePlan, SizesDoubleFromEightMebibytes) {
    EXPECT_EQ(sweep_sizes(kDefaultMaxBytes).size(), 11u);  // 8 MiB ... 8 GiB, as nccl-tests -b 8M -e 8G -f 2
    EXPECT_EQ(sweep_sizes(40ull << 20), (std::vector<std::uint64_t>{8ull << 20, 16ull << 20, 32ull << 20}));
    EXPECT_EQ(sweep_sizes(5ull << 20), (std::vector<std::uint64_t>{4ull << 20}));
    EXPECT_TRUE(sweep_sizes(1000).empty());
    EXPECT_EQ(passes_for(64ull << 20), 20);
    EXPECT_EQ(passes_for(128ull << 20), 5);
}

TEST(FabricAllReducePlan, EveryRanksContributionChangesTheSum) {
    // Slots 0, 3, 4: 1 + 4 + 5 = 10, plus 3 x (i % 5).
    EXPECT_EQ(expected_sum({0, 3, 4}, 7), 10.f + 3.f * 2.f);
    float without = rank_pattern(0, 7) + rank_pattern(3, 7);
    EXPECT_NE(without, expected_sum({0, 3, 4}, 7));
    EXPECT_EQ(rank_pattern(0, 7) + rank_pattern(3, 7) + rank_pattern(4, 7), expected_sum({0, 3, 4}, 7));
}

namespace {

RankReport rank(const std::string& node, int index, int local, double ms_all, double ms_rail, std::uint64_t wrong = 0) {
    RankReport r;
    r.node = node;
    r.node_index = index;
    r.nodes = 2;
    r.local_rank = local;
    r.per_node = 2;
    r.fabric.rdma_nics = 8;
    r.fabric.nic_gbitps = 400;
    r.fabric.rail_nic = "mlx5_" + std::to_string(local);
    r.log = parse_nccl_log(kRdmaLog);
    CommResult all{CommKind::All, 0, "", {{8u << 20, 20, ms_all / 2, 100, 0}, {16u << 20, 20, ms_all, 100, wrong}}};
    CommResult rail{CommKind::Rail, local, "", {{16u << 20, 20, ms_rail, 100, 0}}};
    r.comms = {all, rail};
    return r;
}

}  // namespace

TEST(FabricAllReducePlan, TheSlowestRankSetsEachCommunicatorsFigure) {
    // 16 MiB in 0.27 ms is 62.1 GB/s algbw, x 2(4-1)/4 = 93.2 GB/s busbw; one rank took 0.30 ms.
    std::vector<RankReport> ranks{rank("n1", 0, 0, 0.27, 0.36), rank("n1", 0, 1, 0.27, 0.36),
                                  rank("n2", 1, 0, 0.30, 0.36, 3), rank("n2", 1, 1, 0.27, 0.72)};
    Collected c = collect_ranks(ranks, {"n1", "n2"}, 2);
    ASSERT_TRUE(c.run.all);
    EXPECT_NEAR(c.run.all->busbw_gbps, 16.0 * (1 << 20) / 0.30e-3 / 1e9 * 1.5, 1e-6);
    EXPECT_EQ(c.run.all->bytes, 16u << 20);
    EXPECT_EQ(c.run.all->wrong, 3u);
    EXPECT_EQ(c.run.all->checked, 800u);
    ASSERT_EQ(c.sweep.size(), 2u);
    ASSERT_EQ(c.run.rails.size(), 2u);
    EXPECT_NEAR(c.run.rails[1].busbw_gbps, c.run.rails[0].busbw_gbps / 2, 1e-6);  // rail 1 took twice as long
    EXPECT_EQ(c.run.rails[1].rail.value_or(-1), 1);
    ASSERT_EQ(c.run.nodes.size(), 2u);
    EXPECT_EQ(c.run.nodes[1].rail_nics, (std::vector<std::string>{"mlx5_0", "mlx5_1"}));
    EXPECT_EQ(c.run.nodes[1].logs.size(), 2u);
    EXPECT_TRUE(c.notes.empty());
}

TEST(FabricAllReducePlan, ACommunicatorWithAMissingOrFailedRankIsNotMeasured) {
    std::vector<RankReport> ranks{rank("n1", 0, 0, 0.27, 0.36), rank("n2", 1, 0, 0.27, 0.36),
                                  rank("n2", 1, 1, 0.27, 0.36)};
    ranks[2].comms[1].error = "ncclCommInitRank failed: ncclRemoteError";
    Collected c = collect_ranks(ranks, {"n1", "n2"}, 2);
    EXPECT_FALSE(c.run.all);
    ASSERT_EQ(c.run.rails.size(), 1u);  // rail 0 had both its ranks
    ASSERT_EQ(c.notes.size(), 2u);
    EXPECT_EQ(c.notes[0], "the whole job was not measured (n1 GPU 1: no report)");
    EXPECT_EQ(c.notes[1], "rail 1 was not measured (n2 GPU 1: ncclCommInitRank failed: ncclRemoteError)");
}

TEST(FabricAllReducePlan, ARankReportSurvivesItsJsonAndABadOneIsNamed) {
    RankReport r = rank("n1", 0, 1, 0.27, 0.36);
    r.nccl_net = "IB";
    r.fabric.hints = {"no verbs device in /dev/infiniband"};
    r.comms[1].error = "x";
    RankReport back = rank_report_from_json(nlohmann::json::parse(to_json(r).dump()));
    EXPECT_EQ(to_json(back), to_json(r));
    EXPECT_EQ(back.log.channels.size(), 3u);
    EXPECT_EQ(back.nccl_net.value_or(""), "IB");
    auto j = nlohmann::json::parse(to_json(r).dump());
    j["local_rank"] = 5;
    EXPECT_THROW(rank_report_from_json(j), Error);
    j.erase("comms");
    EXPECT_THROW(rank_report_from_json(j), Error);
    EXPECT_THROW(rank_report_from_json(nlohmann::json::parse("{\"schema\": \"other\"}")), Error);
}
