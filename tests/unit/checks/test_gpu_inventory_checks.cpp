// The checks drawn from the GPU inventory, over hand-built inventories: every verdict path.
#include <gtest/gtest.h>

#include "checks/gpu_requirements.hpp"

#include "core/runner.hpp"
#include "checks/gpu_driver.hpp"
#include "checks/gpu_health.hpp"
#include "checks/gpu_identity.hpp"
#include "checks/gpu_nvlink.hpp"
#include "checks/gpu_pcie_link.hpp"
#include "checks/gpu_tenancy.hpp"
#include "core/clock_reasons.hpp"
#include "gpu/identify.hpp"
#include "support/inventory_fixtures.hpp"
#include "order/order.hpp"

#include "support/check_helpers.hpp"

using namespace gpuvet;
using namespace gpuvet::testing;

namespace {

// Runs one check as the runner does (requirement first) and returns what it appended.
std::vector<CheckResult> run_one(std::unique_ptr<Check> c, CheckContext& ctx) {
    CheckList list;
    list.push_back(std::move(c));
    std::size_t before = ctx.report->checks.size();
    run_checks(list, ctx);
    return {ctx.report->checks.begin() + long(before), ctx.report->checks.end()};
}

CheckResult for_gpu(const std::vector<CheckResult>& rs, int gpu) {  // a copy: callers pass temporaries
    for (auto& r : rs)
        if (r.gpu == gpu) return r;
    throw std::runtime_error("no result for GPU " + std::to_string(gpu));
}

bool details_mention(const CheckResult& r, const std::string& word) {
    for (auto& f : r.findings)
        if (f.text.find(word) != std::string::npos) return true;
    for (auto& d : r.details)
        if (d.find(word) != std::string::npos) return true;
    return r.summary.find(word) != std::string::npos;
}

// gpu.tenancy with a given utilization window per GPU instead of NVML; GPUs not named read 0%
// ten times, as an idle GPU does.
std::unique_ptr<GpuTenancyCheck> tenancy(std::map<int, IdleUtilization> window = {}, bool mig_ordered = false) {
    return std::make_unique<GpuTenancyCheck>(
        4242,
        [window](CheckContext&, const std::vector<int>& gpus) {
            std::map<int, IdleUtilization> m;
            for (int i : gpus) {
                auto it = window.find(i);
                m[i] = it != window.end() ? it->second : IdleUtilization{std::vector<double>(10, 0.0), ""};
            }
            return m;
        },
        mig_ordered);
}

std::vector<std::unique_ptr<Check>> inventory_checks() {
    std::vector<std::unique_ptr<Check>> v;
    v.push_back(std::make_unique<GpuIdentityCheck>());
    v.push_back(tenancy());
    v.push_back(std::make_unique<GpuHealthCheck>());
    v.push_back(std::make_unique<GpuPcieLinkCheck>());
    v.push_back(std::make_unique<GpuNvlinkCheck>());
    return v;
}

}  // namespace

TEST(GpuChecks, HealthyEightH100SxmAllPass) {
    Fixture f;
    auto checks = inventory_checks();
    run_checks(checks, f.ctx());
    ASSERT_EQ(f.report.checks.size(), 5u * 8u);
    for (auto& r : f.report.checks) {
        EXPECT_EQ(r.verdict, Verdict::Pass) << r.key << " GPU " << r.gpu.value_or(-1) << ": " << r.summary;
        EXPECT_TRUE(r.gpu.has_value());
        EXPECT_FALSE(r.summary.empty());
        bool sourced = false;
        for (auto& m : r.measurements) sourced = sourced || (m.reference && !m.reference->source.empty());
        EXPECT_TRUE(sourced) << r.key << " has no measurement with a sourced reference";
    }
    // The run's facts identify each GPU once; the report's GPU list carries the SKU.
    auto gpus = f.facts->gpu_summaries();
    ASSERT_EQ(gpus.size(), 8u);
    EXPECT_EQ(gpus[3].sku.value_or(""), "h100-sxm5-80gb");
    EXPECT_EQ(gpus[3].sku_match.value_or(""), "pci-device-id");
    f.report.finalize();
    EXPECT_EQ(f.report.exit_code, 0);
}

