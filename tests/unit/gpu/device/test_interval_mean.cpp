// The arithmetic of interval figures: time-weighted means of a driver sample buffer (holes a driver
// leaves while the GPU is idle counted as idle), power from an energy counter, throttled shares
// from violation-time counters. A simulated driver buffer drives the reader's cursor through
// square-wave loads from 0.2 s to minutes long, on a simulated clock.
#include <gtest/gtest.h>

#include <cmath>
#include <deque>

#include "gpu/device/interval_mean.hpp"

using namespace gpuvet;

namespace {

constexpr std::uint64_t kT0 = 1'700'000'000'000'000;  // the driver's clock: microseconds since 1970

// A buffer every `step_us` from `t0_us`, values in order.
std::vector<TimedValue> buffer(std::uint64_t t0_us, std::uint64_t step_us, std::vector<double> values) {
    std::vector<TimedValue> out;
    for (std::size_t i = 0; i < values.size(); ++i) out.push_back({t0_us + i * step_us, values[i]});
    return out;
}

// What the driver answers for "newer than since": a reader asks from just before the last seen.
std::vector<TimedValue> newer(const std::vector<TimedValue>& all, const BufferCursor& c) {
    std::vector<TimedValue> out;
    for (const TimedValue& v : all)
        if (v.timestamp_us + 1 > c.last_seen_us) out.push_back(v);
    return out;
}

// A driver's utilization buffer under a square wave (busy `duty` of every `period_s` from
// `phase_s`), one sample per `spacing_s` holding the busy share of its period, the newest
// `capacity` kept; with `skip_idle`, a period with no work leaves no sample.
struct WaveDriver {
    WaveDriver(double period, double duty_share, double phase, double spacing, bool skip)
        : period_s(period), duty(duty_share), phase_s(phase), spacing_s(spacing), skip_idle(skip) {}
    double period_s, duty, phase_s, spacing_s;
    bool skip_idle;
    std::size_t capacity = 120;
    std::deque<TimedValue> buf;
    long next = 1;  // index of the next period to close

    double busy_until(double t) const {
        double x = t - phase_s, on = duty * period_s, k = std::floor(x / period_s);
        return k * on + std::min(x - k * period_s, on);
    }
    double busy_share(double a, double b) const { return (busy_until(b) - busy_until(a)) / (b - a); }
    static std::uint64_t us(double t) { return kT0 + static_cast<std::uint64_t>(std::llround(t * 1e6)); }
    void advance(double t) {
        for (; next * spacing_s <= t; ++next) {
            double end = next * spacing_s, v = std::round(100 * busy_share(end - spacing_s, end));
            if (skip_idle && v == 0) continue;
            buf.push_back({us(end), v});
            if (buf.size() > capacity) buf.pop_front();
        }
    }
    std::vector<TimedValue> since(std::uint64_t last_seen) const {
        std::vector<TimedValue> out;
        for (const TimedValue& v : buf)
            if (v.timestamp_us > last_seen) out.push_back(v);
        return out;
    }
};

struct Reading {
    double mean_busy = 0;  // time-weighted over the ticks, as `run` weighs its points
    double worst_tick_error = 0;
};

// Reads the driver every `tick_s` for `run_s` after a `start_s` of history, as the NVML reader
// does: each tick's figure is compared with the true busy share of the time it covers.
Reading read_wave(WaveDriver d, double tick_s, double start_s, double run_s) {
    BufferCursor c;
    double weighted = 0, total = 0, worst = 0;
    std::uint64_t covered = 0;
    for (double t = start_s; t <= start_s + run_s + 1e-9; t += tick_s) {
        d.advance(t);
        std::uint64_t from = c.covered_us;
        auto m = buffered_interval_mean(d.since(c.last_seen_us ? c.last_seen_us - 1 : 0), c, WaveDriver::us(t), 0, 100,
                                        true);
        EXPECT_TRUE(m) << "at " << t << " s";
        if (!m) continue;
        if (t > start_s) {  // the first read covers the driver's last second, not a tick
            weighted += m->mean * tick_s;
            total += tick_s;
        }
        if (from && !m->carried && c.covered_us > from) {
            double a = double(from - kT0) * 1e-6, b = double(c.covered_us - kT0) * 1e-6;
            worst = std::max(worst, std::abs(m->mean - 100 * d.busy_share(a, b)));
        }
        covered = c.covered_us;
    }
    (void)covered;
    return {weighted / total, worst};
}

}  // namespace

