// The link-rate arithmetic gpu.h2d_d2h and gpu.p2p grade against.
#include <gtest/gtest.h>

#include "checks/gpu_h2d_d2h.hpp"
#include "checks/gpu_p2p.hpp"
#include "specs/pcie.hpp"

using namespace gpuvet::measure;
using gpuvet::pcie_gbps_per_direction;

// specs/pcie: the one table every layer takes lane rates from (the run rules' Gen6 figure used to
// be Gen5 doubled, 7.877, where FLIT mode carries 8 × 242/256 = 7.5625 GB/s).
TEST(MeasureRates, PcieRatePerDirection) {
    EXPECT_NEAR(*pcie_gbps_per_direction(5, 16), 63.008, 1e-9);
    EXPECT_NEAR(*pcie_gbps_per_direction(4, 16), 31.504, 1e-9);
    EXPECT_NEAR(*pcie_gbps_per_direction(3, 8), 7.88, 1e-9);
    EXPECT_NEAR(*pcie_gbps_per_direction(6, 16), 121.0, 1e-9);
    EXPECT_FALSE(pcie_gbps_per_direction(7, 16));
    EXPECT_FALSE(pcie_gbps_per_direction(0, 16));
    EXPECT_FALSE(pcie_gbps_per_direction(5, 0));
}

TEST(MeasureRates, NvlinkLabelAndPairRate) {
    EXPECT_EQ(nvlink_count_of("NV18"), 18);
    EXPECT_EQ(nvlink_count_of("NV4"), 4);
    EXPECT_EQ(nvlink_count_of("PXB"), 0);
    EXPECT_EQ(nvlink_count_of("NV"), 0);
    EXPECT_EQ(nvlink_count_of("NVx"), 0);
    EXPECT_DOUBLE_EQ(nvlink_pair_gbps(900, 18, 18), 450);  // H100 SXM through NVSwitch
    EXPECT_DOUBLE_EQ(nvlink_pair_gbps(600, 4, 12), 100);   // 4 of an A100's 12 links
    EXPECT_DOUBLE_EQ(nvlink_pair_gbps(600, 4, 0), 300);    // link count unknown: all of them
}
