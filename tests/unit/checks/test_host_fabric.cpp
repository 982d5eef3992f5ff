// host.fabric over the fabric fixture trees (tests/fixtures/hosts/fabric_*, written by
// make_fabric.py) and on copies of them with one file changed; its parsers on the kernel's strings.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "checks/host_fabric.hpp"
#include "checks/host_fabric_judge.hpp"
#include "host/fabric.hpp"
#include "host/pci_tree.hpp"

#include "support/check_helpers.hpp"

using namespace gpuvet;
namespace fs = std::filesystem;

namespace {

// libibverbs as present: the fixture trees judge the sysfs side alone.
std::optional<std::string> loads() { return std::nullopt; }

CheckResult judge_tree(const fs::path& root, HostFabricCheck::LibraryProbe probe = loads) {
    return judge_fabric(collect_fabric(root, probe));
}

// The findings of one verdict that contain `words`.
int count(const CheckResult& r, Verdict v, const std::string& words) {
    int n = 0;
    for (const Finding& f : r.findings) n += f.verdict == v && f.text.find(words) != std::string::npos;
    return n;
}

int faults(const CheckResult& r) {
    int n = 0;
    for (const Finding& f : r.findings) n += f.verdict == Verdict::Fail || f.verdict == Verdict::Warn;
    return n;
}

std::string all_findings(const CheckResult& r) {
    std::string s;
    for (const Finding& f : r.findings) s += std::string(to_string(f.verdict)) + ": " + f.text + "\n";
    return s;
}

// A writable copy of a fixture tree (symlinks kept as links) to change one thing in.
struct TreeCopy {
    fs::path root;
    explicit TreeCopy(const char* name) {
        root = fs::temp_directory_path() / ("gpuvet-fabric-" + std::string(name) + "-" + std::to_string(::getpid()));
        fs::remove_all(root);
        fs::copy(fixture(name), root, fs::copy_options::recursive | fs::copy_options::copy_symlinks);
    }
    ~TreeCopy() {
        std::error_code ec;
        fs::remove_all(root, ec);
    }
    void write(const std::string& rel, const std::string& bytes) const {
        std::ofstream(root / rel, std::ios::binary | std::ios::trunc) << bytes;
    }
};

}  // namespace

TEST(HostFabricParse, PortRateReadsTheRateLanesAndSpeedNameAndRefusesGarbage) {
    auto r = parse_port_rate("400 Gb/sec (4X NDR)\n");
    ASSERT_TRUE(r);
    EXPECT_DOUBLE_EQ(r->gbitps, 400);
    EXPECT_EQ(r->width_lanes.value_or(0), 4);
    EXPECT_EQ(r->speed_name, "NDR");
    r = parse_port_rate("2.5 Gb/sec (1X SDR)");
    ASSERT_TRUE(r);
    EXPECT_DOUBLE_EQ(r->gbitps, 2.5);
    EXPECT_EQ(r->width_lanes.value_or(0), 1);
    r = parse_port_rate("200 Gb/sec (Bonded)");
    ASSERT_TRUE(r);
    EXPECT_FALSE(r->width_lanes);
    EXPECT_FALSE(parse_port_rate("fast"));
    EXPECT_FALSE(parse_port_rate(" Gb/sec (4X NDR)"));
    EXPECT_FALSE(parse_port_rate("-5 Gb/sec"));
}

TEST(HostFabricParse, CodedStateSplitsTheCodeFromTheName) {
    auto s = parse_coded_state("4: ACTIVE");
    ASSERT_TRUE(s);
    EXPECT_EQ(s->code, 4);
    EXPECT_EQ(s->name, "ACTIVE");
    EXPECT_FALSE(parse_coded_state("ACTIVE"));
}

TEST(HostFabricParse, LinkSpeedReadsGigatransfersAndRefusesUnknown) {
    EXPECT_EQ(parse_link_speed_gts("32.0 GT/s PCIe").value_or(0), 32.0);
    EXPECT_EQ(parse_link_speed_gts("8 GT/s").value_or(0), 8.0);
    EXPECT_FALSE(parse_link_speed_gts("Unknown"));
}

