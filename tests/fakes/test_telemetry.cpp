// The telemetry sampler on the NVML backend against the fake NVML: samples, timed changes, Xid
// events, stop; driven by poll() as the burn's loop drives it.
#include <gtest/gtest.h>

#include <cstdlib>
#include <thread>

#include "gpu/burn_judge.hpp"
#include "gpu/device/nvml_backend.hpp"
#include "gpu/telemetry.hpp"
#include "fake_nvml_fixture.hpp"

using namespace gpuvet;

namespace {

// Polls like the burn's loop: sleeps until the next sample is due, for `ms` in all.
void run_for(TelemetrySampler& s, int ms) {
    auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
    while (std::chrono::steady_clock::now() < end) std::this_thread::sleep_until(std::min(s.poll(), end));
}

}  // namespace

TEST(Telemetry, SamplesTimedChangesAndXids) {
    NvmlSession session(fake_nvml("burn_timed_events.toml"));
    ASSERT_TRUE(session.ok()) << session.absent_reason();
    NvmlBackend backend(session);
    auto t0 = std::chrono::steady_clock::now();
    TelemetrySampler s(backend, {0, 1}, 10, t0);
    s.start();
    run_for(s, 2200);
    auto stop_at = std::chrono::steady_clock::now();
    s.stop();
    // No waits: stop() returns at once.
    EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - stop_at).count(), 0.2);
    TelemetryData d = s.snapshot();
    ASSERT_EQ(d.gpus.size(), 2u);
    for (const auto& g : d.gpus) {
        EXPECT_GE(g.samples.size(), 15u) << "10 Hz over 2.2 s";
        EXPECT_LE(g.samples.size(), 25u);
        ASSERT_TRUE(g.samples.front().power_w);
        EXPECT_DOUBLE_EQ(*g.samples.front().power_w, 690.0);
        EXPECT_EQ(*g.samples.front().temperature_c, 61);
        EXPECT_EQ(*g.samples.front().power_limit_w, 700);
    }
    const auto& g1 = d.gpus[1].samples;
    // Memory temperature rises with the timed change on GPU 1; GPU 0 does not report it.
    ASSERT_TRUE(g1.front().memory_temperature_c);
    EXPECT_EQ(*g1.front().memory_temperature_c, 70);
    EXPECT_EQ(*g1.back().memory_temperature_c, 84);
    EXPECT_FALSE(d.gpus[0].samples.front().memory_temperature_c);
    bool why = false;
    for (const auto& [field, reason] : d.gpus[0].absent)
        why |= field == "memory_temperature_c" &&
               reason == "this GPU does not report memory temperature (GDDR cards usually do not)";
    EXPECT_TRUE(why);
    EXPECT_EQ(memory_temperature_finding(g1, 95)->text, "memory peak 84 °C, 11 °C below the memory slowdown threshold");
    EXPECT_EQ(*g1.front().clock_event_reasons, 0u);
    EXPECT_EQ(*g1.back().clock_event_reasons, 0x8u);
    EXPECT_EQ(*g1.back().sm_clock_mhz, 1200);
    EXPECT_EQ(*g1.back().ecc_uncorrected, 2u);
    EXPECT_EQ(d.gpus[0].samples.back().clock_event_reasons, 0u);
    ASSERT_EQ(d.xids.size(), 1u) << d.xid_absent_reason;
    EXPECT_EQ(d.xids[0].gpu, 0);
    EXPECT_EQ(d.xids[0].xid, 79u);
    EXPECT_GT(d.xids[0].t_s, 1.0);  // 30 scenario seconds = 1.5 s of wall time

    // The series carry units in their keys and the verdict rules see the same numbers.
    auto series = to_time_series(d);
    bool temp = false, mem_temp = false, xid = false;
    for (const auto& ts : series) {
        temp |= ts.key == "temperature_c" && ts.unit == "C" && ts.gpu == 1;
        mem_temp |= ts.key == "memory_temperature_c" && ts.unit == "C" && ts.gpu == 1;
        EXPECT_FALSE(ts.key == "memory_temperature_c" && ts.gpu == 0);
        xid |= ts.key == "xid" && ts.gpu == 0 && ts.values == std::vector<double>{79};
    }
    EXPECT_TRUE(temp);
    EXPECT_TRUE(mem_temp);
    EXPECT_TRUE(xid);
    // Each sample keeps how its figures were obtained, and the series say it: power from the
    // energy counter but for the first sample (a counter needs two reads), utilization from the
    // driver's buffer, the throttled shares from the violation counters (none held here).
    for (const auto& ts : series) {
        if (ts.key == "power_w" && ts.gpu == 0) {
            EXPECT_EQ(ts.origin.rfind("energy counter differences (", 0), 0u) << ts.origin;
            EXPECT_NE(ts.origin.find("point reads (1 of"), std::string::npos) << ts.origin;
        }
        if (ts.key == "utilization_gpu_pct") {
            EXPECT_NE(ts.origin.find("interval means of the driver's samples"), std::string::npos) << ts.origin;
        }
        if (ts.key == "throttled_thermal_pct") {
            EXPECT_EQ(ts.origin, "violation counter differences");
            EXPECT_EQ(ts.values.size() + 1, d.gpus[std::size_t(*ts.gpu)].samples.size());  // not the first
        }
        if (ts.key == "temperature_c") {
            EXPECT_EQ(ts.origin, "");
        }
    }
    EXPECT_EQ(d.gpus[0].samples.front().power_origin, FigureSource::kPointRead);
    EXPECT_EQ(d.gpus[0].samples.back().power_origin, FigureSource::kCounterDifference);
    EXPECT_TRUE(d.gpus[0].samples.back().throttled_power_percent);
    auto f = throttle_findings(g1);
    ASSERT_FALSE(f.empty());
    EXPECT_EQ(f[0].verdict, Verdict::Fail);
    EXPECT_EQ(ecc_finding(g1)->verdict, Verdict::Fail);
}

TEST(Telemetry, RateIsClampedToTwentyHertz) {
    NvmlSession session(fake_nvml("burn_timed_events.toml"));
    NvmlBackend backend(session);
    TelemetrySampler s(backend, {0}, 1000, std::chrono::steady_clock::now());
    s.start();
    run_for(s, 500);
    s.stop();
    EXPECT_EQ(s.snapshot().sample_hz, 20);
    EXPECT_LE(s.snapshot().gpus[0].samples.size(), 13u);
}

TEST(Telemetry, NoNvmlThrowsADriverError) {
    NvmlSession session(NvmlApi::load_file("/nonexistent/libnvidia-ml.so.1"));
    NvmlBackend backend(session);
    TelemetrySampler s(backend, {0}, 1, std::chrono::steady_clock::now());
    EXPECT_THROW(s.start(), Error);
}
