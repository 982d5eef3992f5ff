// Burn verdict rules on synthetic telemetry and throughput series.
#include <gtest/gtest.h>

#include <algorithm>

#include "gpu/burn_judge.hpp"
#include "gpu/bindings/nvml_api.hpp"

using namespace gpuvet;

namespace {

// n samples at 1 Hz; f(i, sample) customises each.
template <class F>
std::vector<TelemetrySample> series(int n, F f) {
    std::vector<TelemetrySample> s(n);
    for (int i = 0; i < n; ++i) {
        s[i].t_s = i;
        s[i].temperature_c = 60;
        s[i].power_w = 690;
        s[i].power_limit_w = 700;
        s[i].sm_clock_mhz = 1980;
        s[i].clock_event_reasons = nvml::kClocksEventReasonSwPowerCap;
        s[i].ecc_uncorrected = 0;
        s[i].ecc_corrected = 0;
        f(i, s[i]);
    }
    return s;
}
std::vector<TelemetrySample> clean(int n = 60) {
    return series(n, [](int, TelemetrySample&) {});
}

GpuBurnOutcome outcome(int gpu, double tflops, int batches = 60, std::string sku = "H100-SXM5-80GB") {
    GpuBurnOutcome g;
    g.gpu = gpu;
    g.sku = std::move(sku);
    g.load = "fma fp32";
    g.slowdown_temp_c = 89;
    g.default_power_limit_w = 700;
    for (int i = 0; i < batches; ++i) {
        g.batch_t_s.push_back(i + 1);
        g.batch_throughput.push_back(tflops);
    }
    g.results_compared = batches;
    g.duration_s = batches;
    return g;
}

BurnInput input(std::vector<GpuBurnOutcome> gs) {
    BurnInput in;
    in.planned_s = 60;
    for (auto& g : gs) {
        in.telemetry.gpus.push_back(GpuTelemetry{g.gpu, clean(), {}, false});
    }
    in.gpus = std::move(gs);
    return in;
}

}  // namespace

TEST(BurnThrottle, EachBadReasonFailsWithItsNumbers) {
    struct Case {
        unsigned long long bit;
        const char* name;
    };
    for (Case c : {Case{0x8, "HW slowdown"}, Case{0x40, "HW thermal slowdown"}, Case{0x20, "SW thermal slowdown"},
                   Case{0x80, "HW power brake"}}) {
        auto s = series(60, [&](int i, TelemetrySample& x) {
            if (i >= 30) {
                x.clock_event_reasons = *x.clock_event_reasons | c.bit;
                x.sm_clock_mhz = 1100;
            }
        });
        auto f = throttle_findings(s);
        ASSERT_EQ(f.size(), 2u) << c.name;  // the bad reason + the SW power cap info line
        EXPECT_EQ(f[0].verdict, Verdict::Fail);
        EXPECT_NE(f[0].text.find(c.name), std::string::npos) << f[0].text;
        EXPECT_NE(f[0].text.find("30 of 60 samples, first at 30 s"), std::string::npos) << f[0].text;
        EXPECT_NE(f[0].text.find("1100 MHz from 1980 MHz"), std::string::npos) << f[0].text;
    }
}

TEST(BurnThrottle, AClockHeldDownFromTheStartIsNotCalledADipFromItself) {
    auto s = series(7, [](int, TelemetrySample& x) {
        x.clock_event_reasons = *x.clock_event_reasons | 0x8;
        x.sm_clock_mhz = 1095;
    });
    auto f = throttle_findings(s);
    ASSERT_FALSE(f.empty());
    EXPECT_EQ(f[0].text.find("from 1095 MHz"), std::string::npos) << f[0].text;
    EXPECT_NE(f[0].text.find("SM clock 1095 MHz in every such sample, never higher in the run"), std::string::npos)
        << f[0].text;
}

TEST(BurnThrottle, SwPowerCapAloneIsNormal) {
    auto f = throttle_findings(clean());
    ASSERT_EQ(f.size(), 1u);
    EXPECT_EQ(f[0].verdict, Verdict::Pass);
    EXPECT_NE(f[0].text.find("SW power cap"), std::string::npos);
}

TEST(BurnThrottle, IdleAndOtherBitsAreNotFailures) {
    auto s = series(10, [](int, TelemetrySample& x) { x.clock_event_reasons = 0x1 | 0x2 | 0x10 | 0x100; });
    EXPECT_TRUE(throttle_findings(s).empty());
}

