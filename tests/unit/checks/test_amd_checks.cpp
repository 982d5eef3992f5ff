// The kernel-free checks on AMD GPUs, over hand-built inventories: gpu.identity (compute units, gfx
// target, partitions), gpu.tenancy (partition modes against the order), gpu.health (RAS, bad pages,
// throttle bits), gpu.nvlink (xGMI), gpu.driver, the checks that need CUDA, and the spec database's
// AMD rows (vendor-aware ids, a two-die MI250X per die).
#include <gtest/gtest.h>

#include "checks/gpu_driver.hpp"
#include "checks/gpu_health.hpp"
#include "checks/gpu_identity.hpp"
#include "checks/gpu_nvlink.hpp"
#include "checks/gpu_requirements.hpp"
#include "checks/gpu_tenancy.hpp"
#include "checks/order_gpus.hpp"
#include "core/runner.hpp"
#include "gpu/identify.hpp"
#include "support/inventory_fixtures.hpp"
#include "specs/driver_memory.hpp"

using namespace gpuvet;
using namespace gpuvet::testing;

namespace {

struct AmdFixture : Fixture {
    AmdFixture(int n = 8) : Fixture(healthy_amd_box(n)) {
        report.machine.driver = DriverInfo{};
        report.machine.driver.present = true;
        report.machine.driver.amd_present = true;
        report.machine.driver.amd_driver_version = "6.10.5";
        report.machine.driver.amd_library = "AMD SMI 24.7.1.0";
        report.machine.driver.absent_reason = "";
        report.machine.driver.cuda_absent_reason = "libcuda.so.1 could not be loaded";
    }
};

std::vector<CheckResult> run_one(std::unique_ptr<Check> c, CheckContext& ctx) {
    CheckList list;
    list.push_back(std::move(c));
    std::size_t before = ctx.report->checks.size();
    run_checks(list, ctx);
    return {ctx.report->checks.begin() + long(before), ctx.report->checks.end()};
}

CheckResult for_gpu(const std::vector<CheckResult>& rs, int gpu) {
    for (auto& r : rs)
        if (r.gpu == gpu) return r;
    throw std::runtime_error("no result for GPU " + std::to_string(gpu));
}

std::string all_text(const CheckResult& r) {
    std::string t = r.summary;
    for (auto& f : r.findings) t += " | " + f.text;
    for (auto& d : r.details) t += " | " + d;
    return t;
}

std::unique_ptr<GpuTenancyCheck> tenancy(bool partitions_ordered = false) {
    return std::make_unique<GpuTenancyCheck>(
        4242,
        [](CheckContext&, const std::vector<int>& gpus) {
            std::map<int, IdleUtilization> m;
            for (int i : gpus) m[i] = IdleUtilization{std::vector<double>(10, 0.0), ""};
            return m;
        },
        partitions_ordered);
}

}  // namespace

TEST(AmdChecks, HealthyMi300xBoxPassesEveryKernelFreeCheck) {
    AmdFixture f;
    std::vector<std::unique_ptr<Check>> checks;
    checks.push_back(std::make_unique<GpuIdentityCheck>());
    checks.push_back(tenancy());
    checks.push_back(std::make_unique<GpuHealthCheck>());
    checks.push_back(std::make_unique<GpuNvlinkCheck>());
    for (auto& c : checks)
        for (const CheckResult& r : run_one(std::move(c), f.ctx()))
            EXPECT_EQ(r.verdict, Verdict::Pass) << r.key << ": " << all_text(r);
    CheckResult id = for_gpu(run_one(std::make_unique<GpuIdentityCheck>(), f.ctx()), 0);
    EXPECT_NE(id.summary.find("compute-unit count"), std::string::npos) << id.summary;
    CheckResult nv = for_gpu(run_one(std::make_unique<GpuNvlinkCheck>(), f.ctx()), 0);
    EXPECT_NE(nv.summary.find("7 of 7 xGMI links active"), std::string::npos) << nv.summary;
    CheckResult ten = for_gpu(run_one(tenancy(), f.ctx()), 0);
    EXPECT_NE(all_text(ten).find("not judged on AMD: compute mode, MIG"), std::string::npos) << all_text(ten);
    CheckResult h = for_gpu(run_one(std::make_unique<GpuHealthCheck>(), f.ctx()), 0);
    EXPECT_NE(all_text(h).find("not judged on AMD: persistence mode"), std::string::npos);
}

