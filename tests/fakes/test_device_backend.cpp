// The NVML device backend against the fake NVML: describe() and sample() read the scenario's
// values, absent values carry their reasons (NOT_SUPPORTED, NO_PERMISSION, GPU_IS_LOST), a sample
// makes only the calls it was asked for, the session opens NVML once and closes it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>
#include <thread>

#include "gpu/device/nvml_backend.hpp"
#include "gpu/device/nvml_memory_temperature.hpp"
#include "gpu/telemetry.hpp"
#include "fake_nvml_fixture.hpp"

using namespace gpuvet;

namespace {

// How many NVML calls named GPU `index` (the fake's test hook, same loaded library).
unsigned long long calls_on(unsigned index) {
    static DynLib lib = DynLib::open("", {FAKE_NVML});
    auto* fn = reinterpret_cast<unsigned long long (*)(unsigned)>(lib.symbol("gpuvet_fake_nvml_calls"));
    return fn ? fn(index) : ~0ULL;
}

constexpr std::uint64_t kMiB = 1024ull * 1024;

}  // namespace

TEST(DeviceBackend, DescribeReadsTheFixedFacts) {
    NvmlSession session(fake_nvml("healthy_8x_h100_sxm.toml"));
    ASSERT_TRUE(session.ok()) << session.absent_reason();
    NvmlBackend backend(session);
    EXPECT_EQ(backend.device_count().value_or(-1), 8);
    EXPECT_EQ(backend.system().driver_version.has_value(), true);
    auto dev = backend.open(2);
    DeviceFacts f = dev->describe();
    EXPECT_EQ(f.name.value_or(""), "NVIDIA H100 80GB HBM3");
    EXPECT_EQ(f.board_part_number.value_or(""), "692-2G520-0200-000");
    EXPECT_EQ(f.pci_device_id.value_or(0), 0x2330u);
    EXPECT_EQ(f.compute_capability.value_or(""), "9.0");
    EXPECT_EQ(f.memory_total_bytes.value_or(0), 81559 * kMiB);
    EXPECT_EQ(f.memory_reserved_bytes.value_or(0), 564 * kMiB);
    EXPECT_EQ(f.clock_sm_max_mhz.value_or(0), 1980);
    EXPECT_EQ(f.clock_mem_max_mhz.value_or(0), 2619);
    EXPECT_EQ(f.pcie_gen_max_gpu.value_or(0), 5);
    EXPECT_EQ(f.pcie_width_max.value_or(0), 16);
    EXPECT_DOUBLE_EQ(f.power_default_limit_w.value_or(0), 700);
    EXPECT_DOUBLE_EQ(f.power_min_limit_w.value_or(0), 200);
    EXPECT_EQ(f.nvlinks.size(), 18u);
    EXPECT_EQ(f.mig_enabled.value_or(true), false);
    EXPECT_EQ(f.ecc_enabled.value_or(false), true);
    EXPECT_EQ(f.temperature_slowdown_c.value_or(0), 89);
    EXPECT_TRUE(dev->errors().empty());
    EXPECT_FALSE(dev->lost());
    // GPUs 0 and 2 share NUMA node 0, so the fake joins them at NODE.
    auto dev0 = backend.open(0);
    EXPECT_EQ(backend.pcie_path(*dev0, *dev).value_or(""), "NODE");
    EXPECT_EQ(backend.pcie_paths_absent_reason(), "");
}

TEST(DeviceBackend, SampleReadsTheLiveFactsWithATimestamp) {
    NvmlSession session(fake_nvml("healthy_8x_h100_sxm.toml"));
    NvmlBackend backend(session);
    auto dev = backend.open(0);
    auto before = std::chrono::steady_clock::now();
    DeviceSample s = dev->sample();
    EXPECT_GE(s.taken_at, before);
    EXPECT_LE(s.taken_at, std::chrono::steady_clock::now());
    EXPECT_EQ(s.utilization_gpu_percent.value_or(-1), 0);
    EXPECT_DOUBLE_EQ(s.power_draw_w.value_or(0), 72.5);
    EXPECT_DOUBLE_EQ(s.power_enforced_limit_w.value_or(0), 700);
    EXPECT_EQ(s.clock_sm_mhz.value_or(0), 1980);
    EXPECT_EQ(s.clock_mem_mhz.value_or(0), 2619);
    EXPECT_EQ(s.clock_graphics_mhz.value_or(0), 1980);
    EXPECT_EQ(s.clock_event_reasons.value_or(99), 0u);
    EXPECT_EQ(s.temperature_c.value_or(0), 34);
    EXPECT_EQ(s.temperature_memory_c.value_or(0), 38);
    EXPECT_EQ(s.pcie_gen_current.value_or(0), 5);
    EXPECT_EQ(s.pcie_width_current.value_or(0), 16);
    EXPECT_EQ(s.memory_used_bytes.value_or(1), 0u);
    EXPECT_EQ(s.ecc.volatile_uncorrected.value_or(1), 0u);
    EXPECT_EQ(s.remapped_rows_uncorrectable.value_or(1), 0u);
    EXPECT_TRUE(s.processes.empty());
    EXPECT_EQ(s.processes_absent_reason, "");
    // Not offered by this driver / GPU: absent with the reason, and not an error.
    EXPECT_EQ(s.fan_percent.absent_reason, "not supported by this GPU or driver");
    EXPECT_DOUBLE_EQ(s.pcie_rx_bytes_per_s.value_or(-1), 0);  // an idle link
    EXPECT_EQ(s.nvlink_tx_bytes_total.value_or(1), 0u);
    EXPECT_TRUE(dev->errors().empty()) << dev->errors().front();
}