TEST(BurnThrottle, MissingReasonsGiveNoFinding) {
    auto s = series(10, [](int, TelemetrySample& x) { x.clock_event_reasons.reset(); });
    EXPECT_TRUE(throttle_findings(s).empty());
}

TEST(BurnThrottle, PointBitsSayTheyMissWhatHappensBetweenSamples) {
    auto s = series(60, [](int i, TelemetrySample& x) {
        if (i >= 30) x.clock_event_reasons = *x.clock_event_reasons | 0x8;
    });
    auto f = throttle_findings(s);
    ASSERT_FALSE(f.empty());
    EXPECT_NE(f[0].text.find("reason bits read at each sample: a slowdown between samples is not seen"),
              std::string::npos)
        << f[0].text;
}

// With the violation counters, a thermal dip between two samples shows as the share of the
// interval it held the clocks down, though no sample caught a reason bit.
TEST(BurnThrottle, AThermalDipBetweenSamplesIsTheCountersShare) {
    auto s = series(60, [](int i, TelemetrySample& x) {
        x.clock_event_reasons = nvml::kClocksEventReasonSwPowerCap;
        if (i > 0) x.throttled_thermal_percent = i == 20 ? 20.0 : 0.0;  // 200 ms of the second ending at 20 s
        if (i > 0) x.throttled_power_percent = 100;
        if (i == 20) x.sm_clock_mhz = 1800;  // the interval's mean clock dipped
    });
    auto f = throttle_findings(s);
    ASSERT_EQ(f.size(), 2u);
    EXPECT_EQ(f[0].verdict, Verdict::Fail);
    EXPECT_NE(f[0].text.find("thermal slowdown held the clocks down 0.3% of the time"), std::string::npos) << f[0].text;
    EXPECT_NE(f[0].text.find("violation counter, 20% of the interval ending at 20 s at worst"), std::string::npos)
        << f[0].text;
    EXPECT_NE(f[0].text.find("1800 MHz from 1980 MHz"), std::string::npos) << f[0].text;
    EXPECT_EQ(f[0].text.find("reason bits caught"), std::string::npos) << f[0].text;
    EXPECT_EQ(f[1].verdict, Verdict::Pass);
    EXPECT_NE(f[1].text.find("SW power cap held the clocks down 100.0% of the time (violation counter)"),
              std::string::npos)
        << f[1].text;
    // The figures: the share of the run, from the counters.
    GpuBurnOutcome g = outcome(0, 60);
    GpuTelemetry tel{0, s, {}, false};
    auto m = burn_measurements(g, &tel);
    auto thermal =
        std::find_if(m.begin(), m.end(), [](const Measurement& x) { return x.key == "thermal_throttle_pct"; });
    ASSERT_NE(thermal, m.end());
    EXPECT_NEAR(thermal->value.value_or(-1), 20.0 / 59, 1e-9);
}

TEST(BurnThrottle, CountersAtZeroAndNoBitsAreNoFinding) {
    auto s = series(30, [](int i, TelemetrySample& x) {
        x.clock_event_reasons = 0;
        if (i > 0) x.throttled_thermal_percent = 0.1, x.throttled_power_percent = 0;  // below the counter's granularity
    });
    EXPECT_TRUE(throttle_findings(s).empty());
}

TEST(BurnThrottle, ThermalBitsTheCounterMissedStillFail) {
    // A driver whose thermal counter stays at 0 while a sample caught the HW thermal bit: the bit
    // is named, beside the counter's share.
    auto s = series(30, [](int i, TelemetrySample& x) {
        if (i > 0) x.throttled_thermal_percent = 0;
        if (i == 10) x.clock_event_reasons = *x.clock_event_reasons | nvml::kClocksEventReasonHwThermalSlowdown;
    });
    auto f = throttle_findings(s);
    ASSERT_FALSE(f.empty());
    EXPECT_EQ(f[0].verdict, Verdict::Fail);
    EXPECT_NE(f[0].text.find("the reason bits caught it in 1 of 30 samples (HW thermal)"), std::string::npos)
        << f[0].text;
}

