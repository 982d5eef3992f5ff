// gpu.pcie_link over hand-built inventories: every verdict path.
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
