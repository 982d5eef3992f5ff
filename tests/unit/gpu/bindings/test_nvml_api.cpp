// The NVML and CUDA status codes turned into advice that names the problem and the fix.
#include <gtest/gtest.h>

#include <cstring>

#include "gpu/bindings/cuda_api.hpp"
#include "gpu/bindings/nvml_api.hpp"
#include "gpu/inventory.hpp"

using namespace gpuvet;

TEST(VendorErrors, StatusesTurnIntoAdvice) {
    EXPECT_EQ(nvml_status_name(15), "NVML_ERROR_GPU_IS_LOST");
    EXPECT_EQ(nvml_advice(15), "GPU has fallen off the bus: reset or reboot, check Xid 79 in dmesg");
    EXPECT_EQ(nvml_advice(9), "driver not loaded: load the nvidia kernel module or reboot");
    EXPECT_EQ(nvml_absent_reason(4), "no permission: run as root or add the user to the video group");
    EXPECT_EQ(nvml_absent_reason(3), "not supported by this GPU or driver");
    EXPECT_NE(nvml_advice(16).find("reset required"), std::string::npos);
    EXPECT_EQ(nvml_status_name(12345), "NVML_ERROR_12345");
    NvmlError e("nvmlInit_v2", 9, "Driver Not Loaded");
    EXPECT_EQ(e.code(), 9);
    EXPECT_EQ(e.kind(), ErrorKind::Driver);
    EXPECT_NE(std::string(e.what()).find("nvmlInit_v2 failed: Driver Not Loaded"), std::string::npos);
    EXPECT_EQ(e.advice(), nvml_advice(9));

    EXPECT_EQ(cuda_status_name(100), "CUDA_ERROR_NO_DEVICE");
    EXPECT_NE(cuda_advice(803).find("reboot"), std::string::npos);
    CudaError c("cuInit", 100, "CUDA_ERROR_NO_DEVICE");
    EXPECT_EQ(c.code(), 100);
    EXPECT_EQ(c.advice(), cuda_advice(100));
}
