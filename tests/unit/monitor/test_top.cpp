// The pure parts of `gpuvet top`: hints against the facts and the datasheet, the keys, the bars and
// sparklines, the host-load parsers, and the field table the outputs share.
#include <gtest/gtest.h>

#include <set>

#include "host/host_load.hpp"
#include "monitor/clock_words.hpp"
#include "monitor/hints.hpp"
#include "monitor/top_fields.hpp"
#include "monitor/top_keys.hpp"
#include "monitor/top_output.hpp"
#include "monitor/top_widgets.hpp"
#include "specs/spec_db.hpp"

using namespace gpuvet;

namespace {

DeviceFacts h100_facts() {
    DeviceFacts f;
    f.name = std::string("NVIDIA H100 80GB HBM3");
    f.pci_device_id = 0x2330u;
    f.memory_total_bytes = std::uint64_t(81559) << 20;
    f.power_default_limit_w = 700.0;
    f.pcie_gen_max_gpu = 5;
    f.pcie_gen_max_host = 5;
    f.pcie_width_max = 16;
    f.temperature_slowdown_c = 89;
    f.temperature_memory_max_c = 95;
    return f;
}

DeviceSample idle_sample() {
    DeviceSample s;
    s.utilization_gpu_percent = 0;
    s.memory_used_bytes = std::uint64_t(0);
    s.power_limit_w = 700.0;
    s.pcie_gen_current = 5;
    s.pcie_width_current = 16;
    s.temperature_c = 40;
    s.clock_event_reasons = std::uint64_t(0);
    return s;
}

std::vector<std::string> texts(const std::vector<Hint>& hs) {
    std::vector<std::string> out;
    for (const auto& h : hs) out.push_back(h.text);
    return out;
}

const GpuSpec* h100(const SpecDb& db) { return db.by_key("h100-sxm5-80gb"); }

}  // namespace

TEST(TopHints, AHealthyIdleGpuHasNone) {
    SpecDb db = SpecDb::embedded();
    EXPECT_TRUE(gpu_hints(h100_facts(), idle_sample(), h100(db)).empty());
}

TEST(TopHints, PowerCapBelowTheDefaultLimit) {
    DeviceSample s = idle_sample();
    s.power_limit_w = 500.0;
    auto h = gpu_hints(h100_facts(), s, nullptr);
    ASSERT_EQ(h.size(), 1u);
    EXPECT_EQ(h[0].text, "power-capped at 500 W of 700 W");
    EXPECT_EQ(h[0].level, HintLevel::Warn);
    s.power_limit_w = 690.0;  // within 2% of the default: no hint
    EXPECT_TRUE(gpu_hints(h100_facts(), s, nullptr).empty());
}

TEST(TopHints, PowerCapAgainstTheDatasheetWhenTheDefaultIsUnknown) {
    SpecDb db = SpecDb::embedded();
    DeviceFacts f = h100_facts();
    f.power_default_limit_w = Fact<double>::absent("not supported");
    DeviceSample s = idle_sample();
    s.power_limit_w = 350.0;
    auto h = gpu_hints(f, s, h100(db));
    ASSERT_EQ(h.size(), 1u);
    EXPECT_EQ(h[0].text, "power-capped at 350 W of 700 W");
    EXPECT_NE(h[0].source.find("datasheet"), std::string::npos);
}

TEST(TopHints, SlowLinkOnlyWhenBusyButNarrowLinkAlways) {
    DeviceSample s = idle_sample();
    s.pcie_gen_current = 4;
    EXPECT_TRUE(gpu_hints(h100_facts(), s, nullptr).empty()) << "idle GPUs lower the link generation";
    s.utilization_gpu_percent = 60;
    EXPECT_EQ(texts(gpu_hints(h100_facts(), s, nullptr)),
              std::vector<std::string>{"PCIe Gen4 x16 where Gen5 x16 is possible"});
    s = idle_sample();
    s.pcie_width_current = 8;
    EXPECT_EQ(texts(gpu_hints(h100_facts(), s, nullptr)),
              std::vector<std::string>{"PCIe Gen5 x8 where Gen5 x16 is possible"});
}

TEST(TopHints, AHostSlotBelowTheCardSaysSo) {
    SpecDb db = SpecDb::embedded();
    DeviceFacts f = h100_facts();
    f.pcie_gen_max_host = 4;
    DeviceSample s = idle_sample();
    s.pcie_gen_current = 3;
    s.utilization_gpu_percent = 90;
    auto t = texts(gpu_hints(f, s, h100(db)));
    ASSERT_FALSE(t.empty());
    EXPECT_EQ(t[0], "PCIe Gen3 x16 where Gen4 x16 is possible (the card does Gen5: the slot holds it back)");
}