TEST(AmdChecks, IdentityFailsOnOtherComputeUnitsOrGfxTarget) {
    AmdFixture f;
    f.gpu(1).compute_units = 80;  // an MI308X's, under an MI300X's name and id
    f.gpu(2).gfx_target = std::string("gfx90a");
    auto rs = run_one(std::make_unique<GpuIdentityCheck>(), f.ctx());
    CheckResult cut = for_gpu(rs, 1);
    EXPECT_EQ(cut.verdict, Verdict::Fail);
    EXPECT_NE(cut.summary.find("80 compute units where an Instinct MI300X has 304: a cut-down part"), std::string::npos)
        << cut.summary;
    CheckResult chip = for_gpu(rs, 2);
    EXPECT_EQ(chip.verdict, Verdict::Fail);
    EXPECT_NE(chip.summary.find("gfx target is gfx90a where an Instinct MI300X is gfx942"), std::string::npos);
    EXPECT_EQ(for_gpu(rs, 0).verdict, Verdict::Pass);
}

TEST(AmdChecks, AnAmdIdIsNotLookedUpAmongNvidiaIds) {
    // 0x74a1 is the MI300X's AMD id; the same number under NVIDIA's vendor id names nothing.
    EXPECT_EQ(spec_db().by_pci_device_id(0x74a1, kPciVendorAmd).size(), 1u);
    EXPECT_TRUE(spec_db().by_pci_device_id(0x74a1, kPciVendorNvidia).empty());
    EXPECT_TRUE(spec_db().by_pci_device_id(0x2330, kPciVendorAmd).empty());
    EXPECT_EQ(spec_db().by_pci_device_id(0x2330).front()->key, "h100-sxm5-80gb");
}

TEST(AmdChecks, SpecRowsForTheAmdSkus) {
    for (const char* q : {"MI300X", "mi325x", "MI250X", "mi210", "MI100", "W7900", "Radeon PRO W7900"}) {
        auto m = spec_db().try_match(q);
        ASSERT_TRUE(m) << q;
        EXPECT_EQ(m->spec->vendor, "AMD") << q;
        EXPECT_FALSE(m->spec->gfx_target.empty()) << q;
        EXPECT_TRUE(m->spec->compute_units.has_value()) << q;
        EXPECT_FALSE(m->spec->source.empty()) << q;
    }
    const GpuSpec& mi250x = *spec_db().by_key("mi250x");
    EXPECT_EQ(mi250x.devices_per_board, 2);
    EXPECT_DOUBLE_EQ(mi250x.memory_per_device_gib(), 64);
    EXPECT_EQ(mi250x.compute_units_per_device().value_or(0), 110);
    // Each die shows 65520 MiB: within the per-die expectation.
    DriverMemoryExpectation e = expected_driver_memory(mi250x, true);
    EXPECT_DOUBLE_EQ(e.expected_mib, 65520);
    EXPECT_EQ(spec_db().by_key("mi300x")->driver_memory_ecc_on_mib.value_or(0), 196592);
}

TEST(AmdChecks, PartitionsFailTenancyUnlessOrderedAndIdentityJudgesTheShare) {
    AmdFixture f;
    for (auto& g : f.inventory.gpus) {
        g.compute_partition = std::string("CPX");
        g.memory_partition = std::string("NPS4");
        g.memory_total_bytes = std::uint64_t(25767706624);
        g.compute_units = 38;
    }
    CheckResult ten = for_gpu(run_one(tenancy(), f.ctx()), 0);
    EXPECT_EQ(ten.verdict, Verdict::Fail);
    EXPECT_NE(ten.summary.find("partitioned CPX/NPS4"), std::string::npos) << ten.summary;
    EXPECT_EQ(for_gpu(run_one(tenancy(true), f.ctx()), 0).verdict, Verdict::Warn);
    CheckResult id = for_gpu(run_one(std::make_unique<GpuIdentityCheck>(), f.ctx()), 0);
    EXPECT_EQ(id.verdict, Verdict::Pass) << all_text(id);
    EXPECT_NE(id.summary.find("CPX partition of an Instinct MI300X"), std::string::npos) << id.summary;
    // NPS4 alone (SPX compute) is one GPU whose memory is split in NUMA domains: a warning.
    AmdFixture g;
    g.gpu(0).memory_partition = std::string("NPS4");
    EXPECT_EQ(for_gpu(run_one(tenancy(), g.ctx()), 0).verdict, Verdict::Warn);
}

