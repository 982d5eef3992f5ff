// gpu.driver: the CUDA version the driver supports against what current builds need.
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

TEST(GpuDriver, CudaVersionAgainstWhatCurrentBuildsNeed) {
    EXPECT_EQ(cuda_support(11080).verdict, Verdict::Warn);  // R520: CUDA 11.8
    EXPECT_NE(cuda_support(11080).advice.find("525 or newer"), std::string::npos);
    EXPECT_EQ(cuda_support(12000).verdict, Verdict::Pass);  // R525
    EXPECT_NE(cuda_support(12080).advice.find("580"), std::string::npos);
    EXPECT_EQ(cuda_support(13000).verdict, Verdict::Pass);
    EXPECT_TRUE(cuda_support(13000).advice.empty());
}
