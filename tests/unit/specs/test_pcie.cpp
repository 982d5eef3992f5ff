// specs/pcie: the PCIe lane rates gpu.h2d_d2h grades against.
#include <gtest/gtest.h>

#include "specs/pcie.hpp"

using gpuvet::pcie_gbps_per_direction;

// specs/pcie: the one table every layer takes lane rates from (the run rules' Gen6 figure used to
// be Gen5 doubled, 7.877, where FLIT mode carries 8 × 242/256 = 7.5625 GB/s).
TEST(Pcie, RatePerDirectionFollowsTheGenerationAndLanesAndUnknownOnesHaveNone) {
    EXPECT_NEAR(*pcie_gbps_per_direction(5, 16), 63.008, 1e-9);
    EXPECT_NEAR(*pcie_gbps_per_direction(4, 16), 31.504, 1e-9);
    EXPECT_NEAR(*pcie_gbps_per_direction(3, 8), 7.88, 1e-9);
    EXPECT_NEAR(*pcie_gbps_per_direction(6, 16), 121.0, 1e-9);
    EXPECT_FALSE(pcie_gbps_per_direction(7, 16));
    EXPECT_FALSE(pcie_gbps_per_direction(0, 16));
    EXPECT_FALSE(pcie_gbps_per_direction(5, 0));
}
