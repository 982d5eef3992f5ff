// gpu.identity over hand-built inventories: every verdict path.
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

TEST(GpuIdentity, RebadgedCardFails) {
    Fixture f;
    // The name says H100 SXM, the device id is an H100 PCIe's.
    f.gpu(1).pci_device_id = 0x2331u;
    f.gpu(1).sm_count = 114;
    auto rs = run_one(std::make_unique<GpuIdentityCheck>(), f.ctx());
    EXPECT_EQ(for_gpu(rs, 0).verdict, Verdict::Pass);
    const CheckResult& r = for_gpu(rs, 1);
    EXPECT_EQ(r.verdict, Verdict::Fail);
    EXPECT_TRUE(details_mention(r, "re-badged")) << r.summary;
    EXPECT_TRUE(details_mention(r, "0x2331"));
}

TEST(GpuIdentity, FewerSmsThanTheSkuFails) {
    Fixture f;
    f.gpu(0).sm_count = 114;
    const CheckResult& r = for_gpu(run_one(std::make_unique<GpuIdentityCheck>(), f.ctx()), 0);
    EXPECT_EQ(r.verdict, Verdict::Fail);
    EXPECT_TRUE(details_mention(r, "cut-down"));
}

TEST(GpuIdentity, MemoryWithinReservePassesBelowItFails) {
    GpuInfo g = healthy_h100(0);
    g.memory_total_bytes = std::uint64_t(79.6 * double(1ull << 30));
    EXPECT_TRUE(identify_gpu(g, spec_db()).conflicts.empty());
    g.memory_total_bytes = std::uint64_t(76.0 * double(1ull << 30));  // 5% short
    auto id = identify_gpu(g, spec_db());
    ASSERT_EQ(id.conflicts.size(), 1u);
    EXPECT_NE(id.conflicts[0].find("GiB"), std::string::npos);
}

TEST(GpuIdentity, UnknownDeviceWarns) {
    Fixture f;
    f.gpu(0).name = std::string("NVIDIA Mystery 9000");
    f.gpu(0).pci_device_id = 0x9999u;
    const CheckResult& r = for_gpu(run_one(std::make_unique<GpuIdentityCheck>(), f.ctx()), 0);
    EXPECT_EQ(r.verdict, Verdict::Warn);
    EXPECT_TRUE(details_mention(r, "--specs"));
}

TEST(GpuIdentity, UnknownIdKnownNameWarnsAndIdentifiesByName) {
    GpuInfo g = healthy_h100(0);
    g.pci_device_id = 0x9999u;
    auto id = identify_gpu(g, spec_db());
    ASSERT_NE(id.spec, nullptr);
    EXPECT_EQ(id.spec->key, "h100-sxm5-80gb");
    EXPECT_EQ(id.how, "name+memory");
    EXPECT_EQ(id.unknowns.size(), 1u);
    EXPECT_TRUE(id.conflicts.empty());
}

TEST(GpuIdentity, LostGpuFailsOnlyInIdentity) {
    Fixture f;
    f.gpu(4).lost = true;
    EXPECT_EQ(for_gpu(run_one(std::make_unique<GpuIdentityCheck>(), f.ctx()), 4).verdict, Verdict::Fail);
    EXPECT_EQ(for_gpu(run_one(std::make_unique<GpuHealthCheck>(), f.ctx()), 4).verdict, Verdict::Skip);
}