TEST(HostFabricParse, PciePayloadRateDeductsTheLineEncoding) {
    EXPECT_NEAR(pcie_payload_gbitps(32, 16), 504.1, 0.1);  // Gen5 x16 after 128b/130b
    EXPECT_NEAR(pcie_payload_gbitps(2.5, 1), 2.0, 1e-9);   // Gen1: 8b/10b
}

TEST(HostFabricParse, AcsFromConfigSpace) {
    std::string config(4096, '\0');
    auto put32 = [&](std::size_t at, std::uint32_t v) {
        for (int i = 0; i < 4; ++i) config[at + i] = char((v >> (8 * i)) & 0xff);
    };
    put32(0x100, 0x0001 | 2u << 16 | 0x148u << 20);  // AER -> 0x148
    put32(0x148, 0x000d | 1u << 16);                 // ACS, last
    put32(0x14c, 0x005f | 0x001du << 16);            // capability, control: SV RR CR UF
    AcsReading a = parse_acs("0000:17:00.0", config);
    ASSERT_TRUE(a.has_acs && a.control);
    EXPECT_TRUE(*a.control & kAcsRequestRedirect);
    EXPECT_TRUE(*a.control & kAcsCompletionRedirect);
    // Without root the kernel hands out 64 bytes: unreadable, with the reason.
    AcsReading short_read = parse_acs("0000:17:00.0", config.substr(0, 64));
    EXPECT_FALSE(short_read.control);
    EXPECT_NE(short_read.absent_reason.find("root"), std::string::npos);
    // A list that points back at itself ends instead of looping.
    put32(0x100, 0x0001 | 2u << 16 | 0x100u << 20);
    AcsReading loop = parse_acs("x", config);
    EXPECT_FALSE(loop.has_acs);
    EXPECT_TRUE(loop.absent_reason.empty());
}

TEST(HostFabricFixture, HealthyEightNdrPasses) {
    FabricFacts f = collect_fabric(fixture("fabric_ib_8x400"), loads);
    ASSERT_EQ(f.devices.size(), 8u);
    ASSERT_EQ(f.gpus.size(), 8u);
    EXPECT_EQ(f.uverbs.size(), 8u);
    EXPECT_EQ(f.peermem_evidence, "/sys/module/nvidia_peermem");
    const RdmaDevice& d = f.devices[0];
    ASSERT_TRUE(d.pci);
    EXPECT_EQ(d.pci->bdf, "0000:19:00.0");
    EXPECT_EQ(d.pci->numa_node.value_or(-1), 0);
    EXPECT_EQ(d.pci->ancestors.size(), 4u);  // host bridge, root port, switch up, switch down
    ASSERT_EQ(d.ports.size(), 1u);
    EXPECT_TRUE(d.ports[0].active());
    for (const GpuNicPair& p : pair_gpus_with_nics(f)) {
        ASSERT_TRUE(p.nic);
        EXPECT_EQ(p.distance, PciDistance::SameSwitch) << f.gpus[p.gpu].bdf;
    }
    EXPECT_FALSE(f.acs.empty());
    for (const AcsReading& a : f.acs) EXPECT_EQ(a.control.value_or(0xffff), 0) << a.bdf;

    CheckResult r = judge_fabric(f);
    EXPECT_EQ(r.verdict, Verdict::Pass) << all_findings(r);
    EXPECT_EQ(faults(r), 0) << all_findings(r);
    EXPECT_EQ(find(r, "active_ports")->value.value_or(0), 8);
    EXPECT_EQ(find(r, "rdma_total_gbitps")->value.value_or(0), 3200);
    EXPECT_EQ(find(r, "gpus_with_near_nic")->value.value_or(0), 8);
    EXPECT_EQ(find(r, "mlx5_0_p1_rate_gbitps")->value.value_or(0), 400);
    EXPECT_EQ(find(r, "gpudirect_rdma")->text.value_or(""), "nvidia-peermem");
    EXPECT_NE(r.summary.find("8 x 400 Gb/s InfiniBand"), std::string::npos) << r.summary;
}

