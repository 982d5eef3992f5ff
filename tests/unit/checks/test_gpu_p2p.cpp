// The NVLink arithmetic gpu.p2p grades against: links named in the topology, a pair's rate.
#include <gtest/gtest.h>

#include "checks/gpu_p2p.hpp"

using namespace gpuvet::measure;

TEST(GpuP2p, NvlinkLabelCountsLinksAndAPairGetsItsLinksShareOfTheBandwidth) {
    EXPECT_EQ(nvlink_count_of("NV18"), 18);
    EXPECT_EQ(nvlink_count_of("NV4"), 4);
    EXPECT_EQ(nvlink_count_of("PXB"), 0);
    EXPECT_EQ(nvlink_count_of("NV"), 0);
    EXPECT_EQ(nvlink_count_of("NVx"), 0);
    EXPECT_DOUBLE_EQ(nvlink_pair_gbps(900, 18, 18), 450);  // H100 SXM through NVSwitch
    EXPECT_DOUBLE_EQ(nvlink_pair_gbps(600, 4, 12), 100);   // 4 of an A100's 12 links
    EXPECT_DOUBLE_EQ(nvlink_pair_gbps(600, 4, 0), 300);    // link count unknown: all of them
}
