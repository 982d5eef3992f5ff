// The checks drawn from the GPU inventory together (checks/gpu_inventory_check): one result per
// selected GPU, and the shared driver requirement they skip on.
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

TEST(GpuInventoryCheck, HealthyEightH100SxmAllPass) {
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

TEST(GpuInventoryCheck, NoDriverSkipsPointingAtTheDriverCheck) {
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

TEST(GpuInventoryCheck, GpuSelectionLimitsResults) {
    Fixture f;
    f.context.options.gpus = {2, 5};
    auto rs = run_one(std::make_unique<GpuHealthCheck>(), f.ctx());
    ASSERT_EQ(rs.size(), 2u);
    EXPECT_EQ(rs[0].gpu, 2);
    EXPECT_EQ(rs[1].gpu, 5);
}