TEST(GpuChecks, NoDriverSkipsPointingAtTheDriverCheck) {
    Fixture f;
    f.report.machine.driver.present = false;
    f.report.machine.driver.absent_reason = "libcuda.so.1 could not be loaded";
    for (auto& c : inventory_checks()) {
        auto rs = run_one(std::move(c), f.ctx());
        ASSERT_EQ(rs.size(), 1u);
        EXPECT_EQ(rs[0].verdict, Verdict::Skip);
        // gpu.driver carries the loader's reason; the others point at it instead of repeating it.
        EXPECT_EQ(rs[0].summary, "no NVIDIA driver found (see gpu.driver)");
    }
    auto full = gpu_requirement(f.ctx(), GpuNeed::Inventory, true);
    ASSERT_TRUE(full.has_value());
    EXPECT_EQ(*full, "no NVIDIA driver found (libcuda.so.1 could not be loaded)");
}

TEST(GpuChecks, GpuSelectionLimitsResults) {
    Fixture f;
    f.context.options.gpus = {2, 5};
    auto rs = run_one(std::make_unique<GpuHealthCheck>(), f.ctx());
    ASSERT_EQ(rs.size(), 2u);
    EXPECT_EQ(rs[0].gpu, 2);
    EXPECT_EQ(rs[1].gpu, 5);
}

// --- gpu.identity ---------------------------------------------------------------------------

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

// --- gpu.tenancy ----------------------------------------------------------------------------

TEST(GpuTenancy, ForeignProcessHoldingMemoryFails) {
    Fixture f;
    GpuProcess p;
    p.pid = 98765;  // a host PID, not visible in this container: no name
    p.used_memory_bytes = std::uint64_t(20) << 30;
    p.type = "compute";
    f.gpu(0).processes.push_back(p);
    f.gpu(0).memory_used_bytes = std::uint64_t(20) << 30;
    const CheckResult& r = for_gpu(run_one(tenancy(), f.ctx()), 0);
    EXPECT_EQ(r.verdict, Verdict::Fail);
    EXPECT_TRUE(details_mention(r, "20.0 GiB"));
    EXPECT_TRUE(details_mention(r, "98765"));
    EXPECT_EQ(find(r, "foreign_processes")->value, 1);
}

// The references say what the verdict says: a JSON reader that grades each measurement by its
// reference finds no verdict worse than the check's own.
TEST(GpuTenancy, ReferencesGradeAsTheVerdict) {
    for (const char* type : {"graphics", "compute"}) {
        Fixture f;
        GpuProcess p;
        p.pid = 98765;
        p.type = type;
        f.gpu(0).processes.push_back(p);
        const CheckResult& r = for_gpu(run_one(tenancy(), f.ctx()), 0);
        const Verdict expected = std::string(type) == "graphics" ? Verdict::Warn : Verdict::Fail;
        EXPECT_EQ(r.verdict, expected) << type;
        Verdict graded = Verdict::Pass;
        for (const Measurement& m : r.measurements)
            if (m.value && m.reference) graded = worst(graded, grade(*m.value, *m.reference));
        EXPECT_EQ(graded, expected) << type;
        EXPECT_EQ(find(r, "foreign_compute_processes")->value, std::string(type) == "compute" ? 1 : 0);
    }
}

TEST(GpuTenancy, OwnProcessIsNotForeign) {
    Fixture f;
    GpuProcess p;
    p.pid = 4242;
    p.name = "gpuvet";
    p.used_memory_bytes = std::uint64_t(500) << 20;
    f.gpu(0).processes.push_back(p);
    EXPECT_EQ(for_gpu(run_one(tenancy(), f.ctx()), 0).verdict, Verdict::Pass);
}

