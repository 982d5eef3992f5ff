// Host checks over fixture trees (tests/fixtures/hosts) and their pure parts.
#include <gtest/gtest.h>

#include "core/context.hpp"
#include "checks/host_balance.hpp"
#include "checks/run_facts.hpp"
#include "checks/host_cpu.hpp"
#include "checks/host_memory.hpp"
#include "checks/host_network.hpp"
#include "host/cpu_facts.hpp"
#include "host/identity.hpp"
#include "host/iperf_run.hpp"
#include "host/steal.hpp"
#include "host/storage_bench.hpp"
#include "host/stream.hpp"
#include "specs/gpu_spec.hpp"

#include "support/check_helpers.hpp"

using namespace gpuvet;

namespace {}  // namespace

TEST(HostIdentityFixture, TwoSocket128Threads) {
    MachineInfo m = read_machine_info(HostFs(fixture("two_socket_128")));
    ASSERT_TRUE(m.cpu_sockets && m.cpu_cores && m.cpu_threads && m.numa_nodes);
    EXPECT_EQ(*m.cpu_sockets, 2);
    EXPECT_EQ(*m.cpu_cores, 64);
    EXPECT_EQ(*m.cpu_threads, 128);
    EXPECT_EQ(*m.numa_nodes, 2);
    EXPECT_EQ(m.cpu_model.value_or(""), "AMD EPYC 7543 32-Core Processor");
    EXPECT_FALSE(m.cpu_quota);
    EXPECT_EQ(m.os.value_or(""), "Ubuntu 22.04.4 LTS");
}

TEST(HostIdentityFixture, ContainerLimitedToFourCpus) {
    MachineInfo m = read_machine_info(HostFs(fixture("container_4cpu")));
    ASSERT_TRUE(m.cpu_quota && m.cpuset_cpus && m.cpu_threads);
    EXPECT_DOUBLE_EQ(*m.cpu_quota, 4.0);
    EXPECT_EQ(*m.cpuset_cpus, 4);
    EXPECT_EQ(*m.cpu_threads, 16);
    EXPECT_EQ(m.container.value_or(""), "docker");
    EXPECT_EQ(m.memory_limit_bytes.value_or(0), 17179869184ull);
}

TEST(HostIdentityFixture, VmAndNoNuma) {
    MachineInfo vm = read_machine_info(HostFs(fixture("vm_steal")));
    EXPECT_EQ(vm.virtualization.value_or(""), "kvm");
    MachineInfo flat = read_machine_info(HostFs(fixture("no_numa")));
    EXPECT_FALSE(flat.numa_nodes);
    EXPECT_EQ(flat.cpu_threads.value_or(0), 4);
    EXPECT_TRUE(read_node_cpus(HostFs(fixture("no_numa"))).empty());
}

TEST(HostSteal, SnapshotsFromVmFixture) {
    HostFs fs(fixture("vm_steal"));
    auto before = parse_proc_stat(*fs.read("/snapshots/stat.before"));
    auto after = parse_proc_stat(*fs.read("/snapshots/stat.after"));
    ASSERT_EQ(before.size(), 4u);  // the aggregate "cpu" line is not a CPU
    auto w = steal_between(before, after);
    ASSERT_TRUE(w);
    // cpu0 and cpu1 ran 88 ticks and lost 12 each; the idle CPUs do not dilute it.
    EXPECT_NEAR(w->steal_fraction, 24.0 / 200.0, 1e-12);
    CheckResult r;
    EXPECT_EQ(judge_steal(w, r), Verdict::Fail);
    ASSERT_TRUE(find(r, "steal_pct"));
    EXPECT_NEAR(*find(r, "steal_pct")->value, 12.0, 1e-9);
    EXPECT_FALSE(find(r, "steal_pct")->reference->source.empty());
}