TEST(BurnTemperature, WarnWithinFiveDegreesOfSlowdown) {
    auto hot = series(10, [](int i, TelemetrySample& x) { x.temperature_c = i == 5 ? 84 : 70; });
    auto f = temperature_finding(hot, 89);
    ASSERT_TRUE(f);
    EXPECT_EQ(f->verdict, Verdict::Warn);
    EXPECT_NE(f->text.find("peak 84 °C"), std::string::npos);
    EXPECT_NE(f->text.find("89 °C"), std::string::npos);
    auto ok = series(10, [](int, TelemetrySample& x) { x.temperature_c = 83; });
    EXPECT_EQ(temperature_finding(ok, 89)->verdict, Verdict::Pass);
    EXPECT_EQ(temperature_finding(ok, std::nullopt)->verdict, Verdict::Pass);
    EXPECT_FALSE(temperature_finding(series(3, [](int, TelemetrySample& x) { x.temperature_c.reset(); }), 89));
}

TEST(BurnMemoryTemperature, WarnWithinFiveDegreesOfTheMemoryThresholdNeverFail) {
    auto hot = series(10, [](int i, TelemetrySample& x) { x.memory_temperature_c = i == 5 ? 97 : 80; });
    auto f = memory_temperature_finding(hot, 95);
    ASSERT_TRUE(f);
    EXPECT_EQ(f->verdict, Verdict::Warn);  // even above the threshold: the throttle reasons decide a FAIL
    EXPECT_NE(f->text.find("memory peak 97 °C"), std::string::npos) << f->text;
    EXPECT_NE(f->text.find("95 °C memory slowdown threshold"), std::string::npos) << f->text;
    auto ok = series(10, [](int, TelemetrySample& x) { x.memory_temperature_c = 89; });
    EXPECT_EQ(memory_temperature_finding(ok, 95)->verdict, Verdict::Pass);
    EXPECT_EQ(memory_temperature_finding(ok, std::nullopt)->verdict, Verdict::Pass);
    EXPECT_FALSE(memory_temperature_finding(clean(3), 95));  // not sampled: no finding
}

TEST(BurnMemoryTemperature, PeakIsAMeasurementOrAbsentWithTheSamplersReason) {
    auto in = input({outcome(0, 50), outcome(1, 50)});
    in.gpus[0].memory_max_temp_c = 95;
    in.telemetry.gpus[0].samples = series(10, [](int i, TelemetrySample& x) { x.memory_temperature_c = 70 + i; });
    in.telemetry.gpus[1].absent.emplace_back("memory_temperature_c", "driver lacks nvmlDeviceGetFieldValues");
    auto r = judge_burn(in);
    auto find = [](const CheckResult& c) {
        for (const auto& m : c.measurements)
            if (m.key == "memory_temp_max_c") return m;
        ADD_FAILURE() << "no memory_temp_max_c";
        return Measurement{};
    };
    auto m0 = find(r[0]);
    ASSERT_TRUE(m0.value);
    EXPECT_EQ(*m0.value, 79);
    EXPECT_EQ(m0.unit, "C");
    ASSERT_TRUE(m0.reference);
    EXPECT_EQ(*m0.reference->warn_above, 90);
    EXPECT_FALSE(m0.reference->fail_above);
    EXPECT_NE(r[0].summary.find("(memory 79 °C)"), std::string::npos) << r[0].summary;
    auto m1 = find(r[1]);
    EXPECT_FALSE(m1.value);
    EXPECT_EQ(m1.absent_reason, "driver lacks nvmlDeviceGetFieldValues");
}

TEST(BurnPowerLimit, BelowDefaultWarns) {
    auto capped = series(10, [](int, TelemetrySample& x) { x.power_limit_w = 500; });
    auto f = power_limit_finding(capped, 700);
    ASSERT_TRUE(f);
    EXPECT_EQ(f->verdict, Verdict::Warn);
    EXPECT_NE(f->text.find("500 W"), std::string::npos);
    EXPECT_NE(f->text.find("700 W"), std::string::npos);
    EXPECT_FALSE(power_limit_finding(clean(), 700));
    EXPECT_FALSE(power_limit_finding(capped, std::nullopt));
    auto rounding = series(10, [](int, TelemetrySample& x) { x.power_limit_w = 699.9; });
    EXPECT_FALSE(power_limit_finding(rounding, 700));
}

TEST(BurnThroughput, WindowIsAMinuteOrAThirdOfShortRuns) {
    EXPECT_DOUBLE_EQ(throughput_window_s(600), 60);
    EXPECT_DOUBLE_EQ(throughput_window_s(6), 2);
}

