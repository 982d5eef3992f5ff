// top's keys: what each one changes in the view, and nothing more.
#include <gtest/gtest.h>

#include <vector>

#include "monitor/top_keys.hpp"

using namespace gpuvet;

namespace {
const std::vector<int> kWatched{0, 1, 3};  // the GPUs on screen
}  // namespace

TEST(TopKeys, QQuits) {
    ViewState v;
    EXPECT_EQ(apply_key(v, 'q', kWatched), KeyEffect::Quit);
}

TEST(TopKeys, SCyclesTheProcessSortAndCapitalSReversesIt) {
    ViewState v;
    EXPECT_EQ(apply_key(v, 's', kWatched), KeyEffect::Redraw);
    EXPECT_EQ(v.sort, ProcessSort::Cpu);
    apply_key(v, 's', kWatched), apply_key(v, 's', kWatched), apply_key(v, 's', kWatched);
    EXPECT_EQ(v.sort, ProcessSort::Memory);
    apply_key(v, 'S', kWatched);
    EXPECT_TRUE(v.reverse);
}

TEST(TopKeys, FAndADigitShowOneWatchedGpuAndTheSameKeyShowsAllAgain) {
    ViewState v;
    apply_key(v, 'f', kWatched);
    EXPECT_EQ(v.only_gpu, 0);
    apply_key(v, 'f', kWatched), apply_key(v, 'f', kWatched);
    EXPECT_EQ(v.only_gpu, 3);
    apply_key(v, 'f', kWatched);
    EXPECT_FALSE(v.only_gpu);
    EXPECT_EQ(apply_key(v, '2', kWatched), KeyEffect::None) << "GPU 2 is not watched";
    apply_key(v, '3', kWatched);
    EXPECT_EQ(v.only_gpu, 3);
    apply_key(v, '3', kWatched);
    EXPECT_FALSE(v.only_gpu);
}

TEST(TopKeys, HTogglesTheHistoryAndMinusPlusStepTheIntervalNoFasterThanItsFloor) {
    ViewState v;
    apply_key(v, 'h', kWatched);
    EXPECT_FALSE(v.history);
    EXPECT_EQ(apply_key(v, '-', kWatched), KeyEffect::IntervalChanged);
    EXPECT_DOUBLE_EQ(v.interval_s, 0.5);
    v.interval_s = kTopMinIntervalS;
    EXPECT_EQ(apply_key(v, '-', kWatched), KeyEffect::None);
    EXPECT_EQ(apply_key(v, '+', kWatched), KeyEffect::IntervalChanged);
    EXPECT_DOUBLE_EQ(v.interval_s, 0.2);
}

TEST(TopKeys, TheKeyThatClosesTheHelpDoesNothingElse) {
    ViewState v;
    apply_key(v, '?', kWatched);
    EXPECT_TRUE(v.help);
    EXPECT_EQ(apply_key(v, 's', kWatched), KeyEffect::Redraw);
    EXPECT_FALSE(v.help);
    EXPECT_EQ(v.sort, ProcessSort::Memory);
}