TEST(GpuTenancy, MemoryUsedWithNoVisibleProcessWarns) {
    Fixture f;
    f.gpu(0).memory_used_bytes = std::uint64_t(6) << 30;
    const CheckResult& r = for_gpu(run_one(tenancy(), f.ctx()), 0);
    EXPECT_EQ(r.verdict, Verdict::Warn);
    EXPECT_TRUE(details_mention(r, "not visible here"));
}

TEST(GpuTenancy, MigEnabledFailsUnlessOrdered) {
    Fixture f;
    f.gpu(0).mig_enabled = true;
    EXPECT_EQ(for_gpu(run_one(tenancy(), f.ctx()), 0).verdict, Verdict::Fail);
    const CheckResult& r = for_gpu(run_one(tenancy({}, /*mig_ordered=*/true), f.ctx()), 0);
    EXPECT_EQ(r.verdict, Verdict::Warn);  // still said: whole-GPU figures do not apply
    EXPECT_TRUE(details_mention(r, "MIG"));
}

TEST(GpuTenancy, ExclusiveComputeWarnsAndProhibitedFails) {
    Fixture f;
    f.gpu(0).compute_mode = std::string("Exclusive_Process");
    f.gpu(1).compute_mode = std::string("Prohibited");
    auto rs = run_one(tenancy(), f.ctx());
    EXPECT_EQ(for_gpu(rs, 0).verdict, Verdict::Warn);
    EXPECT_EQ(for_gpu(rs, 1).verdict, Verdict::Fail);
}

TEST(GpuTenancy, VgpuWarns) {
    Fixture f;
    f.gpu(0).virtualization_mode = std::string("vGPU");
    EXPECT_EQ(for_gpu(run_one(tenancy(), f.ctx()), 0).verdict, Verdict::Warn);
}

TEST(GpuTenancy, BusyWithNoProcessFailsThatGpuOnly) {
    Fixture f;
    auto rs = run_one(tenancy({{3, {std::vector<double>(10, 85.0), ""}}}), f.ctx());
    ASSERT_EQ(rs.size(), 8u);
    for (auto& r : rs) {
        if (r.gpu == 3) continue;
        EXPECT_EQ(r.verdict, Verdict::Pass) << r.gpu.value_or(-1) << ": " << r.summary;
        EXPECT_EQ(find(r, "idle_utilization_mean_pct")->value, 0);
    }
    const CheckResult r = for_gpu(rs, 3);
    EXPECT_EQ(r.verdict, Verdict::Fail);
    EXPECT_NE(r.summary.find("busy (mean 85%, max 85%) but shows no process"), std::string::npos) << r.summary;
    EXPECT_EQ(find(r, "idle_utilization_mean_pct")->value, 85);
    EXPECT_EQ(find(r, "idle_utilization_max_pct")->value, 85);
    EXPECT_EQ(find(r, "idle_utilization_max_pct")->unit, "%");
}

TEST(GpuTenancy, BusyWithAVisibleProcessOnlyAddsTheFigures) {
    Fixture f;
    GpuProcess p;
    p.pid = 98765;
    p.used_memory_bytes = std::uint64_t(20) << 30;
    f.gpu(2).processes.push_back(p);
    const CheckResult r = for_gpu(run_one(tenancy({{2, {std::vector<double>(10, 37.0), ""}}}), f.ctx()), 2);
    EXPECT_EQ(r.verdict, Verdict::Fail);
    EXPECT_NE(r.summary.find("other compute process"), std::string::npos) << r.summary;
    EXPECT_FALSE(details_mention(r, "shows no process"));
    EXPECT_EQ(find(r, "idle_utilization_mean_pct")->value, 37);
}

TEST(GpuTenancy, UtilizationUnreadableIsAbsentWithTheReason) {
    Fixture f;
    const CheckResult r = for_gpu(run_one(tenancy({{0, {{}, "not supported by this GPU"}}}), f.ctx()), 0);
    EXPECT_EQ(r.verdict, Verdict::Pass);
    const Measurement* m = find(r, "idle_utilization_mean_pct");
    ASSERT_NE(m, nullptr);
    EXPECT_FALSE(m->present());
    EXPECT_EQ(m->absent_reason, "not supported by this GPU");
    EXPECT_FALSE(find(r, "idle_utilization_max_pct")->present());
}