TEST(BurnThroughput, DropOfMoreThanTenPercentWarns) {
    std::vector<double> t, v;
    for (int i = 0; i < 600; ++i) {
        t.push_back(i);
        v.push_back(i < 300 ? 100 : 85);
    }
    auto f = throughput_drop_finding(t, v, "TFLOPS");
    ASSERT_TRUE(f);
    EXPECT_EQ(f->verdict, Verdict::Warn);
    EXPECT_NE(f->text.find("15%"), std::string::npos) << f->text;
    EXPECT_NE(f->text.find("last minute 85 TFLOPS vs first minute 100 TFLOPS"), std::string::npos) << f->text;
    for (auto& x : v)
        if (x == 85) x = 91;  // 9% is within tolerance
    EXPECT_FALSE(throughput_drop_finding(t, v, "TFLOPS"));
    EXPECT_FALSE(throughput_drop_finding({1}, {100}, "TFLOPS"));
}

TEST(BurnPeers, OneGpuTwentyPercentSlowerFails) {
    std::vector<GpuBurnOutcome> g;
    for (int i = 0; i < 4; ++i) g.push_back(outcome(i, i == 2 ? 40 : 50));
    auto f = peer_findings(g);
    for (int i = 0; i < 4; ++i) EXPECT_EQ(f[i].has_value(), i == 2) << i;
    EXPECT_EQ(f[2]->verdict, Verdict::Fail);
    EXPECT_NE(f[2]->text.find("20% below the median 50 TFLOPS of its 3 identical peers"), std::string::npos)
        << f[2]->text;
}

TEST(BurnPeers, DifferentSkusAreNotPeers) {
    auto f = peer_findings({outcome(0, 50, 60, "H100-SXM5-80GB"), outcome(1, 20, 60, "A100-SXM4-80GB")});
    EXPECT_FALSE(f[0]);
    EXPECT_FALSE(f[1]);
    auto unknown = peer_findings({outcome(0, 50, 60, ""), outcome(1, 20, 60, "")});
    EXPECT_FALSE(unknown[1]);
}

TEST(BurnPeers, TwoGpusOnlyTheSlowOneFails) {
    auto f = peer_findings({outcome(0, 50), outcome(1, 40)});
    EXPECT_FALSE(f[0]);
    ASSERT_TRUE(f[1]);
    auto close = peer_findings({outcome(0, 50), outcome(1, 46)});
    EXPECT_FALSE(close[1]);
}

TEST(BurnCorrectness, AnyMismatchOrNanFails) {
    auto g = outcome(0, 50);
    EXPECT_EQ(correctness_finding(g)->verdict, Verdict::Pass);
    g.mismatches = 1;
    EXPECT_EQ(correctness_finding(g)->verdict, Verdict::Fail);
    g.mismatches = 0;
    g.nans = 3;
    auto f = correctness_finding(g);
    EXPECT_EQ(f->verdict, Verdict::Fail);
    EXPECT_NE(f->text.find("3 NaN"), std::string::npos);
}

TEST(BurnEcc, NewUncorrectableFailsCorrectedIsInfo) {
    auto s = series(10, [](int i, TelemetrySample& x) { x.ecc_uncorrected = i >= 5 ? 2 : 0; });
    auto f = ecc_finding(s);
    ASSERT_TRUE(f);
    EXPECT_EQ(f->verdict, Verdict::Fail);
    EXPECT_NE(f->text.find("0 -> 2"), std::string::npos);
    auto c = series(10, [](int i, TelemetrySample& x) { x.ecc_corrected = i; });
    EXPECT_EQ(ecc_finding(c)->verdict, Verdict::Pass);
    // Errors that were there before the burn are the inventory's business, not new ones.
    auto old = series(10, [](int, TelemetrySample& x) { x.ecc_uncorrected = 4; });
    EXPECT_FALSE(ecc_finding(old));
}

TEST(BurnXid, CriticalFailsOthersWarn) {
    std::vector<XidEvent> x{{1, 31, 79}, {1, 40, 13}, {0, 5, 48}};
    auto f = xid_findings(x, 1);
    ASSERT_EQ(f.size(), 2u);
    EXPECT_EQ(f[0].verdict, Verdict::Fail);
    EXPECT_NE(f[0].text.find("Xid 79 at 31 s"), std::string::npos);
    EXPECT_EQ(f[1].verdict, Verdict::Warn);
    for (unsigned long long c : {48, 56, 57, 58, 62, 63, 64, 65, 68, 69, 73, 74, 79, 80, 81, 92, 119, 120})
        EXPECT_TRUE(is_critical_xid(c)) << c;
    EXPECT_FALSE(is_critical_xid(13));
    EXPECT_FALSE(is_critical_xid(31));
}

