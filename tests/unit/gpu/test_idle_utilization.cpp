// The idle-utilization judgement of gpu.tenancy (a pure function of the samples and the number of
// visible processes) and the sampler over a hand-made NVML table.
#include <gtest/gtest.h>

#include "gpu/idle_utilization.hpp"
#include "gpu/device/nvml_backend.hpp"

using namespace gpuvet;

namespace {

std::vector<double> with_blip(double blip) {  // ten reads, one of them `blip`
    std::vector<double> v(10, 0.0);
    v[4] = blip;
    return v;
}

}  // namespace

TEST(IdleUtilization, IdleGpuPasses) {
    auto j = judge_idle_utilization(std::vector<double>(10, 0.0), 0);
    EXPECT_EQ(j.verdict, Verdict::Pass);
    EXPECT_EQ(j.mean_percent, 0);
    EXPECT_EQ(j.max_percent, 0);
    EXPECT_TRUE(j.finding.empty());
}

TEST(IdleUtilization, MonitoringNoisePasses) {
    auto j = judge_idle_utilization({0, 3, 5, 0, 2, 0, 0, 4, 0, 1}, 0);
    EXPECT_EQ(j.verdict, Verdict::Pass);
    EXPECT_DOUBLE_EQ(*j.mean_percent, 1.5);
    EXPECT_EQ(j.max_percent, 5);
    EXPECT_EQ(judge_idle_utilization(with_blip(50), 0).verdict, Verdict::Pass);  // mean 5, max not above 50
}

TEST(IdleUtilization, SustainedTenPercentWarns) {
    EXPECT_EQ(judge_idle_utilization(std::vector<double>(10, 10.0), 0).verdict, Verdict::Pass);
    auto j = judge_idle_utilization(std::vector<double>(10, 11.0), 0);
    EXPECT_EQ(j.verdict, Verdict::Warn);
    EXPECT_EQ(j.finding,
              "the GPU is busy (mean 11%, max 11%) but shows no process: another tenant, a process in another "
              "container, or a stuck job");
}

TEST(IdleUtilization, OneBurstOfHalfWarns) {
    auto j = judge_idle_utilization(with_blip(51), 0);
    EXPECT_EQ(j.verdict, Verdict::Warn);
    EXPECT_NE(j.finding.find("mean 5%, max 51%"), std::string::npos) << j.finding;
}

TEST(IdleUtilization, HalfTheWindowBusyFails) {
    EXPECT_EQ(judge_idle_utilization(std::vector<double>(10, 50.0), 0).verdict, Verdict::Warn);
    EXPECT_EQ(judge_idle_utilization(std::vector<double>(10, 51.0), 0).verdict, Verdict::Fail);
    auto j = judge_idle_utilization({80, 85, 90, 85}, 0);
    EXPECT_EQ(j.verdict, Verdict::Fail);
    EXPECT_NE(j.finding.find("mean 85%, max 90%"), std::string::npos) << j.finding;
}

TEST(IdleUtilization, VisibleProcessesLeaveTheVerdictToTheirFinding) {
    auto j = judge_idle_utilization(std::vector<double>(10, 85.0), 1);
    EXPECT_EQ(j.verdict, Verdict::Pass);
    EXPECT_TRUE(j.finding.empty());
    EXPECT_EQ(j.mean_percent, 85);  // the figures are still reported
}

TEST(IdleUtilization, NoSamplesNoFigures) {
    auto j = judge_idle_utilization({}, 0);
    EXPECT_EQ(j.verdict, Verdict::Pass);
    EXPECT_FALSE(j.mean_percent.has_value());
    EXPECT_FALSE(j.max_percent.has_value());
}

// --- the sampler over a hand-made NVML table: GPU 0 idle, GPU 1 busy, GPU 2 unsupported, GPU 3
// has no handle. A device handle is the index + 1 (never null).

namespace {

int g_reads[4];

nvml::nvmlReturn_t handle(unsigned i, nvml::nvmlDevice_t* d) {
    if (i == 3) return nvml::NVML_ERROR_GPU_IS_LOST;
    *d = reinterpret_cast<nvml::nvmlDevice_t>(std::uintptr_t(i) + 1);
    return nvml::NVML_SUCCESS;
}

nvml::nvmlReturn_t utilization(nvml::nvmlDevice_t d, nvml::nvmlUtilization_t* u) {
    auto i = reinterpret_cast<std::uintptr_t>(d) - 1;
    ++g_reads[i];
    if (i == 2) return nvml::NVML_ERROR_NOT_SUPPORTED;
    u->gpu = i == 1 ? 60u + unsigned(g_reads[i]) : 0u;
    u->memory = 0;
    return nvml::NVML_SUCCESS;
}

}  // namespace

TEST(IdleUtilization, SamplerReadsEveryGpuInOneWindow) {
    std::fill(std::begin(g_reads), std::end(g_reads), 0);
    NvmlApi api;
    api.nvmlDeviceGetHandleByIndex = handle;
    api.nvmlDeviceGetUtilizationRates = utilization;
    NvmlBackend backend(api);
    auto w = sample_idle_utilization(&backend, {0, 1, 2, 3}, 4, std::chrono::milliseconds(0));
    ASSERT_EQ(w.size(), 4u);
    EXPECT_EQ(w[0].samples_percent, (std::vector<double>{0, 0, 0, 0}));
    EXPECT_EQ(w[1].samples_percent, (std::vector<double>{61, 62, 63, 64}));
    EXPECT_TRUE(w[1].absent_reason.empty());
    EXPECT_TRUE(w[2].samples_percent.empty());
    EXPECT_NE(w[2].absent_reason.find("not supported"), std::string::npos) << w[2].absent_reason;
    EXPECT_EQ(g_reads[2], 1);  // not asked again after NOT_SUPPORTED
    EXPECT_TRUE(w[3].samples_percent.empty());
    EXPECT_NE(w[3].absent_reason.find("nvmlDeviceGetHandleByIndex"), std::string::npos) << w[3].absent_reason;
}

TEST(IdleUtilization, SamplerWithoutNvmlSaysWhy) {
    auto w = sample_idle_utilization(nullptr, {0, 1}, 10, std::chrono::milliseconds(100));
    ASSERT_EQ(w.size(), 2u);
    EXPECT_EQ(w[1].absent_reason, "NVML is not usable");
    NvmlApi api;  // a driver whose NVML lacks the call
    api.nvmlDeviceGetHandleByIndex = handle;
    NvmlBackend backend(api);
    w = sample_idle_utilization(&backend, {0}, 10, std::chrono::milliseconds(100));
    EXPECT_EQ(w[0].absent_reason, "utilization: driver lacks nvmlDeviceGetUtilizationRates");
    NvmlBackend unusable(api, "libnvidia-ml.so.1 could not be loaded");
    w = sample_idle_utilization(&unusable, {0}, 10, std::chrono::milliseconds(100));
    EXPECT_EQ(w[0].absent_reason, "NVML is not usable");
}

TEST(IdleUtilization, SamplerStopsWhenAsked) {
    std::fill(std::begin(g_reads), std::end(g_reads), 0);
    NvmlApi api;
    api.nvmlDeviceGetHandleByIndex = handle;
    api.nvmlDeviceGetUtilizationRates = utilization;
    std::atomic<bool> stop{true};
    NvmlBackend backend(api);
    auto w = sample_idle_utilization(&backend, {0}, 100, std::chrono::milliseconds(1000), &stop);
    EXPECT_TRUE(w[0].samples_percent.empty());
    EXPECT_EQ(w[0].absent_reason, "interrupted before the first sample");
}
