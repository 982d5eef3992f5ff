// The arithmetic of interval figures: time-weighted means of a driver sample buffer, power from an
// energy counter, throttled shares from violation-time counters.
#include <gtest/gtest.h>

#include "gpu/device/interval_mean.hpp"

using namespace gpuvet;

namespace {

// A buffer every `step_us` from `t0_us`, values in order.
std::vector<TimedValue> buffer(std::uint64_t t0_us, std::uint64_t step_us, std::vector<double> values) {
    std::vector<TimedValue> out;
    for (std::size_t i = 0; i < values.size(); ++i) out.push_back({t0_us + i * step_us, values[i]});
    return out;
}

}  // namespace

TEST(IntervalMean, EvenlySpacedSamplesSinceTheLastSeen) {
    // Six 1/6 s samples after the one last seen at t = 1 s: 100 100 100 0 0 100 -> 4/6 busy.
    auto m = interval_mean(buffer(1'166'667, 166'667, {100, 100, 100, 0, 0, 100}), 1'000'000, 0, 100);
    ASSERT_TRUE(m);
    EXPECT_NEAR(m->mean, 400.0 / 6, 0.01);
    EXPECT_EQ(m->min, 0);
    EXPECT_EQ(m->max, 100);
    EXPECT_EQ(m->samples, 6);
    EXPECT_NEAR(m->span_s, 1.0, 0.001);
    EXPECT_EQ(m->newest_us, 1'166'667u + 5 * 166'667u);
}

TEST(IntervalMean, SamplesAlreadySeenAreLeftOut) {
    auto m = interval_mean(buffer(1'000'000, 500'000, {0, 0, 100, 100}), 1'500'000, 0, 100);
    ASSERT_TRUE(m);
    EXPECT_EQ(m->samples, 2);
    EXPECT_DOUBLE_EQ(m->mean, 100);
}

TEST(IntervalMean, UnevenSpacingWeighsEachSampleByItsPeriod) {
    // 0 % over 0.1 s, then 100 % over 0.3 s and 0.3 s: (0*0.1 + 100*0.6) / 0.7; the cap (median
    // spacing, 0.3 s) leaves every period whole.
    std::vector<TimedValue> s{{1'100'000, 0}, {1'400'000, 100}, {1'700'000, 100}};
    auto m = interval_mean(s, 1'000'000, 0, 100);
    ASSERT_TRUE(m);
    EXPECT_NEAR(m->mean, 60.0 / 0.7, 1e-9);
}

TEST(IntervalMean, AGapInTheBufferDoesNotInflateOneSample) {
    // Samples every 0.2 s, then a 5 s hole before the last: the last weighs one typical period.
    std::vector<TimedValue> s{{200'000, 0}, {400'000, 0}, {600'000, 0}, {5'600'000, 100}};
    auto m = interval_mean(s, 0, 0, 100);
    ASSERT_TRUE(m);
    EXPECT_NEAR(m->mean, 25, 1e-9);
}

TEST(IntervalMean, ValuesOutsideTheRangeAndZeroTimestampsAreDropped) {
    std::vector<TimedValue> s{{0, 50}, {1'000'000, 101}, {1'200'000, -1}, {1'400'000, 40}, {1'600'000, 60}};
    auto m = interval_mean(s, 0, 0, 100);
    ASSERT_TRUE(m);
    EXPECT_EQ(m->samples, 2);
    EXPECT_NEAR(m->mean, 50, 1e-9);
    EXPECT_EQ(m->min, 40);
    EXPECT_EQ(m->max, 60);
}

TEST(IntervalMean, NothingNewIsNoMean) {
    EXPECT_FALSE(interval_mean({}, 0, 0, 100));
    EXPECT_FALSE(interval_mean(buffer(1'000'000, 100'000, {10, 20}), 1'100'000, 0, 100));
}

TEST(IntervalMean, OneSampleAloneIsItsValue) {
    auto m = interval_mean({{2'000'000, 37}}, 0, 0, 100);
    ASSERT_TRUE(m);
    EXPECT_DOUBLE_EQ(m->mean, 37);
    EXPECT_EQ(m->samples, 1);
}

TEST(IntervalMean, UnsortedBuffersAreOrderedFirst) {
    std::vector<TimedValue> s{{1'600'000, 0}, {1'200'000, 100}, {1'400'000, 100}, {1'800'000, 0}};
    auto m = interval_mean(s, 1'000'000, 0, 100);
    ASSERT_TRUE(m);
    EXPECT_NEAR(m->mean, 50, 1e-9);
    EXPECT_EQ(m->newest_us, 1'800'000u);
}

TEST(PowerFromEnergy, MeanWattsOverTheInterval) {
    // 350 J in 0.5 s is 700 W.
    auto w = power_from_energy(1'000'000, 1'350'000, 0.5);
    ASSERT_TRUE(w);
    EXPECT_NEAR(*w, 700, 1e-9);
    EXPECT_FALSE(power_from_energy(2'000, 1'000, 1.0));  // went back: a reload
    EXPECT_FALSE(power_from_energy(1'000, 2'000, 0.0));
}

TEST(ViolationPercent, ShareOfTheInterval) {
    // 200 ms of thermal slowdown in a 1 s interval: 20 %.
    auto p = violation_percent(5'000'000'000, 10'000'000, 5'200'000'000, 11'000'000);
    ASSERT_TRUE(p);
    EXPECT_NEAR(*p, 20, 1e-9);
    EXPECT_EQ(*violation_percent(0, 10'000'000, 0, 11'000'000), 0);
    EXPECT_EQ(*violation_percent(0, 10'000'000, 5'000'000'000, 11'000'000), 100);  // clamped
    EXPECT_FALSE(violation_percent(0, 10'000'000, 1, 10'000'000));                 // no time passed
    EXPECT_FALSE(violation_percent(10, 10'000'000, 1, 11'000'000));                // went back
}