TEST(BurnJudge, CleanRunPassesWithItsFigures) {
    auto r = judge_burn(input({outcome(0, 50), outcome(1, 51)}));
    ASSERT_EQ(r.size(), 2u);
    for (const auto& c : r) {
        EXPECT_EQ(c.key, "gpu.burn");
        EXPECT_EQ(c.verdict, Verdict::Pass) << c.summary;
        EXPECT_NE(c.summary.find("no throttling, no errors"), std::string::npos) << c.summary;
        bool has_tput = false;
        for (const auto& m : c.measurements) has_tput |= m.key == "throughput_tflops" && m.value;
        EXPECT_TRUE(has_tput);
    }
    EXPECT_EQ(*r[1].gpu, 1);
}

TEST(BurnJudge, WorstFindingIsTheSummary) {
    auto in = input({outcome(0, 50), outcome(1, 50)});
    in.gpus[1].mismatches = 7;
    in.telemetry.gpus[1].samples = series(60, [](int, TelemetrySample& x) { x.temperature_c = 86; });
    auto r = judge_burn(in);
    EXPECT_EQ(r[0].verdict, Verdict::Pass);
    EXPECT_EQ(r[1].verdict, Verdict::Fail);
    EXPECT_NE(r[1].summary.find("wrong results: 7 mismatched"), std::string::npos) << r[1].summary;
    EXPECT_NE(r[1].summary.find("+1 more finding"), std::string::npos) << r[1].summary;
}

TEST(BurnJudge, NothingMeasuredIsAnError) {
    auto in = input({outcome(0, 50, 0)});
    in.gpus[0].load_error = "cuModuleLoadData failed";
    auto r = judge_burn(in);
    EXPECT_EQ(r[0].verdict, Verdict::Error);
    auto in2 = input({outcome(0, 50, 0)});
    EXPECT_EQ(judge_burn(in2)[0].verdict, Verdict::Error);
}

TEST(BurnJudge, StoppedBeforeTheLoadIsNoError) {
    auto in = input({outcome(0, 50, 0)});
    in.interrupted = true;  // Ctrl-C while the load was being prepared: nothing measured, nothing wrong
    auto r = judge_burn(in);
    EXPECT_EQ(r[0].verdict, Verdict::Skip);
    EXPECT_NE(r[0].summary.find("interrupted"), std::string::npos) << r[0].summary;
}

TEST(BurnJudge, LostGpuFails) {
    auto in = input({outcome(0, 50)});
    in.telemetry.gpus[0].lost = true;
    EXPECT_EQ(judge_burn(in)[0].verdict, Verdict::Fail);
}

TEST(BurnJudge, InterruptedRunSaysSo) {
    auto in = input({outcome(0, 50, 10)});
    in.interrupted = true;
    in.planned_s = 600;
    auto r = judge_burn(in);
    EXPECT_EQ(r[0].verdict, Verdict::Pass);
    EXPECT_EQ(r[0].details.front(), "interrupted after 10 s of the planned 600 s");
}

TEST(BurnLoad, ALoadThatCouldNotRunOrALostGpuIsAFinding) {
    GpuBurnOutcome g = outcome(0, 50);
    EXPECT_TRUE(load_findings(g, false).empty());
    g.load_error = "cuModuleLoadData failed";
    auto f = load_findings(g, false);
    ASSERT_EQ(f.size(), 1u);
    EXPECT_EQ(f[0].verdict, Verdict::Error);
    EXPECT_EQ(f[0].text, "the load could not run: cuModuleLoadData failed");
    auto lost = load_findings(outcome(0, 50), true);  // the telemetry saw it fall off the bus
    ASSERT_EQ(lost.size(), 1u);
    EXPECT_EQ(lost[0].verdict, Verdict::Fail);
}

TEST(BurnFindings, EveryRuleOnceInTheSummarysOrder) {
    GpuBurnOutcome g = outcome(1, 50);
    g.mismatches = 2;
    GpuTelemetry tel{1, series(60, [](int, TelemetrySample& x) { x.temperature_c = 86; }), {}, false};
    Finding peer{Verdict::Fail, "slower than its peers"};
    auto f = gpu_findings(g, &tel, peer, {XidEvent{1, 5, 79}, XidEvent{0, 5, 79}});
    std::vector<std::string> starts;
    for (const auto& x : f) starts.push_back(x.text.substr(0, 12));
    EXPECT_EQ(starts, (std::vector<std::string>{"wrong result", "Xid 79 at 5 ", "SW power cap", "slower than ",
                                                "peak 86 °C,"}));
    // Without telemetry only what the load itself saw is judged.
    EXPECT_EQ(gpu_findings(g, nullptr, std::nullopt, {}).size(), 1u);
}

