// top's bars, sparklines, tones and process list.
#include <gtest/gtest.h>

#include <deque>
#include <vector>

#include "monitor/top_keys.hpp"
#include "monitor/top_widgets.hpp"

using namespace gpuvet;

TEST(TopWidgets, ABarFillsToItsShareCappedAtFullAndStaysEmptyWhenAbsent) {
    EXPECT_EQ(fill_bar(50.0, 10), "|||||     ");
    EXPECT_EQ(fill_bar(Fact<double>::absent("x"), 4), "    ");
    EXPECT_EQ(fill_bar(140.0, 4), "||||");
}

TEST(TopWidgets, ASparklineLeavesAGapForAMissingSampleAndKeepsTheLatest) {
    std::deque<Fact<double>> h{0.0, 50.0, Fact<double>::absent("lost"), 100.0};
    EXPECT_EQ(sparkline(h, 10, false), "_+ @");
    EXPECT_EQ(sparkline(h, 2, false), " @");
    EXPECT_EQ(sparkline(h, 4, true), "▁▅ █");
}

TEST(TopWidgets, TonesFollowTheLoadAndTheDistanceToTheSlowdownTemperature) {
    EXPECT_EQ(load_tone(95.0), Tone::Bad);
    EXPECT_EQ(load_tone(75.0), Tone::Warn);
    EXPECT_EQ(load_tone(5.0), Tone::Good);
    EXPECT_EQ(temperature_tone(Fact<int>(85), Fact<int>(89)), Tone::Bad);
    EXPECT_EQ(temperature_tone(Fact<int>(74), Fact<int>(89)), Tone::Warn);
}

TEST(TopWidgets, ProcessesSortByMemoryOrCpuReverseAndFilterByGpu) {
    auto row = [](int gpu, std::uint32_t pid, std::uint64_t mib, double cpu) {
        ProcessRow r;
        r.gpu = gpu, r.pid = pid, r.gpu_memory_bytes = mib << 20, r.cpu_percent = cpu;
        return r;
    };
    std::vector<ProcessRow> rows{row(0, 10, 100, 5), row(1, 20, 900, 1), row(0, 30, 500, 50)};
    ViewState v;  // GPU memory, largest first
    auto pids = [](const std::vector<ProcessRow>& rs) {
        std::vector<std::uint32_t> p;
        for (const auto& r : rs) p.push_back(r.pid);
        return p;
    };
    EXPECT_EQ(pids(view_processes(rows, v)), (std::vector<std::uint32_t>{20, 30, 10}));
    v.sort = ProcessSort::Cpu;
    EXPECT_EQ(pids(view_processes(rows, v)), (std::vector<std::uint32_t>{30, 10, 20}));
    v.reverse = true;
    EXPECT_EQ(pids(view_processes(rows, v)), (std::vector<std::uint32_t>{20, 10, 30}));
    v.only_gpu = 0;
    EXPECT_EQ(pids(view_processes(rows, v)), (std::vector<std::uint32_t>{10, 30}));
}
