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
