// SampleHistory: bounded, recent samples at full rate, older ones thinned, the first kept.
#include <gtest/gtest.h>

#include "core/sample_history.hpp"

using namespace gpuvet;

TEST(SampleHistory, KeepsEverythingUntilFull) {
    SampleHistory<int> h(8);
    for (int i = 0; i < 8; ++i) h.push(i);
    EXPECT_EQ(h.items(), (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));
    EXPECT_EQ(h.thinned(), 0u);
}

TEST(SampleHistory, AtCapacityTheOlderHalfIsThinned) {
    SampleHistory<int> h(8);
    for (int i = 0; i < 9; ++i) h.push(i);
    EXPECT_EQ(h.items(), (std::vector<int>{0, 2, 4, 5, 6, 7, 8}));
    EXPECT_EQ(h.thinned(), 2u);
}

TEST(SampleHistory, StaysBoundedOverALongRun) {
    SampleHistory<int> h(64);
    for (int i = 0; i < 100000; ++i) h.push(i);
    EXPECT_LE(h.size(), 64u);
    EXPECT_EQ(h.items().front(), 0);  // the start of the run
    EXPECT_EQ(h.back(), 99999);       // and its end
    for (std::size_t i = 1; i < h.size(); ++i) EXPECT_LT(h.items()[i - 1], h.items()[i]);
    // The newest quarter is at full rate.
    for (std::size_t i = h.size() - 16; i < h.size(); ++i) EXPECT_EQ(h.items()[i], h.items()[i - 1] + 1);
}