TEST(DeviceBackend, LinkThroughputInBytes) {
    NvmlSession session(fake_nvml("link_traffic.toml"));
    NvmlBackend backend(session);
    DeviceSample busy = backend.open(1)->sample(kReadPcieThroughput | kReadNvLinkThroughput);
    EXPECT_DOUBLE_EQ(busy.pcie_rx_bytes_per_s.value_or(0), 24e9);
    EXPECT_DOUBLE_EQ(busy.pcie_tx_bytes_per_s.value_or(0), 1024000);
    EXPECT_EQ(busy.nvlink_rx_bytes_total.value_or(0), 5000u * 1024);
    EXPECT_EQ(busy.nvlink_tx_bytes_total.value_or(0), 7000u * 1024);
    DeviceSample none = backend.open(0)->sample(kReadNvLinkThroughput);
    EXPECT_EQ(none.nvlink_rx_bytes_total.absent_reason, "not supported by this GPU or driver");
    NvmlApi old = NvmlApi::load_file(FAKE_NVML);
    old.nvmlDeviceGetPcieThroughput = nullptr;  // a driver without the call
    NvmlBackend old_backend(old);
    EXPECT_EQ(old_backend.open(1)->sample(kReadPcieThroughput).pcie_rx_bytes_per_s.absent_reason,
              "driver lacks nvmlDeviceGetPcieThroughput");
}

TEST(DeviceBackend, ASampleMakesOnlyTheCallsAskedFor) {
    NvmlSession session(fake_nvml("healthy_8x_h100_sxm.toml"));
    NvmlBackend backend(session);
    auto dev = backend.open(1);
    auto n0 = calls_on(1);
    DeviceSample s = dev->sample(kReadUtilization);
    // The two sample buffers (GPU and memory), and the point read when they hold nothing new yet.
    EXPECT_GE(calls_on(1) - n0, 2u);
    EXPECT_LE(calls_on(1) - n0, 3u);
    EXPECT_TRUE(s.utilization_gpu_percent.has_value());
    EXPECT_EQ(s.power_draw_w.absent_reason, "not read");
    EXPECT_EQ(s.temperature_c.absent_reason, "not read");
}

TEST(DeviceBackend, NotSupportedOnABoardWithoutEcc) {
    NvmlSession session(fake_nvml("healthy_2x_rtx_3090.toml"));
    NvmlBackend backend(session);
    auto dev = backend.open(0);
    DeviceFacts f = dev->describe();
    DeviceSample s = dev->sample();
    EXPECT_EQ(f.ecc_enabled.absent_reason, "not supported by this GPU or driver");
    EXPECT_EQ(s.ecc.volatile_corrected.absent_reason, "not supported by this GPU or driver");
    EXPECT_EQ(s.temperature_memory_c.absent_reason, kMemoryTempNotReported);
    EXPECT_TRUE(dev->errors().empty());
}

TEST(DeviceBackend, NoPermissionSaysWhatToDo) {
    NvmlApi api = fake_nvml("healthy_8x_h100_sxm.toml");
    // A driver that refuses the power reading to this user; everything else is the fake's.
    api.nvmlDeviceGetPowerUsage = [](nvml::nvmlDevice_t, unsigned*) { return nvml::NVML_ERROR_NO_PERMISSION; };
    NvmlSession session(api);
    NvmlBackend backend(session);
    auto dev = backend.open(0);
    DeviceSample s = dev->sample(kReadPower);
    EXPECT_EQ(s.power_draw_w.absent_reason, "no permission: run as root or add the user to the video group");
    EXPECT_DOUBLE_EQ(s.power_limit_w.value_or(0), 700);
    ASSERT_EQ(dev->errors().size(), 1u);
    EXPECT_NE(dev->errors()[0].find("nvmlDeviceGetPowerUsage failed"), std::string::npos) << dev->errors()[0];
}