TEST(HostSteal, StealAboveTheThresholdWarnsAndAnEmptyWindowHasNoFigure) {
    std::map<int, CpuTimes> a{{0, {1000, 0, 0}}}, warn{{0, {1097, 0, 3}}}, clean{{0, {1100, 0, 0}}};
    CheckResult r;
    EXPECT_EQ(judge_steal(steal_between(a, warn), r), Verdict::Warn);
    EXPECT_EQ(judge_steal(steal_between(a, clean), r), Verdict::Pass);
    EXPECT_FALSE(steal_between(a, a));  // nothing ran: no figure, not 0%
    EXPECT_TRUE(parse_proc_stat("cpu0 1 2\ngarbage\n").empty());
}

TEST(HostCpu, GovernorsCpuListsAndNodeSpread) {
    auto gov = read_governors(HostFs(fixture("two_socket_128")));
    EXPECT_EQ(gov["performance"], 127);
    EXPECT_EQ(gov["powersave"], 1);
    EXPECT_TRUE(read_governors(HostFs(fixture("no_numa"))).empty());
    auto l = parse_cpu_list("0-2,8");
    ASSERT_TRUE(l);
    EXPECT_EQ(*l, (std::vector<int>{0, 1, 2, 8}));
    EXPECT_FALSE(parse_cpu_list("3-1"));
    auto nodes = read_node_cpus(HostFs(fixture("two_socket_128")));
    ASSERT_EQ(nodes.size(), 2u);
    std::vector<int> all(128);
    for (int i = 0; i < 128; ++i) all[i] = i;
    auto t = spread_over_nodes(nodes, all, 4);
    EXPECT_EQ(t, (std::vector<int>{0, 32, 1, 33}));  // alternating nodes
    EXPECT_EQ(spread_over_nodes({}, {5, 6}, 8), (std::vector<int>{5, 6}));
}

TEST(HostCpu, StragglersAndOrderHook) {
    CheckResult r;
    EXPECT_EQ(judge_core_speeds({{0, 100}, {1, 101}, {2, 99}, {3, 80}}, r), Verdict::Warn);
    ASSERT_FALSE(r.details.empty());
    EXPECT_NE(r.details.back().find("cpu3"), std::string::npos);
    CheckResult ok;
    EXPECT_EQ(judge_core_speeds({{0, 100}, {1, 90}}, ok), Verdict::Pass);
    CheckResult o;
    EXPECT_EQ(hold_cores_against(4, 8, o), Verdict::Fail);
    EXPECT_EQ(hold_cores_against(8, 8, o), Verdict::Pass);
}

TEST(HostCpu, CheckOnContainerFixtureSeesTheLimit) {
    Report rep;
    CheckContext ctx;
    ctx.options.root = fixture("container_4cpu");
    ctx.options.tier = Tier::Quick;
    ctx.report = &rep;
    rep.machine = read_machine_info(HostFs(ctx.options.root));
    RunFacts facts{rep.machine};  // read once, before the check
    ctx.facts = &facts;
    auto res = HostCpuCheck().run(ctx);
    ASSERT_EQ(res.size(), 1u);
    auto* usable = find(res[0], "cpus_usable");
    ASSERT_TRUE(usable && usable->value);
    EXPECT_DOUBLE_EQ(*usable->value, 4.0);
    ASSERT_TRUE(find(res[0], "core_ops_per_s_median"));
    EXPECT_GT(find(res[0], "core_ops_per_s_median")->value.value_or(0), 0);
}

TEST(HostMemory, StreamArraysAreSizedPastTheCacheWithinFreeMemory) {
    EXPECT_EQ(read_llc_bytes(HostFs(fixture("two_socket_128"))).value_or(0), 32u << 20);
    std::string why;
    EXPECT_EQ(stream_array_bytes(32u << 20, std::size_t(64) << 30, why).value_or(0), 256u << 20);
    EXPECT_EQ(stream_array_bytes(std::size_t(256) << 20, std::size_t(64) << 30, why).value_or(0), std::size_t(1) << 30);
    EXPECT_EQ(stream_array_bytes(std::size_t(256) << 20, std::size_t(3) << 30, why).value_or(0), std::size_t(512)
                                                                                                     << 20);
    EXPECT_FALSE(stream_array_bytes(std::nullopt, std::size_t(1) << 30, why));
    EXPECT_NE(why.find("free memory"), std::string::npos);
}

