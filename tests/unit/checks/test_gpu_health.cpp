// gpu.health over hand-built inventories: every verdict path.
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

TEST(GpuHealth, PendingRowRemapFails) {
    Fixture f;
    f.gpu(2).remap_pending = true;
    const CheckResult& r = for_gpu(run_one(std::make_unique<GpuHealthCheck>(), f.ctx()), 2);
    EXPECT_EQ(r.verdict, Verdict::Fail);
    EXPECT_TRUE(details_mention(r, "remap is pending"));
}

TEST(GpuHealth, MemoryErrorsAboveTheirFloorsFailAndRetiredPagesOrEccOffWarn) {
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