TEST(DeviceBackend, ALostGpuIsNotAskedAgain) {
    NvmlSession session(fake_nvml("gpu_lost_mid_inventory.toml"));
    NvmlBackend backend(session);
    auto dev = backend.open(4);
    DeviceFacts f = dev->describe();
    EXPECT_TRUE(f.name.has_value());  // read before the GPU fell off the bus
    EXPECT_TRUE(dev->lost());
    EXPECT_EQ(f.numa_node.absent_reason, "GPU is lost");
    ASSERT_EQ(dev->errors().size(), 1u);
    EXPECT_NE(dev->errors()[0].find("fallen off the bus"), std::string::npos) << dev->errors()[0];
    auto n = calls_on(4);
    DeviceSample s = dev->sample();
    EXPECT_EQ(calls_on(4), n);  // nothing more asked
    EXPECT_EQ(s.power_draw_w.absent_reason, "GPU is lost");
    EXPECT_EQ(s.temperature_memory_c.absent_reason, "GPU is lost");
    EXPECT_EQ(backend.pcie_path(*dev, *backend.open(0)).absent_reason, "GPU is lost");
    // The other GPUs are untouched.
    EXPECT_TRUE(backend.open(3)->sample(kReadPower).power_draw_w.has_value());
}

TEST(DeviceBackend, CriticalErrorsArriveThroughTheWatch) {
    NvmlSession session(fake_nvml("ecc_errors_appearing.toml"));
    NvmlBackend backend(session);
    auto dev = backend.open(3);
    auto watch = backend.watch_critical_errors({dev.get()});
    ASSERT_EQ(watch->absent_reason(), "");
    EXPECT_FALSE(watch->next(std::chrono::milliseconds(0)));
    while (calls_on(3) < 80) dev->sample(kReadEcc);  // the scenario's Xid 48 is due after 80 calls
    auto e = watch->next(std::chrono::milliseconds(100));
    ASSERT_TRUE(e);
    EXPECT_EQ(e->gpu, 3);
    EXPECT_EQ(e->code, 48u);
    EXPECT_EQ(dev->sample(kReadEcc).ecc.volatile_uncorrected.value_or(0), 1u);
}

TEST(DeviceBackend, TheSessionInitialisesOnceAndShutsDown) {
    NvmlApi api = fake_nvml("healthy_8x_h100_sxm.toml");
    unsigned n = 0;
    {
        NvmlSession session(api);
        ASSERT_TRUE(session.ok());
        EXPECT_EQ(api.nvmlDeviceGetCount(&n), nvml::NVML_SUCCESS);
    }
    EXPECT_EQ(api.nvmlDeviceGetCount(&n), nvml::NVML_ERROR_UNINITIALIZED);  // shut down with the session
    setenv("GPUVET_FAKE_SCENARIO", "/nonexistent.toml", 1);
    NvmlSession failed(api);
    EXPECT_FALSE(failed.ok());
    EXPECT_EQ(failed.init_status(), nvml::NVML_ERROR_UNKNOWN);
    EXPECT_NE(failed.absent_reason().find("nvmlInit_v2 failed"), std::string::npos) << failed.absent_reason();
    NvmlBackend backend(failed);
    EXPECT_FALSE(backend.usable());
    EXPECT_EQ(backend.device_count().absent_reason, failed.absent_reason());
}

TEST(DeviceBackend, TelemetryHistoryStaysBounded) {
    NvmlSession session(fake_nvml("burn_timed_events.toml"));
    NvmlBackend backend(session);
    auto t0 = std::chrono::steady_clock::now();
    TelemetrySampler s(backend, {0}, 20, t0, 8);
    s.start();
    auto end = t0 + std::chrono::milliseconds(1000);
    while (std::chrono::steady_clock::now() < end) std::this_thread::sleep_until(std::min(s.poll(), end));
    s.stop();
    TelemetryData d = s.snapshot();
    const auto& samples = d.gpus[0].samples;
    EXPECT_LE(samples.size(), 8u);
    EXPECT_GE(samples.size(), 5u);
    EXPECT_LT(samples.front().t_s, 0.05);  // the first sample survives the thinning
    EXPECT_GT(samples.back().t_s, 0.8);    // and the newest is there
    for (std::size_t i = 1; i < samples.size(); ++i) EXPECT_LT(samples[i - 1].t_s, samples[i].t_s);
}