TEST(BurnVerdict, WorstFindingElseErrorOrSkipWhenNothingWasMeasured) {
    EXPECT_EQ(burn_verdict({}, true, false), Verdict::Pass);
    EXPECT_EQ(burn_verdict({{Verdict::Pass, "a"}, {Verdict::Warn, "b"}}, true, false), Verdict::Warn);
    EXPECT_EQ(burn_verdict({{Verdict::Pass, "a"}}, false, false), Verdict::Error);
    EXPECT_EQ(burn_verdict({}, false, true), Verdict::Skip);
    EXPECT_EQ(burn_verdict({{Verdict::Fail, "a"}}, false, true), Verdict::Fail);
}

TEST(BurnMeasurements, FiguresWithTheGpusOwnThresholds) {
    GpuBurnOutcome g = outcome(2, 50);
    g.memory_max_temp_c = 95;
    GpuTelemetry tel{2, series(10, [](int i, TelemetrySample& x) { x.memory_temperature_c = 80 + i; }), {}, false};
    auto ms = burn_measurements(g, &tel);
    auto find = [&](const std::vector<Measurement>& v, const std::string& key) -> const Measurement* {
        for (const auto& m : v)
            if (m.key == key) return &m;
        return nullptr;
    };
    ASSERT_TRUE(find(ms, "throughput_tflops"));
    EXPECT_DOUBLE_EQ(*find(ms, "throughput_tflops")->value, 50);
    const Measurement* t = find(ms, "temperature_peak_c");
    ASSERT_TRUE(t && t->reference);
    EXPECT_DOUBLE_EQ(*t->reference->warn_above, 84);
    EXPECT_DOUBLE_EQ(*t->reference->fail_above, 89);
    const Measurement* mt = find(ms, "memory_temp_max_c");
    ASSERT_TRUE(mt && mt->value && mt->reference);
    EXPECT_DOUBLE_EQ(*mt->value, 89);
    EXPECT_DOUBLE_EQ(*mt->reference->warn_above, 90);
    EXPECT_FALSE(mt->reference->fail_above);  // the memory threshold never fails by itself
    EXPECT_DOUBLE_EQ(*find(ms, "sm_clock_min_mhz")->value, 1980);
    EXPECT_DOUBLE_EQ(*find(ms, "results_checked_count")->value, 60);
    EXPECT_EQ(*ms.front().gpu, 2);

    // Not sampled: no temperature figures, the memory one absent with the reason.
    auto bare = burn_measurements(g, nullptr);
    EXPECT_FALSE(find(bare, "temperature_peak_c"));
    EXPECT_FALSE(find(bare, "power_peak_w"));
    ASSERT_TRUE(find(bare, "memory_temp_max_c"));
    EXPECT_EQ(find(bare, "memory_temp_max_c")->absent_reason, "no telemetry sample");
    EXPECT_TRUE(find(bare, "mismatch_count"));
}

TEST(BurnSummary, WorstFindingWithTheOthersCountedElseHowTheRunWent) {
    GpuBurnOutcome g = outcome(0, 50);
    std::vector<Finding> f = {
        {Verdict::Pass, "ok"}, {Verdict::Warn, "warm"}, {Verdict::Fail, "broken"}, {Verdict::Warn, "slow"}};
    EXPECT_EQ(burn_summary(f, Verdict::Fail, g, clean(), false), "broken (+2 more findings)");
    EXPECT_EQ(burn_summary({{Verdict::Warn, "warm"}}, Verdict::Warn, g, clean(), false), "warm");
    EXPECT_EQ(burn_summary({{Verdict::Pass, "ok"}}, Verdict::Pass, g, clean(), false),
              "60 s at 50 TFLOPS (fma fp32), peak 60 °C, 690 W, no throttling, no errors");
    GpuBurnOutcome none = outcome(0, 50, 0);
    EXPECT_EQ(burn_summary({}, Verdict::Skip, none, {}, true),
              "interrupted before a batch of the load completed; no verdict");
    EXPECT_EQ(burn_summary({}, Verdict::Error, none, {}, false),
              "no batch of the load completed, so nothing was measured");
}
