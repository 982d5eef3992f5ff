#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>

#include "gpu/inventory.hpp"
#include "gpu/bindings/nvml_api.hpp"

using namespace gpuvet;

namespace {
bool contains(const std::vector<std::string>& v, const std::string& s) {
    return std::find(v.begin(), v.end(), s) != v.end();
}
}  // namespace

TEST(NvmlBinding, FallsBackToV1NamesNewestFirst) {
    NvmlApi api = NvmlApi::load_file(NVML_V1_ONLY);
    ASSERT_TRUE(api.ok()) << api.error;
    EXPECT_EQ(api.symbols.used.at("nvmlInit_v2"), "nvmlInit");
    EXPECT_EQ(api.symbols.used.at("nvmlDeviceGetCount_v2"), "nvmlDeviceGetCount");
    EXPECT_EQ(api.symbols.used.at("nvmlDeviceGetHandleByIndex_v2"), "nvmlDeviceGetHandleByIndex");
    ASSERT_NE(api.nvmlInit, nullptr);
    EXPECT_EQ(api.nvmlInit(), nvml::NVML_SUCCESS);
}

TEST(NvmlBinding, MissingOptionalSymbolsAreNullAndListed) {
    NvmlApi api = NvmlApi::load_file(NVML_V1_ONLY);
    ASSERT_TRUE(api.ok());
    EXPECT_EQ(api.nvmlDeviceGetNumaNodeId, nullptr);
    EXPECT_EQ(api.nvmlDeviceGetMemoryInfo_v2, nullptr);
    EXPECT_TRUE(contains(api.symbols.missing_optional, "nvmlDeviceGetNumaNodeId"));
    EXPECT_TRUE(contains(api.symbols.missing_optional, "nvmlDeviceGetComputeRunningProcesses_v3"));
    EXPECT_NE(api.nvmlDeviceGetName, nullptr);
}

TEST(NvmlBinding, MissingRequiredSymbolMakesLibraryUnusable) {
    NvmlApi api = NvmlApi::load_file(NVML_V1_NO_SHUTDOWN);
    EXPECT_FALSE(api.ok());
    EXPECT_NE(api.error.find("lacks nvmlShutdown"), std::string::npos) << api.error;
}

TEST(NvmlBinding, UnloadableFileSaysWhy) {
    NvmlApi api = NvmlApi::load_file("/nonexistent/libnvidia-ml.so.1");
    EXPECT_FALSE(api.ok());
    EXPECT_NE(api.error.find("could not be loaded"), std::string::npos);
}

TEST(Collector, V1OnlyDriverGivesAbsentReasonsAndLostGpu) {
    setenv("GPUVET_LIBCUDA", "/nonexistent", 1);
    setenv("GPUVET_LIBNVML", NVML_V1_ONLY, 1);
    Inventory inv = collect_inventory();
    unsetenv("GPUVET_LIBCUDA");
    unsetenv("GPUVET_LIBNVML");

    EXPECT_FALSE(inv.cuda_present);
    EXPECT_NE(inv.cuda_absent_reason.find("libcuda.so.1 could not be loaded"), std::string::npos);
    EXPECT_TRUE(inv.nvml_present);
    EXPECT_EQ(inv.driver_version.absent_reason, "driver lacks nvmlSystemGetDriverVersion");
    ASSERT_EQ(inv.gpus.size(), 1u);
    const GpuInfo& g = inv.gpus[0];
    ASSERT_TRUE(g.name.has_value());
    EXPECT_EQ(*g.name, "V1-only GPU");
    // The UUID call reports NVML_ERROR_GPU_IS_LOST: the GPU is marked lost, later facts say so.
    EXPECT_TRUE(g.lost);
    EXPECT_FALSE(g.uuid.has_value());
    EXPECT_NE(g.uuid.absent_reason.find("fallen off the bus"), std::string::npos) << g.uuid.absent_reason;
    EXPECT_EQ(g.numa_node.absent_reason, "GPU is lost");
    EXPECT_FALSE(g.cuda_ordinal.has_value());

    // NVML runs, so the driver is there; CUDA is what is missing, and the report says so.
    DriverInfo d = driver_info_of(inv);
    EXPECT_TRUE(d.present);
    EXPECT_FALSE(d.cuda_usable);
    ASSERT_FALSE(d.problems.empty());
    EXPECT_NE(d.problems[0].message.find("NVML sees 1 GPU"), std::string::npos) << d.problems[0].message;
    EXPECT_EQ(gpu_summaries_of(inv).at(0).name.value_or(""), "V1-only GPU");
}