TEST(HostFabricFixture, RoceWithDmaBufPasses) {
    CheckResult r = judge_tree(fixture("fabric_roce"));
    EXPECT_EQ(r.verdict, Verdict::Pass) << all_findings(r);
    EXPECT_EQ(count(r, Verdict::Pass, "DMA-BUF"), 1) << all_findings(r);
    EXPECT_EQ(find(r, "mlx5_2_p1_mtu_bytes")->value.value_or(0), 9000);
    EXPECT_EQ(find(r, "gpudirect_rdma")->text.value_or(""), "DMA-BUF");
    EXPECT_NE(r.summary.find("8 x 400 Gb/s RoCE"), std::string::npos) << r.summary;
}

TEST(HostFabricFixture, HalfWidthPortIsNamed) {
    CheckResult r = judge_tree(fixture("fabric_half_width"));
    EXPECT_EQ(r.verdict, Verdict::Fail);
    EXPECT_EQ(count(r, Verdict::Fail, "mlx5_3 port 1 trained at 2X while its peers run 4X"), 1) << all_findings(r);
    EXPECT_EQ(faults(r), 1) << all_findings(r);
    EXPECT_EQ(find(r, "mlx5_3_p1_rate_gbitps")->value.value_or(0), 200);
    EXPECT_NE(r.summary.find("mlx5_3 port 1 trained at 2X"), std::string::npos) << r.summary;
}

TEST(HostFabricFixture, NicOnTheFarNumaNodeIsNamed) {
    CheckResult r = judge_tree(fixture("fabric_far_numa"));
    EXPECT_EQ(r.verdict, Verdict::Warn) << all_findings(r);
    EXPECT_EQ(count(r, Verdict::Warn, "GPU 0000:3c:00.0 (NUMA 0) has no RDMA NIC of its own"), 1) << all_findings(r);
    EXPECT_EQ(count(r, Verdict::Warn, "mlx5_3, is on NUMA node 1"), 1) << all_findings(r);
    EXPECT_EQ(faults(r), 1) << all_findings(r);
    EXPECT_EQ(find(r, "gpus_with_near_nic")->value.value_or(0), 7);
}

TEST(HostFabricFixture, NoPeermemIsNoGpuDirect) {
    CheckResult r = judge_tree(fixture("fabric_no_peermem"));
    EXPECT_EQ(r.verdict, Verdict::Fail);
    EXPECT_EQ(count(r, Verdict::Fail, "no GPUDirect RDMA: nvidia-peermem is not loaded"), 1) << all_findings(r);
    EXPECT_EQ(faults(r), 1) << all_findings(r);
    EXPECT_FALSE(find(r, "gpudirect_rdma")->present());
}

TEST(HostFabricVariant, ContainerWithoutVerbsDevices) {
    TreeCopy t("fabric_ib_8x400");
    fs::remove_all(t.root / "dev/infiniband");
    CheckResult r = judge_tree(t.root);
    EXPECT_EQ(count(r, Verdict::Fail, "/dev/infiniband is not visible here"), 1) << all_findings(r);
    EXPECT_EQ(faults(r), 1) << all_findings(r);
}

TEST(HostFabricVariant, FewerVerbsFilesThanNics) {
    TreeCopy t("fabric_ib_8x400");
    fs::remove(t.root / "dev/infiniband/uverbs7");
    CheckResult r = judge_tree(t.root);
    EXPECT_EQ(count(r, Verdict::Warn, "7 uverbs device files for 8 RDMA devices"), 1) << all_findings(r);
}

TEST(HostFabricVariant, AMissingLibibverbsFailsWithTheLoadersReason) {
    CheckResult r = judge_tree(fixture("fabric_ib_8x400"), [] { return std::optional<std::string>("not found"); });
    EXPECT_EQ(count(r, Verdict::Fail, "libibverbs.so.1 cannot be loaded (not found)"), 1) << all_findings(r);
}

TEST(HostFabricVariant, AcsRedirectOnASwitchPort) {
    TreeCopy t("fabric_ib_8x400");
    const fs::path cfg = "sys/devices/pci0000:15/0000:15:01.0/0000:16:00.0/0000:17:01.0/config";
    std::ifstream in(t.root / cfg, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), {});
    in.close();
    ASSERT_EQ(bytes.size(), 4096u);
    bytes[0x14e] = 0x1d;  // ACS Control: SV, RR, CR, UF, as the kernel sets it with an IOMMU on
    t.write(cfg.string(), bytes);
    CheckResult r = judge_tree(t.root);
    EXPECT_EQ(count(r, Verdict::Fail, "PCIe ACS redirects peer-to-peer traffic on bridge 0000:17:01.0"), 1)
        << all_findings(r);
    EXPECT_EQ(faults(r), 1) << all_findings(r);
}