TEST(DeviceBackend, GpmReportsTheIntervalSinceThePreviousRead) {
    NvmlSession session(fake_nvml("gpm_metrics.toml"));
    NvmlBackend backend(session);
    auto dev = backend.open(0);
    DeviceSample first = dev->sample(kReadGpm);
    EXPECT_EQ(first.gpm_sm_activity_percent.absent_reason, "needs two samples: shown from the next reading on");
    EXPECT_FALSE(first.gpm_dram_bandwidth_percent.has_value());
    DeviceSample second = dev->sample(kReadGpm);
    EXPECT_DOUBLE_EQ(second.gpm_sm_activity_percent.value_or(-1), 23.5);
    EXPECT_DOUBLE_EQ(second.gpm_sm_occupancy_percent.value_or(-1), 12.0);
    EXPECT_DOUBLE_EQ(second.gpm_tensor_activity_percent.value_or(-1), 4.0);
    EXPECT_DOUBLE_EQ(second.gpm_dram_bandwidth_percent.value_or(-1), 62.0);
    // The scenario's change is due after 6 calls on GPU 0: the next interval ends after it.
    DeviceSample third = dev->sample(kReadGpm);
    EXPECT_DOUBLE_EQ(third.gpm_sm_activity_percent.value_or(-1), 91.0);
    EXPECT_DOUBLE_EQ(third.gpm_dram_bandwidth_percent.value_or(-1), 80.5);
    EXPECT_TRUE(dev->errors().empty()) << dev->errors().front();
    // Not read unless asked for (GPM is not part of an inventory's sample).
    EXPECT_EQ(dev->sample(kReadUtilization).gpm_sm_activity_percent.absent_reason, "not read");
}

TEST(DeviceBackend, GpmAbsentWithItsReason) {
    {
        NvmlSession session(fake_nvml("gpm_metrics.toml"));
        NvmlBackend backend(session);
        auto unsupported = backend.open(1);
        for (int i = 0; i < 2; ++i)
            EXPECT_EQ(unsupported->sample(kReadGpm).gpm_sm_activity_percent.absent_reason,
                      "no GPM on this GPU (GPM needs Hopper or newer)");
        EXPECT_EQ(backend.open(2)->sample(kReadGpm).gpm_tensor_activity_percent.absent_reason,
                  "MIG mode is on: GPM is per GPU instance there, which gpuvet does not read");
        EXPECT_TRUE(unsupported->errors().empty());
    }
    NvmlSession t4(fake_nvml("healthy_1x_t4.toml"));  // Turing: the fake says no GPM below cc 9
    EXPECT_EQ(NvmlBackend(t4).open(0)->sample(kReadGpm).gpm_dram_bandwidth_percent.absent_reason,
              "no GPM on this GPU (GPM needs Hopper or newer)");
}

TEST(DeviceBackend, GpmWithoutTheCallsSaysTheDriverLacksThem) {
    fake_nvml("gpm_metrics.toml");                           // sets the scenario
    NvmlSession session(NvmlApi::load_file(FAKE_NVML_OLD));  // R440 era: no GPM symbols
    ASSERT_TRUE(session.ok()) << session.absent_reason();
    EXPECT_EQ(session.api().nvmlGpmSampleGet, nullptr);
    NvmlBackend backend(session);
    EXPECT_EQ(backend.open(0)->sample(kReadGpm).gpm_sm_activity_percent.absent_reason,
              "driver lacks nvmlGpmQueryDeviceSupport (NVML has had GPM since 11.8: this library does not export it)");
}

TEST(DeviceBackend, GpmOfALostGpuSaysLost) {
    NvmlSession session(fake_nvml("gpu_lost_mid_inventory.toml"));  // GPU 4 lost after 12 calls
    NvmlBackend backend(session);
    auto dev = backend.open(4);
    for (int i = 0; i < 20 && !dev->lost(); ++i) dev->sample(kReadEverything);
    ASSERT_TRUE(dev->lost());
    EXPECT_EQ(dev->sample(kReadGpm).gpm_sm_activity_percent.absent_reason, "GPU is lost");
}

