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
#include "support/lineup_cards.hpp"

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

// --- across the GPU lineup: the wording of identity findings ----------------------------------

TEST(GpuIdentity, HealthyL40sWithEccOnPasses) {
    // The defect: 46068 MiB (44.99 GiB) was held to 48 GiB less 4% and failed.
    CheckResult r = identity(l40s(46068));
    EXPECT_EQ(r.verdict, Verdict::Pass) << r.summary;
    EXPECT_EQ(identity(l40s(49140, false)).verdict, Verdict::Pass);
    EXPECT_EQ(identity(l40s(46068, std::nullopt)).verdict, Verdict::Pass);
    EXPECT_EQ(identity(card("NVIDIA A10", 0x2236u, 72, 23028, true)).verdict, Verdict::Pass);
    EXPECT_EQ(identity(card("NVIDIA L4", 0x27b8u, 58, 23034, true)).verdict, Verdict::Pass);
    EXPECT_EQ(identity(card("Tesla T4", 0x1eb8u, 40, 15360, true)).verdict, Verdict::Pass);
    EXPECT_EQ(identity(card("NVIDIA H200", 0x2335u, 132, 143771, true)).verdict, Verdict::Pass);
    EXPECT_EQ(identity(card("NVIDIA B200", 0x2901u, 148, 183359, true)).verdict, Verdict::Pass);
    EXPECT_EQ(identity(card("NVIDIA H20", 0x2329u, 78, 97871, true)).verdict, Verdict::Pass);
    EXPECT_EQ(identity(card("NVIDIA GeForce RTX 4090", 0x2684u, 128, 24564, false)).verdict, Verdict::Pass);
    // An A100 40GB on an R470 driver, 1.04% under today's 40960.
    EXPECT_EQ(identity(card("NVIDIA A100-SXM4-40GB", 0x20b0u, 108, 40536, true)).verdict, Verdict::Pass);
    // CUDA's total (NVML unreadable), 1.52% under nvidia-smi's 40960.
    EXPECT_EQ(identity(card("NVIDIA A100-SXM4-40GB", 0x20b0u, 108, 40339, true)).verdict, Verdict::Pass);
    EXPECT_EQ(identity(card("NVIDIA GeForce RTX 5090", 0x2b85u, 170, 32607, std::nullopt)).verdict, Verdict::Pass);
}

TEST(GpuIdentity, CardShortOfMemoryStillFails) {
    CheckResult r = identity(l40s(23028));  // a 24 GB card sold as an L40S 48GB
    EXPECT_EQ(r.verdict, Verdict::Fail);
    EXPECT_NE(r.summary.find("GPU 0 claims to be an L40S 48GB"), std::string::npos) << r.summary;
    EXPECT_NE(r.summary.find("23028 MiB"), std::string::npos) << r.summary;
    EXPECT_NE(r.summary.find("46068 MiB"), std::string::npos) << r.summary;
    // The ECC-on figure while the driver says ECC is off: 1/16 missing.
    EXPECT_EQ(identity(l40s(46068, false)).verdict, Verdict::Fail);
    // An 80GB SKU showing 40.
    CheckResult a = identity(card("NVIDIA A100-SXM4-80GB", 0x20b2u, 108, 40960, true));
    EXPECT_EQ(a.verdict, Verdict::Fail);
    EXPECT_NE(a.summary.find("smaller or cut-down"), std::string::npos) << a.summary;
    // More memory than the SKU has: a different part.
    CheckResult more = identity(card("NVIDIA L4", 0x27b8u, 58, 46068, true));
    EXPECT_EQ(more.verdict, Verdict::Fail);
    EXPECT_NE(more.summary.find("a different part"), std::string::npos) << more.summary;
}

TEST(GpuIdentity, MessageSaysWhatItClaimsAndWhatItsIdsShow) {
    // The name says H100 SXM, the PCI device id is an H800's.
    GpuInfo g = healthy_h100(4);
    g.pci_device_id = 0x2324u;
    CheckResult r = identity(g);
    EXPECT_EQ(r.verdict, Verdict::Fail);
    EXPECT_EQ(
        r.summary.rfind("GPU 4 claims to be an H100 SXM5 80GB (its name 'NVIDIA H100 80GB HBM3') but its PCI device id "
                        "0x2324 is an H800 SXM5 80GB",
                        0),
        0u)
        << r.summary;
    // An RTX 4090 whose name string says A100.
    GpuInfo rtx = card("NVIDIA A100-SXM4-80GB", 0x2684u, 128, 24564, false);
    CheckResult r2 = identity(rtx);
    EXPECT_EQ(r2.verdict, Verdict::Fail);
    EXPECT_NE(r2.summary.find("claims to be an A100 SXM4 80GB"), std::string::npos) << r2.summary;
    EXPECT_NE(r2.summary.find("0x2684 is a GeForce RTX 4090"), std::string::npos) << r2.summary;
    // SM count: the claim and what the count shows.
    GpuInfo cut = healthy_h100(1);
    cut.sm_count = 114;
    CheckResult r3 = identity(cut);
    EXPECT_NE(r3.summary.find("GPU 1 claims to be an H100 SXM5 80GB"), std::string::npos) << r3.summary;
    EXPECT_NE(r3.summary.find("has 114 SMs where an H100 SXM5 80GB has 132: a cut-down part"), std::string::npos)
        << r3.summary;
}

TEST(GpuIdentity, AnIsUsedBeforeAVowelSoundAndAElsewhere) {
    EXPECT_EQ(with_article("H100 SXM5 80GB"), "an H100 SXM5 80GB");
    EXPECT_EQ(with_article("L40S 48GB"), "an L40S 48GB");
    EXPECT_EQ(with_article("RTX A6000 48GB"), "an RTX A6000 48GB");
    EXPECT_EQ(with_article("A10 24GB"), "an A10 24GB");
    EXPECT_EQ(with_article("B200 180GB (HGX)"), "a B200 180GB (HGX)");
    EXPECT_EQ(with_article("GeForce RTX 4090"), "a GeForce RTX 4090");
    EXPECT_EQ(with_article("Tesla T4"), "a Tesla T4");
}
