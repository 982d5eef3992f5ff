// The monitor's GPU side (monitor/gpu_monitor) and its loop (monitor/sampling_loop) against the
// fake NVML.
#include <gtest/gtest.h>

#include <thread>

#include "gpu/bindings/dynlib.hpp"
#include "core/error.hpp"
#include "fake_nvml_fixture.hpp"
#include "gpu/device/nvml_backend.hpp"
#include "monitor/gpu_monitor.hpp"
#include "monitor/sampling_loop.hpp"

using namespace gpuvet;

TEST(GpuMonitor, ReadsTheSelectedGpusOnceEachTick) {
    NvmlSession session(fake_nvml("healthy_8x_h100_sxm.toml"));
    NvmlBackend backend(session);
    GpuMonitor m(backend, {1, 5}, kReadPower | kReadUtilization);
    ASSERT_EQ(m.gpus().size(), 2u);
    EXPECT_EQ(m.gpus()[1].index, 5);
    EXPECT_EQ(m.gpus()[0].facts.name.value_or(""), "NVIDIA H100 80GB HBM3");
    MonitorTick t = m.sample();
    ASSERT_EQ(t.gpus.size(), 2u);
    EXPECT_EQ(t.gpus[1].index, 5);
    EXPECT_DOUBLE_EQ(t.gpus[0].sample.power_draw_w.value_or(0), 72.5);
    EXPECT_FALSE(t.gpus[0].sample.temperature_c.has_value());  // not asked for
    EXPECT_FALSE(t.gpus[0].nvlink_rx_bytes_per_s.has_value());
    EXPECT_THROW(GpuMonitor(backend, {8}, kReadPower), Error);
}

TEST(GpuMonitor, NvLinkRateNeedsTwoTicks) {
    NvmlSession session(fake_nvml("healthy_8x_h100_sxm.toml"));
    NvmlBackend backend(session);
    GpuMonitor m(backend, {0}, kReadNvLinkThroughput);
    MonitorTick first = m.sample();
    EXPECT_EQ(first.gpus[0].nvlink_rx_bytes_per_s.absent_reason, "needs two samples");
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    MonitorTick second = m.sample();
    // The healthy scenario's counters stand still: a measured 0 B/s, not an absent value.
    EXPECT_DOUBLE_EQ(second.gpus[0].nvlink_rx_bytes_per_s.value_or(-1), 0.0);
    EXPECT_GT(second.t_s, first.t_s);
}

// NVML spends 20 ms per PCIe throughput call: a 10 Hz monitor reads it once a second and carries
// the value between.
TEST(GpuMonitor, PcieThroughputIsReadAtMostOncePerPeriod) {
    NvmlSession session(fake_nvml("link_traffic.toml"));
    NvmlBackend backend(session);
    static DynLib lib = DynLib::open("", {FAKE_NVML});
    auto* calls = reinterpret_cast<unsigned long long (*)(unsigned)>(lib.symbol("gpuvet_fake_nvml_calls"));
    ASSERT_NE(calls, nullptr);
    GpuMonitor m(backend, {0}, kReadPcieThroughput);
    MonitorTick first = m.sample();
    const unsigned long long after_first = calls(0);
    MonitorTick second = m.sample();
    MonitorTick third = m.sample();
    EXPECT_EQ(calls(0), after_first);  // well inside the period: no NVML call
    ASSERT_TRUE(first.gpus[0].sample.pcie_rx_bytes_per_s.has_value());
    EXPECT_DOUBLE_EQ(third.gpus[0].sample.pcie_rx_bytes_per_s.value_or(-1), *first.gpus[0].sample.pcie_rx_bytes_per_s);
    EXPECT_DOUBLE_EQ(second.gpus[0].sample.pcie_tx_bytes_per_s.value_or(-1),
                     first.gpus[0].sample.pcie_tx_bytes_per_s.value_or(-2));
    std::this_thread::sleep_for(kPcieThroughputPeriod + std::chrono::milliseconds(20));
    m.sample();
    EXPECT_EQ(calls(0), after_first + 2);  // rx and tx, read again once the period is over
}

TEST(SamplingLoop, EndsOnDurationStopOrTick) {
    std::atomic<bool> stop{false};
    int ticks = 0;
    auto end = run_sampling_loop({std::chrono::milliseconds(100), std::chrono::milliseconds(350)}, stop, [&] {
        ++ticks;
        return true;
    });
    EXPECT_EQ(end, LoopEnd::DurationReached);
    // At 0, 100, 200 and 300 ms; a stalled machine skips slots rather than catching up.
    EXPECT_GE(ticks, 2);
    EXPECT_LE(ticks, 4);
    ticks = 0;
    end = run_sampling_loop({std::chrono::milliseconds(10), std::nullopt}, stop, [&] { return ++ticks < 3; });
    EXPECT_EQ(end, LoopEnd::TickEnded);
    EXPECT_EQ(ticks, 3);
    std::thread stopper([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        stop = true;
    });
    auto t0 = std::chrono::steady_clock::now();
    end = run_sampling_loop({std::chrono::milliseconds(10000), std::nullopt}, stop, [] { return true; });
    stopper.join();
    EXPECT_EQ(end, LoopEnd::Stopped);
    EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5));  // not the 10 s interval
}
