// gpu.tenancy over hand-built inventories: every verdict path.
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