TEST(GpuTenancy, OnlySelectedLiveGpusAreSampled) {
    Fixture f;
    f.context.options.gpus = {1, 2, 5};
    f.gpu(2).lost = true;
    std::vector<int> asked;
    auto check = std::make_unique<GpuTenancyCheck>(4242, [&asked](CheckContext&, const std::vector<int>& gpus) {
        asked = gpus;
        return std::map<int, IdleUtilization>{};
    });
    run_one(std::move(check), f.ctx());
    EXPECT_EQ(asked, (std::vector<int>{1, 5}));
}

// --- gpu.health -----------------------------------------------------------------------------

TEST(GpuHealth, PendingRowRemapFails) {
    Fixture f;
    f.gpu(2).remap_pending = true;
    const CheckResult& r = for_gpu(run_one(std::make_unique<GpuHealthCheck>(), f.ctx()), 2);
    EXPECT_EQ(r.verdict, Verdict::Fail);
    EXPECT_TRUE(details_mention(r, "remap is pending"));
}

TEST(GpuHealth, MemoryErrorFloors) {
    Fixture f;
    f.gpu(0).remap_failure = true;
    f.gpu(1).remapped_rows_uncorrectable = 513u;
    f.gpu(2).remapped_rows_uncorrectable = 512u;  // at the floor: not above it
    f.gpu(3).ecc.volatile_uncorrected = std::uint64_t(1);
    f.gpu(4).retired_pages_pending = true;
    f.gpu(5).retired_pages_double_bit = 2u;
    f.gpu(6).ecc_enabled = false;
    auto rs = run_one(std::make_unique<GpuHealthCheck>(), f.ctx());
    EXPECT_EQ(for_gpu(rs, 0).verdict, Verdict::Fail);
    EXPECT_EQ(for_gpu(rs, 1).verdict, Verdict::Fail);
    EXPECT_EQ(for_gpu(rs, 2).verdict, Verdict::Pass);
    EXPECT_EQ(for_gpu(rs, 3).verdict, Verdict::Fail);
    EXPECT_EQ(for_gpu(rs, 4).verdict, Verdict::Fail);
    EXPECT_EQ(for_gpu(rs, 5).verdict, Verdict::Warn);
    EXPECT_EQ(for_gpu(rs, 6).verdict, Verdict::Warn);
    EXPECT_EQ(for_gpu(rs, 7).verdict, Verdict::Pass);
}

TEST(GpuHealth, SwPowerCapAloneIsNormal) {
    Fixture f;
    f.gpu(0).clock_event_reasons = clock_reason::kSwPowerCap;
    EXPECT_EQ(for_gpu(run_one(std::make_unique<GpuHealthCheck>(), f.ctx()), 0).verdict, Verdict::Pass);
}

TEST(GpuHealth, HwSlowdownWithPowerCapFails) {
    Fixture f;
    f.gpu(0).clock_event_reasons = clock_reason::kHwSlowdown | clock_reason::kSwPowerCap;
    f.gpu(1).clock_event_reasons = clock_reason::kSwThermalSlowdown | clock_reason::kGpuIdle;
    auto rs = run_one(std::make_unique<GpuHealthCheck>(), f.ctx());
    const CheckResult& r = for_gpu(rs, 0);
    EXPECT_EQ(r.verdict, Verdict::Fail);
    EXPECT_TRUE(details_mention(r, "HW_SLOWDOWN"));
    EXPECT_FALSE(r.summary.find("SW_POWER_CAP") != std::string::npos) << "only the failing reasons are blamed";
    EXPECT_EQ(for_gpu(rs, 1).verdict, Verdict::Fail);
}