TEST(HostMemory, StreamKernelsVerify) {
    StreamPlan p;
    p.elements = 1 << 16;
    p.thread_cpus = {};  // unpinned, one thread
    p.repeats = 3;
    auto r = run_stream(p, nullptr);
    EXPECT_TRUE(r.verified) << r.verify_error;
    EXPECT_GT(r.triad_gbps, 0);
    EXPECT_GT(r.copy_gbps, 0);
}

TEST(HostStorage, TheTestFileLeavesSpaceFreeAndIsRefusedWhenTooLittleIsLeft) {
    const std::size_t MiB = 1 << 20;
    EXPECT_EQ(storage_bytes_to_use(1024 * MiB, 100 * 1024 * MiB, MiB), 1024 * MiB);
    EXPECT_EQ(storage_bytes_to_use(1024 * MiB, 500 * MiB, MiB), 436 * MiB);  // 64 MiB kept free
    EXPECT_EQ(storage_bytes_to_use(1024 * MiB, 100 * MiB, MiB), 0u);         // too little: refuse
}

TEST(HostNetwork, HostPortTakesTheDefaultPortOrAValidOneAndRefusesTheRest) {
    EXPECT_EQ(parse_host_port("10.0.0.2").port, kIperfDefaultPort);
    auto hp = parse_host_port("peer:7000");
    EXPECT_EQ(hp.host, "peer");
    EXPECT_EQ(hp.port, 7000);
    EXPECT_EQ(parse_host_port("[::1]:5202").host, "::1");
    EXPECT_ANY_THROW(parse_host_port("peer:70000"));
    EXPECT_ANY_THROW(parse_host_port(":5201"));
}

TEST(HostNetwork, IperfJsonAndVerdicts) {
    auto o = parse_iperf_json(R"({"start":{},"end":{"sum_sent":{"bits_per_second":9.4e9,"retransmits":12},
                                 "sum_received":{"bits_per_second":9.3e9}}})");
    ASSERT_TRUE(o.received_gbitps);
    EXPECT_DOUBLE_EQ(*o.received_gbitps, 9.3);
    EXPECT_DOUBLE_EQ(o.retransmits.value_or(-1), 12);
    EXPECT_FALSE(parse_iperf_json("not json").error.empty());
    EXPECT_EQ(parse_iperf_json(R"({"error":"unable to connect"})").error, "unable to connect");
    IperfOutcome bad;
    bad.error = "unable to connect to server: Connection refused";
    // No figure at all is the peer's problem, not a verdict on the network: could not run.
    auto none = network_result({"h", 5201}, 1, 3, bad, bad);
    EXPECT_EQ(none.verdict, Verdict::Error);
    EXPECT_NE(none.summary.find("nothing accepts iperf3 connections at h:5201"), std::string::npos) << none.summary;
    IperfOutcome silent;
    silent.error = "the test did not finish in time";
    silent.timed_out = true;  // the flag decides, not the words
    EXPECT_NE(network_result({"h", 5201}, 1, 3, silent, silent).summary.find("does not answer as an iperf3 server"),
              std::string::npos);
    EXPECT_EQ(network_result({"h", 5201}, 1, 3, o, bad).verdict, Verdict::Warn);
    auto ok = network_result({"h", 5201}, 1, 3, o, o);
    EXPECT_EQ(ok.verdict, Verdict::Pass);
    ASSERT_TRUE(find(ok, "download_gbitps"));
    EXPECT_EQ(find(ok, "download_gbitps")->unit, "Gbit/s");
}