TEST(HostFabricVariant, AcsUnreadableWithoutRoot) {
    TreeCopy t("fabric_ib_8x400");
    t.write("sys/devices/pci0000:15/0000:15:01.0/0000:16:00.0/0000:17:01.0/config", std::string(64, '\0'));
    CheckResult r = judge_tree(t.root);
    EXPECT_EQ(r.verdict, Verdict::Pass) << all_findings(r);
    bool said = false;
    for (auto& d : r.details) said = said || d.find("ACS not read on 1 bridge") != std::string::npos;
    EXPECT_TRUE(said);
}

TEST(HostFabricVariant, RoceSmallMtuAndDownPort) {
    TreeCopy t("fabric_roce");
    t.write("sys/class/net/ens2np0/mtu", "1500\n");
    t.write("sys/class/infiniband/mlx5_5/ports/1/state", "1: DOWN\n");
    t.write("sys/class/infiniband/mlx5_5/ports/1/phys_state", "3: Disabled\n");
    CheckResult r = judge_tree(t.root);
    EXPECT_EQ(r.verdict, Verdict::Warn) << all_findings(r);
    EXPECT_EQ(count(r, Verdict::Warn, "mlx5_1 port 1 runs RoCE over ens2np0 with an MTU of 1500"), 1)
        << all_findings(r);
    EXPECT_EQ(count(r, Verdict::Warn, "mlx5_5 port 1 is down (state 1: DOWN, physical state 3: Disabled) while 7"), 1)
        << all_findings(r);
}

TEST(HostFabricVariant, IbPortUpWithoutSubnetManager) {
    TreeCopy t("fabric_ib_8x400");
    t.write("sys/class/infiniband/mlx5_6/ports/1/state", "2: INIT\n");
    CheckResult r = judge_tree(t.root);
    EXPECT_EQ(count(r, Verdict::Fail, "mlx5_6 port 1 has a physical link but its state is 2: INIT"), 1)
        << all_findings(r);
}

TEST(HostFabricVariant, NicPcieLinkNarrowed) {
    TreeCopy t("fabric_ib_8x400");
    t.write("sys/bus/pci/devices/0000:1b:00.0/current_link_width", "8\n");
    CheckResult r = judge_tree(t.root);
    EXPECT_EQ(count(r, Verdict::Fail, "mlx5_1's PCIe link (0000:1b:00.0) trained at x8 at 32 GT/s of x16"), 1)
        << all_findings(r);
}

TEST(HostFabricFixture, NoRdmaDeviceSkips) {
    CheckResult r = judge_tree(fixture("two_socket_128"));
    EXPECT_EQ(r.verdict, Verdict::Skip);
    EXPECT_NE(r.summary.find("No RDMA device"), std::string::npos);
}

TEST(HostFabricFixture, TheInventoryListsEachPortWithItsRateAndNumaNodeAndTheFailingOne) {
    FabricFacts f = collect_fabric(fixture("fabric_half_width"), loads);
    FabricInventory inv = fabric_inventory_of(f, judge_fabric(f));
    EXPECT_EQ(inv.verdict, "FAIL");
    ASSERT_GE(inv.rows.size(), 18u);  // 8 ports, 8 GPUs, verbs devices, GPUDirect
    EXPECT_EQ(inv.rows[3].first, "mlx5_3 port 1");
    EXPECT_NE(inv.rows[3].second.find("200 Gb/sec (2X NDR)"), std::string::npos) << inv.rows[3].second;
    EXPECT_NE(inv.rows[3].second.find("NUMA 0"), std::string::npos);
    ASSERT_EQ(inv.findings.size(), 1u);
    EXPECT_EQ(inv.findings[0].rfind("FAIL: mlx5_3", 0), 0u);
}