TEST(GpuHealth, PersistencePowerLimitAndTemperatureWarn) {
    Fixture f;
    f.gpu(0).persistence_mode = false;
    f.gpu(1).power_enforced_limit_w = 500.0;
    f.gpu(2).temperature_c = 80;              // slowdown at 87
    f.gpu(3).power_enforced_limit_w = 699.5;  // rounding, not a lower limit
    auto rs = run_one(std::make_unique<GpuHealthCheck>(), f.ctx());
    EXPECT_EQ(for_gpu(rs, 0).verdict, Verdict::Warn);
    EXPECT_TRUE(details_mention(for_gpu(rs, 0), "first CUDA call"));
    EXPECT_EQ(for_gpu(rs, 1).verdict, Verdict::Warn);
    EXPECT_EQ(for_gpu(rs, 2).verdict, Verdict::Warn);
    EXPECT_EQ(for_gpu(rs, 3).verdict, Verdict::Pass);
}

TEST(GpuHealth, AbsentFactsAreAbsentNotZero) {
    Fixture f;
    f.gpu(0).remapped_rows_uncorrectable = Fact<std::uint32_t>::absent("not supported");
    const CheckResult& r = for_gpu(run_one(std::make_unique<GpuHealthCheck>(), f.ctx()), 0);
    const Measurement* m = find(r, "remapped_rows_uncorrectable");
    ASSERT_NE(m, nullptr);
    EXPECT_FALSE(m->present());
    EXPECT_EQ(m->absent_reason, "not supported");
}

// --- gpu.pcie_link --------------------------------------------------------------------------

TEST(GpuPcieLink, TrainedDownToX8Fails) {
    Fixture f;
    f.gpu(3).pcie_width_current = 8;
    const CheckResult& r = for_gpu(run_one(std::make_unique<GpuPcieLinkCheck>(), f.ctx()), 3);
    EXPECT_EQ(r.verdict, Verdict::Fail);
    EXPECT_TRUE(details_mention(r, "x8"));
    EXPECT_TRUE(details_mention(r, "half"));
}

TEST(GpuPcieLink, LowerGenerationAtIdleOnlyWarns) {
    Fixture f;
    f.gpu(0).pcie_gen_current = 1;
    const CheckResult& r = for_gpu(run_one(std::make_unique<GpuPcieLinkCheck>(), f.ctx()), 0);
    EXPECT_EQ(r.verdict, Verdict::Warn);
    EXPECT_TRUE(details_mention(r, "idle"));
}

TEST(GpuPcieLink, HostMaximumLimitsTheExpectation) {
    Fixture f;
    f.gpu(0).pcie_gen_max_host = 4;
    f.gpu(0).pcie_gen_current = 4;
    EXPECT_EQ(for_gpu(run_one(std::make_unique<GpuPcieLinkCheck>(), f.ctx()), 0).verdict, Verdict::Pass);
    // Host maximum unknown: held against the GPU's maximum, and said so.
    f.gpu(1).pcie_gen_max_host = Fact<int>::absent("not supported");
    f.gpu(1).pcie_gen_current = 4;
    const CheckResult& r = for_gpu(run_one(std::make_unique<GpuPcieLinkCheck>(), f.ctx()), 1);
    EXPECT_EQ(r.verdict, Verdict::Warn);
    EXPECT_TRUE(details_mention(r, "host's maximum is unknown"));
}

// --- gpu.nvlink -----------------------------------------------------------------------------

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

TEST(GpuDriver, CudaVersionAgainstWhatCurrentBuildsNeed) {
    EXPECT_EQ(cuda_support(11080).verdict, Verdict::Warn);  // R520: CUDA 11.8
    EXPECT_NE(cuda_support(11080).advice.find("525 or newer"), std::string::npos);
    EXPECT_EQ(cuda_support(12000).verdict, Verdict::Pass);  // R525
    EXPECT_NE(cuda_support(12080).advice.find("580"), std::string::npos);
    EXPECT_EQ(cuda_support(13000).verdict, Verdict::Pass);
    EXPECT_TRUE(cuda_support(13000).advice.empty());
}