TEST(TopHints, FullMemoryWithNoUtilization) {
    DeviceSample s = idle_sample();
    s.memory_used_bytes = std::uint64_t(77500) << 20;  // 95%
    EXPECT_EQ(texts(gpu_hints(h100_facts(), s, nullptr)),
              std::vector<std::string>{"memory 95% full, utilization 0%: the job is not feeding the GPU"});
    s.utilization_gpu_percent = 40;
    EXPECT_TRUE(gpu_hints(h100_facts(), s, nullptr).empty());
}

TEST(TopHints, HbmShareOfTheDatasheetBandwidth) {
    SpecDb db = SpecDb::embedded();
    DeviceSample s = idle_sample();
    s.utilization_gpu_percent = 50;
    s.gpm_dram_bandwidth_percent = 62.0;
    s.gpm_sm_activity_percent = 70.0;
    auto h = gpu_hints(h100_facts(), s, h100(db));
    ASSERT_EQ(h.size(), 1u);
    EXPECT_EQ(h[0].text, "HBM at 62% of its bandwidth (2.08 of 3.35 TB/s)");
    EXPECT_EQ(h[0].level, HintLevel::Info);
}

TEST(TopHints, BusyWithFewSmsActive) {
    DeviceSample s = idle_sample();
    s.utilization_gpu_percent = 97;
    s.gpm_sm_activity_percent = 23.0;
    EXPECT_EQ(texts(gpu_hints(h100_facts(), s, nullptr)),
              std::vector<std::string>{"busy 97% but only 23% of SMs active: small kernels or launch overhead"});
}

TEST(TopHints, HotAndThrottledAreAlerts) {
    DeviceSample s = idle_sample();
    s.temperature_c = 86;
    s.clock_event_reasons = std::uint64_t(0x8 | 0x4);
    auto h = gpu_hints(h100_facts(), s, nullptr);
    ASSERT_EQ(h.size(), 2u);
    EXPECT_EQ(h[0].text, "clocks held down: power cap, HW slowdown");
    EXPECT_EQ(h[1].text, "GPU at 86 °C, slowdown at 89 °C");
    EXPECT_EQ(h[0].level, HintLevel::Alert);
}

TEST(TopHints, AbsentFactsGiveNoHint) {
    DeviceSample s;  // nothing read
    EXPECT_TRUE(gpu_hints(h100_facts(), s, nullptr).empty());
}

TEST(TopClockWords, BitsInWords) {
    EXPECT_EQ(clock_reasons_text(0), "none");
    EXPECT_EQ(clock_reasons_text(0x1 | 0x40), "idle, thermal (HW)");
    EXPECT_EQ(clock_reasons_text(0x10000), "0x10000");
    EXPECT_TRUE(clock_reasons_alarming(0x80));
    EXPECT_FALSE(clock_reasons_alarming(0x4 | 0x1));
}

TEST(TopKeys, QuitSortFilterHistoryInterval) {
    ViewState v;
    std::vector<int> gpus{0, 1, 3};
    EXPECT_EQ(apply_key(v, 'q', gpus), KeyEffect::Quit);
    EXPECT_EQ(apply_key(v, 's', gpus), KeyEffect::Redraw);
    EXPECT_EQ(v.sort, ProcessSort::Cpu);
    apply_key(v, 's', gpus), apply_key(v, 's', gpus), apply_key(v, 's', gpus);
    EXPECT_EQ(v.sort, ProcessSort::Memory);
    apply_key(v, 'S', gpus);
    EXPECT_TRUE(v.reverse);
    apply_key(v, 'f', gpus);
    EXPECT_EQ(v.only_gpu, 0);
    apply_key(v, 'f', gpus), apply_key(v, 'f', gpus);
    EXPECT_EQ(v.only_gpu, 3);
    apply_key(v, 'f', gpus);
    EXPECT_FALSE(v.only_gpu);
    EXPECT_EQ(apply_key(v, '2', gpus), KeyEffect::None) << "GPU 2 is not watched";
    apply_key(v, '3', gpus);
    EXPECT_EQ(v.only_gpu, 3);
    apply_key(v, '3', gpus);
    EXPECT_FALSE(v.only_gpu);
    apply_key(v, 'h', gpus);
    EXPECT_FALSE(v.history);
    EXPECT_EQ(apply_key(v, '-', gpus), KeyEffect::IntervalChanged);
    EXPECT_DOUBLE_EQ(v.interval_s, 0.5);
    v.interval_s = kTopMinIntervalS;
    EXPECT_EQ(apply_key(v, '-', gpus), KeyEffect::None);
    EXPECT_EQ(apply_key(v, '+', gpus), KeyEffect::IntervalChanged);
    EXPECT_DOUBLE_EQ(v.interval_s, 0.2);
    apply_key(v, '?', gpus);
    EXPECT_TRUE(v.help);
    EXPECT_EQ(apply_key(v, 's', gpus), KeyEffect::Redraw);
    EXPECT_FALSE(v.help);
    EXPECT_EQ(v.sort, ProcessSort::Memory) << "the key that closes the help does nothing else";
}