TEST(HostBalance, CpusRamAndStoragePerGpuGradeTheBoxWithSourcedReferences) {
    BalanceInputs in;
    in.gpus = 8;
    in.usable_cpus = 12;  // 1.5 per GPU
    in.ram_bytes = 512e9;
    in.gpu_memory_bytes = 640e9;
    in.storage_read_gbps = 4;
    auto r = balance_result(in);
    EXPECT_EQ(r.verdict, Verdict::Fail);
    EXPECT_DOUBLE_EQ(find(r, "cpus_per_gpu")->value.value_or(0), 1.5);
    in.usable_cpus = 64;
    EXPECT_EQ(balance_result(in).verdict, Verdict::Warn);  // RAM below GPU memory, disk 0.5 GB/s per GPU
    in.ram_bytes = 2048e9;
    in.storage_read_gbps = 16;
    auto good = balance_result(in);
    EXPECT_EQ(good.verdict, Verdict::Pass);
    EXPECT_FALSE(find(good, "network_gbitps_per_gpu")->present());
    EXPECT_FALSE(find(good, "cpus_per_gpu")->reference->source.empty());

    // Without the GPUs' throughput the storage rule is flat, and says why.
    EXPECT_DOUBLE_EQ(find(good, "storage_read_gbps_per_gpu")->reference->warn_below.value_or(0), 1.0);
    EXPECT_NE(find(good, "storage_read_gbps_per_gpu")->reference->source.find("unknown"), std::string::npos);

    CheckContext ctx;
    RunFacts host_only{MachineInfo{}};
    ctx.facts = &host_only;
    EXPECT_TRUE(HostBalanceCheck().unmet_requirement(ctx));  // no GPUs: SKIP with reason
    Inventory one;
    one.gpus.emplace_back();
    RunFacts with_gpu(MachineInfo{}, one, nullptr, {});
    ctx.facts = &with_gpu;
    EXPECT_FALSE(HostBalanceCheck().unmet_requirement(ctx));
}

TEST(HostBalance, StorageNeedScalesWithTheGpus) {
    GpuSpec h100, t4, a100, v100, unknown_figures;
    h100.name = "H100 SXM5 80GB";
    h100.bf16_tensor_tflops = 989.5;
    a100.name = "A100 SXM4 80GB";
    a100.bf16_tensor_tflops = 312;
    t4.name = "Tesla T4";
    t4.fp16_tensor_tflops = 65;  // no BF16 tensor path: FP16 stands in
    unknown_figures.name = "Mystery";
    auto eq = a100_equivalents({&a100, &a100});
    ASSERT_TRUE(eq);
    EXPECT_DOUBLE_EQ(*eq, 2.0);
    ASSERT_TRUE(a100_equivalents({&t4}));
    EXPECT_NEAR(*a100_equivalents({&t4}), 65.0 / 312, 1e-12);
    EXPECT_FALSE(a100_equivalents({&a100, nullptr}));
    EXPECT_NE(a100_equivalents({&a100, nullptr}).absent_reason.find("not in the spec database"), std::string::npos);
    EXPECT_NE(a100_equivalents({&unknown_figures}).absent_reason.find("Mystery"), std::string::npos);
    EXPECT_FALSE(a100_equivalents({}));

    BalanceInputs in;
    in.usable_cpus = 128;
    in.ram_bytes = 2048e9;
    in.gpu_memory_bytes = 640e9;
    // 8 x H100 read ~7.6 GB/s in image training: a 4 GB/s disk starves them...
    in.gpus = 8;
    in.a100_equivalents = a100_equivalents(std::vector<const GpuSpec*>(8, &h100));
    in.storage_read_gbps = 4;
    auto r = balance_result(in);
    EXPECT_EQ(r.verdict, Verdict::Warn);
    ASSERT_TRUE(find(r, "storage_read_gbps_per_gpu")->reference->warn_below);
    EXPECT_NEAR(*find(r, "storage_read_gbps_per_gpu")->reference->warn_below * 8, 0.3 * 8 * 989.5 / 312, 1e-9);
    // ...while 4 x T4 read ~0.25 GB/s: a 0.5 GB/s SATA SSD feeds them (the flat rule warned here).
    in.gpus = 4;
    in.gpu_memory_bytes = 64e9;
    in.a100_equivalents = a100_equivalents(std::vector<const GpuSpec*>(4, &t4));
    in.storage_read_gbps = 0.5;
    auto t = balance_result(in);
    EXPECT_EQ(t.verdict, Verdict::Pass);
    bool tight = false;
    for (auto& d : t.details) tight |= d.find("tight for video") != std::string::npos;
    EXPECT_TRUE(tight) << "0.5 GB/s is under 3x the need: the advice names video";
    in.storage_read_gbps = 0.2;
    EXPECT_EQ(balance_result(in).verdict, Verdict::Warn);
}
