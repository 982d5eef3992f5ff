// top's hints: each held against the GPU's facts and its datasheet, and none from a fact that is absent.
#include <gtest/gtest.h>

#include "monitor/hints.hpp"
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
