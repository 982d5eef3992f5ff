// gpu.nvlink over hand-built inventories: every verdict path.
#include <gtest/gtest.h>

#include "checks/gpu_driver.hpp"
#include "checks/gpu_requirements.hpp"
#include "core/clock_reasons.hpp"
#include "gpu/identify.hpp"
#include "order/order.hpp"
#include "support/check_helpers.hpp"
#include "support/inventory_checks.hpp"
#include "support/inventory_fixtures.hpp"
#include "support/lineup_cards.hpp"

using namespace gpuvet;
using namespace gpuvet::testing;

TEST(GpuNvlink, InactiveLinkFails) {
    Fixture f;
    f.gpu(5).nvlinks[7].active = false;
    auto rs = run_one(std::make_unique<GpuNvlinkCheck>(), f.ctx());
    const CheckResult& r = for_gpu(rs, 5);
    EXPECT_EQ(r.verdict, Verdict::Fail);
    EXPECT_TRUE(details_mention(r, "7 inactive"));
    EXPECT_EQ(find(r, "nvlink_links_active")->value, 17);
    // The topology row is in the details.
    EXPECT_TRUE(details_mention(for_gpu(rs, 0), "topology, GPU0 to GPU0..7: X NV18"));
}

TEST(GpuNvlink, FewerLinksThanTheSkuFails) {
    Fixture f;
    f.gpu(0).nvlinks.resize(12);
    EXPECT_EQ(for_gpu(run_one(std::make_unique<GpuNvlinkCheck>(), f.ctx()), 0).verdict, Verdict::Fail);
}

TEST(GpuNvlink, SkuWithoutNvlinkSkips) {
    GpuInfo g = healthy_h100(0);
    g.name = std::string("NVIDIA L40S");
    g.pci_device_id = 0x26b9u;
    g.sm_count = 142;
    g.memory_total_bytes = std::uint64_t(45) << 30;
    g.nvlinks.clear();
    Inventory inv;
    inv.gpus.push_back(g);
    Fixture f(inv);
    const CheckResult& r = for_gpu(run_one(std::make_unique<GpuNvlinkCheck>(), f.ctx()), 0);
    EXPECT_EQ(r.verdict, Verdict::Skip);
    EXPECT_TRUE(details_mention(r, "has no NVLink")) << r.summary;
}

TEST(GpuNvlink, PcieCardWithoutBridgeSkips) {
    GpuInfo g = healthy_h100(0);
    g.name = std::string("NVIDIA H100 PCIe");
    g.pci_device_id = 0x2331u;
    g.sm_count = 114;
    for (auto& l : g.nvlinks) l.active = false;
    Inventory inv;
    inv.gpus.push_back(g);
    Fixture f(inv);
    const CheckResult& r = for_gpu(run_one(std::make_unique<GpuNvlinkCheck>(), f.ctx()), 0);
    EXPECT_EQ(r.verdict, Verdict::Skip);
    EXPECT_TRUE(details_mention(r, "bridge"));
}

// --- judged against the box ---------------------------------------------------------------------

TEST(GpuNvlink, LoneSxmGpuWithUntrainedLinksPasses) {
    Inventory inv = healthy_box(1);
    for (auto& l : inv.gpus[0].nvlinks) l.active = false;
    Fixture f(inv);
    CheckList list;
    list.push_back(std::make_unique<GpuNvlinkCheck>());
    run_checks(list, f.ctx());
    const CheckResult& r = f.report.checks.at(0);
    EXPECT_EQ(r.verdict, Verdict::Pass) << r.summary;
    EXPECT_NE(r.summary.find("only GPU"), std::string::npos) << r.summary;
    EXPECT_FALSE(r.details.empty() && r.findings.empty());
}

TEST(GpuNvlink, LoneSxmGpuWhoseLinksCannotBeReadPasses) {
    Inventory inv = healthy_box(1);
    inv.gpus[0].nvlinks.clear();
    inv.gpus[0].nvlink_absent_reason = "not supported by this driver";
    Fixture f(inv);
    CheckList list;
    list.push_back(std::make_unique<GpuNvlinkCheck>());
    run_checks(list, f.ctx());
    EXPECT_EQ(f.report.checks.at(0).verdict, Verdict::Pass) << f.report.checks.at(0).summary;
    // With peers it stays a warning: the links may matter and were not read.
    Fixture two(healthy_box(2));
    two.gpu(1).nvlinks.clear();
    two.gpu(1).nvlink_absent_reason = "not supported by this driver";
    CheckList list2;
    list2.push_back(std::make_unique<GpuNvlinkCheck>());
    run_checks(list2, two.ctx());
    EXPECT_EQ(two.report.checks.at(1).verdict, Verdict::Warn);
}

TEST(GpuNvlink, GpuWithLinksDownInAnHgxBoxFails) {
    Fixture f(healthy_box(8));
    for (auto& l : f.gpu(3).nvlinks) l.active = false;
    CheckList list;
    list.push_back(std::make_unique<GpuNvlinkCheck>());
    run_checks(list, f.ctx());
    for (auto& r : f.report.checks) EXPECT_EQ(r.verdict, r.gpu == 3 ? Verdict::Fail : Verdict::Pass) << r.summary;
}

TEST(GpuNvlink, NvlinkOrderedWithOneGpuSaysWhatItMeans) {
    Inventory inv = healthy_box(1);
    for (auto& l : inv.gpus[0].nvlinks) l.active = false;
    Fixture f(inv);
    Order o = parse_expect("1x H100 SXM, nvlink", spec_db());
    for (auto& r : verify_gpu_items(o, f.ctx())) {
        if (r.key != "order.nvlink") continue;
        EXPECT_EQ(r.verdict, Verdict::Warn);
        EXPECT_NE(r.summary.find("one GPU"), std::string::npos) << r.summary;
        EXPECT_NE(r.summary.find("between GPUs"), std::string::npos) << r.summary;
        return;
    }
    FAIL() << "no order.nvlink";
}
