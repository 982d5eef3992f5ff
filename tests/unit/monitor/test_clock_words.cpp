// The clock-event reason bits in the words top and run print.
#include <gtest/gtest.h>

#include "monitor/clock_words.hpp"

using namespace gpuvet;

TEST(ClockWords, EachBitHasItsWordAndAnUnknownBitStaysHex) {
    EXPECT_EQ(clock_reasons_text(0), "none");
    EXPECT_EQ(clock_reasons_text(0x1 | 0x40), "idle, thermal (HW)");
    EXPECT_EQ(clock_reasons_text(0x10000), "0x10000");
    EXPECT_TRUE(clock_reasons_alarming(0x80));
    EXPECT_FALSE(clock_reasons_alarming(0x4 | 0x1));
}