TEST(AmdChecks, HealthRasBadPagesThrottleAndCap) {
    AmdFixture f;
    f.gpu(0).ras_blocks[0].uncorrectable = std::uint64_t(1);  // UMC
    f.gpu(1).ras_blocks[3].correctable = std::uint64_t(2);    // XGMI_WAFL: noted, not judged
    f.gpu(2).bad_pages_pending = 1u;
    f.gpu(3).bad_pages_retired = 3u;
    f.gpu(4).amd_throttle_status = std::uint64_t(1) << 36;  // TEMP_HOTSPOT
    f.gpu(5).amd_throttle_status = std::uint64_t(1);        // PPT0: the limiter working
    f.gpu(6).power_enforced_limit_w = 600.0;
    f.gpu(7).ras_blocks[1].deferred = std::uint64_t(4);  // SDMA
    auto rs = run_one(std::make_unique<GpuHealthCheck>(), f.ctx());
    EXPECT_EQ(for_gpu(rs, 0).verdict, Verdict::Fail);
    EXPECT_NE(for_gpu(rs, 0).summary.find("uncorrectable error(s) in UMC (HBM memory)"), std::string::npos);
    EXPECT_EQ(for_gpu(rs, 1).verdict, Verdict::Pass);
    EXPECT_NE(all_text(for_gpu(rs, 1)).find("2 corrected error(s) in XGMI_WAFL"), std::string::npos);
    EXPECT_EQ(for_gpu(rs, 2).verdict, Verdict::Fail);
    EXPECT_EQ(for_gpu(rs, 3).verdict, Verdict::Warn);
    EXPECT_EQ(for_gpu(rs, 4).verdict, Verdict::Fail);
    EXPECT_NE(for_gpu(rs, 4).summary.find("TEMP_HOTSPOT"), std::string::npos);
    EXPECT_EQ(for_gpu(rs, 5).verdict, Verdict::Pass);
    EXPECT_EQ(for_gpu(rs, 6).verdict, Verdict::Warn);
    EXPECT_NE(for_gpu(rs, 6).summary.find("below the default 750 W"), std::string::npos);
    EXPECT_EQ(for_gpu(rs, 7).verdict, Verdict::Fail);
}

TEST(AmdChecks, XgmiLinkDownOrMissingFails) {
    AmdFixture f;
    f.gpu(3).xgmi_links[4].active = false;  // to GPU 5
    f.gpu(4).xgmi_links.pop_back();
    auto rs = run_one(std::make_unique<GpuNvlinkCheck>(), f.ctx());
    EXPECT_EQ(for_gpu(rs, 3).verdict, Verdict::Fail);
    EXPECT_NE(for_gpu(rs, 3).summary.find("0000:15:00.0 did not train"), std::string::npos) << for_gpu(rs, 3).summary;
    EXPECT_EQ(for_gpu(rs, 4).verdict, Verdict::Fail);
    EXPECT_EQ(for_gpu(rs, 0).verdict, Verdict::Pass);
    // A Radeon PRO W7900 has no Infinity Fabric links: nothing to judge.
    AmdFixture w(1);
    w.gpu(0).name = std::string("AMD Radeon PRO W7900");
    w.gpu(0).pci_device_id = 0x7448u;
    EXPECT_EQ(for_gpu(run_one(std::make_unique<GpuNvlinkCheck>(), w.ctx()), 0).verdict, Verdict::Skip);
}

TEST(AmdChecks, DriverAndTheChecksThatNeedCuda) {
    AmdFixture f;
    CheckResult d = run_one(std::make_unique<GpuDriverCheck>(), f.ctx()).front();
    EXPECT_EQ(d.verdict, Verdict::Pass);
    EXPECT_EQ(d.summary, "AMD amdgpu driver loaded, version 6.10.5, read through AMD SMI 24.7.1.0.");
    auto why = gpu_requirement(f.ctx(), GpuNeed::Cuda);
    ASSERT_TRUE(why);
    EXPECT_EQ(why->rfind("not judged on AMD: this check runs CUDA kernels", 0), 0u) << *why;
    // Neither vendor: both reasons, in the words the report prints.
    Fixture none;
    none.report.machine.driver = DriverInfo{};
    none.report.machine.driver.absent_reason = "libcuda.so.1 could not be loaded";
    none.report.machine.driver.amd_absent_reason = "libamd_smi.so could not be loaded";
    none.inventory.gpus.clear();
    EXPECT_EQ(
        *gpu_requirement(none.ctx(), GpuNeed::Inventory, true),
        "no GPU driver found: NVIDIA (libcuda.so.1 could not be loaded), AMD (libamd_smi.so could not be loaded)");
    CheckResult skip = run_one(std::make_unique<GpuDriverCheck>(), none.ctx()).front();
    EXPECT_EQ(skip.verdict, Verdict::Skip);
    EXPECT_EQ(skip.summary, *gpu_requirement(none.ctx(), GpuNeed::Inventory, true));
}

TEST(AmdChecks, OrderCountsTheDiesOfAMultiDieBoard) {
    std::vector<GpuInfo> dies(8);
    EXPECT_EQ(verify_gpu_count(4, dies, std::nullopt, 2).verdict, Verdict::Pass);
    EXPECT_EQ(verify_gpu_count(8, dies, std::nullopt, 2).verdict, Verdict::Fail);
    EXPECT_EQ(verify_gpu_count(8, dies, std::nullopt).verdict, Verdict::Pass);
}