namespace {

// Samples a square wave (busy 60 % of every 2 scenario seconds, 500 W busy, 100 W idle, time_scale
// 50) every 20 ms until 40 scenario seconds (20 periods) are covered, so partial periods weigh
// little: the interval figures add up to the wave's duty and mean power.
void expect_the_waves_figures(const char* scenario) {
    NvmlSession session(fake_nvml(scenario));
    NvmlBackend backend(session);
    auto dev = backend.open(0);
    const unsigned what = kReadUtilization | kReadPower | kReadClocks;
    dev->sample(what);  // the first: counters need a second read
    double busy_s = 0, span_s = 0, energy_j = 0, power_span_s = 0, lo = 100, hi = 0, idle_s = 0;
    int means = 0;
    DeviceSample s;
    for (int i = 0; i < 2000 && span_s < 40.0 / 50; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        s = dev->sample(what);
        ASSERT_TRUE(s.utilization_gpu.mean) << s.utilization_gpu.mean.absent_reason;
        ASSERT_EQ(s.utilization_gpu.origin.source, FigureSource::kIntervalMean) << s.utilization_gpu.origin.note;
        ++means;
        double covered = s.utilization_gpu.origin.interval_s;
        busy_s += *s.utilization_gpu.mean * covered / 100;
        span_s += covered;
        idle_s += s.utilization_gpu.origin.idle_s;
        lo = std::min(lo, *s.utilization_gpu.min);
        hi = std::max(hi, *s.utilization_gpu.max);
        EXPECT_EQ(s.utilization_gpu_percent.value_or(-1), int(std::lround(*s.utilization_gpu.mean)));
        if (s.power_w.origin.source == FigureSource::kCounterDifference) {
            energy_j += *s.power_w.mean * s.power_w.origin.interval_s;
            power_span_s += s.power_w.origin.interval_s;
            EXPECT_DOUBLE_EQ(*s.power_draw_w, *s.power_w.mean);
        }
    }
    ASSERT_GE(span_s, 40.0 / 50);
    EXPECT_GT(means, 0);
    EXPECT_NEAR(100 * busy_s / span_s, 60, 3) << scenario;
    EXPECT_EQ(lo, 0);
    EXPECT_EQ(hi, 100);
    // 0.6 x 500 W + 0.4 x 100 W over wall-clock time.
    ASSERT_GT(power_span_s, 0);
    EXPECT_NEAR(energy_j / power_span_s, 340, 15);
    EXPECT_EQ(s.clock_sm.origin.source, FigureSource::kIntervalMean);
    EXPECT_EQ(s.clock_sm_mhz.value_or(0), 1980);
    EXPECT_NEAR(s.throttled_power_percent.value_or(-1), 100, 0.5);
    EXPECT_NEAR(s.throttled_thermal_percent.value_or(-1), 0, 0.01);
    EXPECT_EQ(s.throttle_origin.source, FigureSource::kCounterDifference);
    EXPECT_TRUE(dev->errors().empty()) << dev->errors()[0];
    if (std::string(scenario).find("skip_idle") != std::string::npos) {
        // The idle 40 % is the holes the driver left: most of the idle time is counted from them.
        EXPECT_GT(idle_s, 0.25 * span_s) << scenario;
    } else {
        EXPECT_EQ(idle_s, 0) << scenario;
    }
}

}  // namespace

TEST(DeviceBackend, IntervalFiguresComeFromTheDriversBuffersAndCounters) {
    expect_the_waves_figures("interval_wave.toml");
}

// A driver that writes no utilization sample while the GPU is idle: the holes are idle time, not
// dropped (which read a 60 % duty job as 100 % busy).
TEST(DeviceBackend, HolesTheDriverLeavesWhileIdleAreIdleTime) {
    expect_the_waves_figures("interval_wave_skip_idle.toml");
}

TEST(DeviceBackend, WithoutBuffersOrCountersTheFiguresArePointReadsThatSaySo) {
    NvmlSession session(fake_nvml("interval_no_buffers.toml"));
    NvmlBackend backend(session);
    auto dev = backend.open(0);
    dev->sample();
    DeviceSample s = dev->sample();
    EXPECT_EQ(s.utilization_gpu_percent.value_or(-1), 42);
    EXPECT_EQ(s.utilization_gpu.origin.source, FigureSource::kPointRead);
    EXPECT_EQ(s.utilization_gpu.origin.note, "not supported by this GPU or driver");
    EXPECT_DOUBLE_EQ(s.power_draw_w.value_or(0), 300);
    EXPECT_EQ(s.power_w.origin.source, FigureSource::kPointRead);
    EXPECT_EQ(s.power_w.origin.note, "energy counter: not supported by this GPU or driver");
    EXPECT_EQ(s.clock_sm.origin.source, FigureSource::kPointRead);
    EXPECT_FALSE(s.throttled_power_percent);
    EXPECT_EQ(s.throttled_power_percent.absent_reason, "not supported by this GPU or driver");
    EXPECT_TRUE(dev->errors().empty());  // NOT_SUPPORTED is no failure
}