TEST(IntervalMean, EvenlySpacedSamplesSinceTheLastSeen) {
    // The sample last seen at t0 comes back with six 1/6 s samples after it: 100 100 100 0 0 100.
    BufferCursor c{kT0, kT0, 0, false};
    auto all = buffer(kT0, 166'667, {50, 100, 100, 100, 0, 0, 100});
    auto m = buffered_interval_mean(newer(all, c), c, kT0 + 6 * 166'667, 0, 100, true);
    ASSERT_TRUE(m);
    EXPECT_NEAR(m->mean, 400.0 / 6, 0.01);
    EXPECT_EQ(m->min, 0);
    EXPECT_EQ(m->max, 100);
    EXPECT_EQ(m->samples, 6);
    EXPECT_NEAR(m->span_s, 1.0, 0.001);
    EXPECT_EQ(m->idle_s, 0);
    EXPECT_EQ(c.last_seen_us, kT0 + 6 * 166'667u);
    EXPECT_NEAR(c.spacing_us, 166'667, 1);
}

TEST(IntervalMean, AHoleInTheBufferIsIdleTime) {
    // Samples every 0.2 s, then none for 4.8 s (a driver that writes none while the GPU is idle),
    // then one at 100 %: 0.6 s busy of the 5.6 s since the last seen.
    BufferCursor c{kT0, kT0, 200'000, false};
    std::vector<TimedValue> s{
        {kT0, 100}, {kT0 + 200'000, 100}, {kT0 + 400'000, 100}, {kT0 + 600'000, 100}, {kT0 + 5'600'000, 100}};
    auto m = buffered_interval_mean(s, c, kT0 + 5'600'000, 0, 100, true);
    ASSERT_TRUE(m);
    EXPECT_NEAR(m->mean, 100 * 0.8 / 5.6, 1e-9);
    EXPECT_NEAR(m->idle_s, 4.8, 1e-9);
    EXPECT_EQ(m->min, 0);  // the idle stretch is a 0 % period
    EXPECT_EQ(m->max, 100);
}

TEST(IntervalMean, ClockSamplesAcrossAHoleWeighOnePeriodEach) {
    // Without holes_are_idle (a clock is not 0 MHz while unsampled) a gap does not inflate a sample.
    BufferCursor c{kT0, kT0, 200'000, false};
    std::vector<TimedValue> s{{kT0, 1000}, {kT0 + 200'000, 1000}, {kT0 + 400'000, 1000}, {kT0 + 5'400'000, 2000}};
    auto m = buffered_interval_mean(s, c, kT0 + 5'400'000, 0, 1e6, false);
    ASSERT_TRUE(m);
    EXPECT_NEAR(m->mean, (1000 * 0.4 + 2000 * 0.2) / 0.6, 1e-9);
    EXPECT_EQ(m->idle_s, 0);
}

TEST(IntervalMean, NoNewSampleOnceOneIsOverdueReadsIdle) {
    // The last seen sample came back and nothing after it for 1 s at 1/6 s spacing: idle.
    const std::uint64_t sp = 166'667;
    BufferCursor c{kT0, kT0, double(sp), false};
    auto m = buffered_interval_mean({{kT0, 100}}, c, kT0 + 1'000'000, 0, 100, true);
    ASSERT_TRUE(m);
    EXPECT_EQ(m->mean, 0);
    EXPECT_EQ(m->samples, 0);
    EXPECT_NEAR(m->idle_s, 1.0, 1e-6);
    EXPECT_FALSE(m->carried);
    EXPECT_EQ(c.covered_us, kT0 + 5 * sp);  // the last period overdue by half a period
    // The GPU works again from 1.0 s: the second is busy, and the idle time is counted once.
    std::vector<TimedValue> s{{kT0, 100}};
    for (std::uint64_t k = 7; k <= 12; ++k) s.push_back({kT0 + k * sp, 100});
    auto next = buffered_interval_mean(s, c, kT0 + 12 * sp, 0, 100, true);
    ASSERT_TRUE(next);
    EXPECT_NEAR(next->mean, 100, 1e-3);
    EXPECT_NEAR(next->span_s, 1.0, 1e-5);
    EXPECT_NEAR(next->idle_s, 0, 1e-5);
}

TEST(IntervalMean, ATickShorterThanTheDriversPeriodCarriesItsLatestSample) {
    // Spacing 1 s (some GPUs), a read 0.3 s after the last sample: nothing is overdue yet.
    BufferCursor c{kT0, kT0, 1'000'000, false};
    auto m = buffered_interval_mean({{kT0, 70}}, c, kT0 + 300'000, 0, 100, true);
    ASSERT_TRUE(m);
    EXPECT_TRUE(m->carried);
    EXPECT_DOUBLE_EQ(m->mean, 70);
    EXPECT_NEAR(m->span_s, 0.3, 1e-9);
}

TEST(IntervalMean, AnEmptyBufferOfAGpuNeverSampledSaysNothing) {
    // A truly idle GPU whose driver keeps no samples: no figure here, and the reader's point read
    // (0 % from the driver) stands; later empty reads are the same.
    BufferCursor c;
    EXPECT_FALSE(buffered_interval_mean({}, c, kT0, 0, 100, true));
    EXPECT_FALSE(buffered_interval_mean({}, c, kT0 + 1'000'000, 0, 100, true));
    EXPECT_EQ(c.last_seen_us, 0u);
}

TEST(IntervalMean, TheFirstReadCoversTheLastSecond) {
    // Twenty seconds of history: 100 % long ago, 30 % in the last second.
    std::vector<double> v(120, 100);
    for (std::size_t i = 114; i < 120; ++i) v[i] = 30;
    auto all = buffer(kT0, 166'667, v);
    BufferCursor c;
    auto m = buffered_interval_mean(all, c, all.back().timestamp_us + 1000, 0, 100, true);
    ASSERT_TRUE(m);
    EXPECT_NEAR(m->mean, 30, 1e-9);
    EXPECT_EQ(m->samples, 6);
}

TEST(IntervalMean, AGpuIdleSinceLongBeforeTheFirstReadIsZero) {
    // The driver stopped writing a minute ago (idle); its old samples say 100 %: the first read
    // is 0 % over the last second, not the old samples' mean.
    auto all = buffer(kT0, 166'667, std::vector<double>(60, 100));
    BufferCursor c;
    auto m = buffered_interval_mean(all, c, all.back().timestamp_us + 60'000'000, 0, 100, true);
    ASSERT_TRUE(m);
    EXPECT_EQ(m->mean, 0);
    EXPECT_NEAR(m->idle_s, 1.0, 1e-6);
}

TEST(IntervalMean, SamplesLostToAFullBufferAreNotIdleTime) {
    // The last seen sample is no longer in the buffer (overwritten: a tick longer than the
    // buffer): the gap before the first sample is unknown, not idle.
    BufferCursor c{kT0, kT0, 100'000, false};
    auto m =
        buffered_interval_mean(buffer(kT0 + 5'000'000, 100'000, {100, 100, 100}), c, kT0 + 5'250'000, 0, 100, true);
    ASSERT_TRUE(m);
    EXPECT_DOUBLE_EQ(m->mean, 100);
    EXPECT_EQ(m->idle_s, 0);
}

TEST(IntervalMean, SamplesFromAnotherClockTurnTheIdleInferenceOff) {
    // Stamped an hour after `now`: the driver's clock is not the one now_us reads; holes between
    // the samples of one read still count, the time since the newest does not.
    BufferCursor c{kT0 + 3'600'000'000, kT0 + 3'600'000'000, 200'000, false};
    auto s = buffer(kT0 + 3'600'000'000, 200'000, {100, 100});
    auto m = buffered_interval_mean(s, c, kT0, 0, 100, true);
    ASSERT_TRUE(m);
    EXPECT_TRUE(c.clock_untrusted);
    EXPECT_DOUBLE_EQ(m->mean, 100);
    EXPECT_FALSE(buffered_interval_mean({}, c, kT0 + 50'000'000, 0, 100, true));
}

TEST(IntervalMean, ValuesOutsideTheRangeAndZeroTimestampsAreDropped) {
    BufferCursor c{kT0, kT0, 200'000, false};
    std::vector<TimedValue> s{{0, 50}, {kT0, 30}, {kT0 + 200'000, 101}, {kT0 + 400'000, 40}, {kT0 + 600'000, 60}};
    auto m = buffered_interval_mean(s, c, kT0 + 600'000, 0, 100, false);
    ASSERT_TRUE(m);
    EXPECT_EQ(m->samples, 2);
    EXPECT_NEAR(m->mean, 50, 1e-9);
    EXPECT_EQ(m->min, 40);
    EXPECT_EQ(m->max, 60);
}

TEST(IntervalMean, UnsortedBuffersAreOrderedFirst) {
    BufferCursor c{kT0, kT0, 0, false};
    std::vector<TimedValue> s{
        {kT0 + 600'000, 0}, {kT0, 100}, {kT0 + 200'000, 100}, {kT0 + 400'000, 100}, {kT0 + 800'000, 0}};
    auto m = buffered_interval_mean(s, c, kT0 + 800'000, 0, 100, true);
    ASSERT_TRUE(m);
    EXPECT_NEAR(m->mean, 50, 1e-9);
    EXPECT_EQ(c.last_seen_us, kT0 + 800'000u);
}

// The aliasing trap, on the simulated clock: a load period that is a multiple of the tick, in
// phase with the ticks and not, with the driver writing every period or skipping idle ones.
TEST(IntervalMean, PeriodicLoadsReadAtTheirDutyWhateverThePhase) {
    struct Case {
        double period_s, tick_s, phase_s;
    };
    const Case cases[] = {{2, 1, 0},   {2, 1, 0.45},  {1, 1, 0},        {1, 1, 0.3},    {4, 2, 0},     {4, 2, 1.1},
                          {0.2, 1, 0}, {0.2, 0.2, 0}, {0.2, 0.2, 0.07}, {0.2, 1, 0.13}, {2, 0.2, 0.9}, {1, 0.5, 0.25}};
    for (bool skip : {false, true})
        for (const Case& k : cases) {
            WaveDriver d(k.period_s, 0.6, k.phase_s, 1.0 / 6, skip);
            Reading r = read_wave(d, k.tick_s, 30, 120);
            EXPECT_NEAR(r.mean_busy, 60, 5) << "period " << k.period_s << " s, tick " << k.tick_s << " s, phase "
                                            << k.phase_s << " s, skip idle " << skip;
        }
}

TEST(IntervalMean, AMinutesLongPeriodReadsEachPhaseAsItWas) {
    // Busy 3 minutes of every 5, read at 1 Hz for half an hour of simulated time: the driver
    // writes nothing in the idle 2 minutes (skip idle), which the ticks read as 0 %, not as the
    // last busy sample; each tick within a driver period of the truth of the time it covers.
    for (bool skip : {false, true}) {
        WaveDriver d(300, 0.6, 17, 1.0 / 6, skip);
        Reading r = read_wave(d, 1.0, 30, 1800);
        EXPECT_NEAR(r.mean_busy, 60, 1) << "skip idle " << skip;
        EXPECT_LE(r.worst_tick_error, 100.0 / 6 + 1) << "skip idle " << skip;
    }
}

TEST(IntervalMean, ADriverSamplingOncePerSecondReadAtFiveHertz) {
    // Some GPUs sample once a second; ticks of 0.2 s carry the latest period between samples.
    for (bool skip : {false, true}) {
        WaveDriver d(4, 0.6, 0.3, 1.0, skip);
        Reading r = read_wave(d, 0.2, 30, 120);
        EXPECT_NEAR(r.mean_busy, 60, 5) << "skip idle " << skip;
    }
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