TEST(TopWidgets, BarsAndSparklines) {
    EXPECT_EQ(fill_bar(50.0, 10), "|||||     ");
    EXPECT_EQ(fill_bar(Fact<double>::absent("x"), 4), "    ");
    EXPECT_EQ(fill_bar(140.0, 4), "||||");
    std::deque<Fact<double>> h{0.0, 50.0, Fact<double>::absent("lost"), 100.0};
    EXPECT_EQ(sparkline(h, 10, false), "_+ @");
    EXPECT_EQ(sparkline(h, 2, false), " @");
    EXPECT_EQ(sparkline(h, 4, true), "▁▅ █");
    EXPECT_EQ(load_tone(95.0), Tone::Bad);
    EXPECT_EQ(load_tone(75.0), Tone::Warn);
    EXPECT_EQ(load_tone(5.0), Tone::Good);
    EXPECT_EQ(temperature_tone(Fact<int>(85), Fact<int>(89)), Tone::Bad);
    EXPECT_EQ(temperature_tone(Fact<int>(74), Fact<int>(89)), Tone::Warn);
}

TEST(TopWidgets, ProcessOrderAndFilter) {
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

TEST(TopHostLoad, Parsers) {
    auto t = parse_proc_stat_cpu("cpu  100 0 50 800 50 0 0 0 0 0\ncpu0 1 2 3 4\ncpu1 1 2 3 4\nintr 5\n");
    ASSERT_TRUE(t);
    EXPECT_EQ(t->total, 1000u);
    EXPECT_EQ(t->busy, 150u);
    EXPECT_FALSE(parse_proc_stat_cpu("intr 5\n"));
    EXPECT_EQ(count_proc_stat_cpus("cpu  1 2 3 4\ncpu0 1 2 3 4\ncpu1 1 2 3 4\n"), 2);
    auto m = parse_meminfo("MemTotal:       16000 kB\nMemFree:  1000 kB\nMemAvailable:   4000 kB\n");
    ASSERT_TRUE(m);
    EXPECT_EQ(m->total_bytes, 16000u * 1024);
    EXPECT_EQ(m->available_bytes, 4000u * 1024);
    EXPECT_FALSE(parse_meminfo("MemTotal: 10 kB\n"));
    auto l = parse_loadavg("0.52 0.40 0.31 1/234 5678\n");
    ASSERT_TRUE(l);
    EXPECT_DOUBLE_EQ(l->five, 0.40);
}

TEST(TopFields, KeysAreUniqueAndNamedLikeNvidiaSmi) {
    std::set<std::string_view> seen;
    for (const auto& f : top_fields()) EXPECT_TRUE(seen.insert(f.key).second) << f.key;
    for (const char* k :
         {"index", "name", "uuid", "pci.bus_id", "utilization.gpu", "utilization.memory", "memory.total", "memory.used",
          "power.draw", "power.limit", "temperature.gpu", "temperature.memory", "clocks.sm", "clocks.mem",
          "pcie.link.gen.current", "clocks_event_reasons.active"})
        EXPECT_TRUE(seen.count(k)) << k;
    EXPECT_EQ(top_field("memory.used").unit, "MiB");
    EXPECT_THROW(top_field("no.such"), std::logic_error);
}

TEST(TopFields, AbsentIsEmptyNotZeroAndTheCsvHeaderNamesUnits) {
    MonitoredGpu g;
    g.index = 2;
    GpuReading r;
    r.sample.power_draw_w = 72.5;
    r.sample.temperature_c = Fact<int>::absent("GPU is lost");
    GpuView v{g, r};
    FieldValue t = top_field("temperature.gpu").get(v);
    EXPECT_FALSE(t.present());
    EXPECT_EQ(t.absent_reason, "GPU is lost");
    EXPECT_EQ(field_text(top_field("temperature.gpu"), t), "");
    EXPECT_EQ(field_text(top_field("power.draw"), top_field("power.draw").get(v)), "72.5");
    g.unopened_reason = "nvmlDeviceGetHandleByIndex failed: no permission";
    EXPECT_EQ(top_field("power.draw").get(v).absent_reason, g.unopened_reason);
    EXPECT_EQ(top_field("state").get(v).text.value_or(""), "unopened");
    std::string h = top_csv_header();
    EXPECT_EQ(h.rfind("timestamp,t_s,index,name,", 0), 0u) << h;
    EXPECT_NE(h.find(",power.draw [W],"), std::string::npos) << h;
    EXPECT_NE(h.find(",utilization.gpu [%],"), std::string::npos) << h;
}
