// gpu.software's compatibility rules on constructed stacks: driver CUDA vs framework CUDA, compute
// capability vs the build's arch list, and the whole judge.
#include <gtest/gtest.h>

#include "checks/gpu_software_rules.hpp"

using namespace gpuvet;

TEST(SoftwareRules, FrameworkCudaAgainstTheDriver) {
    EXPECT_EQ(cuda_compat(12080, "12.4").verdict, Verdict::Pass);
    EXPECT_EQ(cuda_compat(12040, "12.4").verdict, Verdict::Pass);
    EXPECT_EQ(cuda_compat(13000, "12.8").verdict, Verdict::Pass);
    // Same major, newer minor: minor-version compatibility runs it, with limits.
    Rule minor = cuda_compat(12020, "12.4");
    EXPECT_EQ(minor.verdict, Verdict::Warn);
    EXPECT_NE(minor.text.find("minor-version compatibility"), std::string::npos);
    // Newer major: cannot run; the fix names a driver and a matching wheel.
    Rule major = cuda_compat(12080, "13.0");
    EXPECT_EQ(major.verdict, Verdict::Fail);
    EXPECT_NE(major.text.find("driver"), std::string::npos);
    EXPECT_NE(major.text.find("whl/cu128"), std::string::npos) << major.text;
    EXPECT_EQ(cuda_compat(11080, "12.1").verdict, Verdict::Fail);
    EXPECT_EQ(cuda_compat(12080, "twelve").verdict, Verdict::Warn);
}

TEST(SoftwareRules, ComputeCapabilityAgainstTheArchList) {
    const std::vector<std::string> cu124 = {"sm_50", "sm_60", "sm_70", "sm_75", "sm_80", "sm_86", "sm_90"};
    EXPECT_EQ(arch_compat("9.0", cu124).verdict, Verdict::Pass);
    // sm_86 cubins run on 8.9 (same major, lower minor).
    EXPECT_EQ(arch_compat("8.9", cu124).verdict, Verdict::Pass);
    // A wheel without sm_90 on an H100: FAIL naming the fix.
    Rule h100 = arch_compat("9.0", {"sm_70", "sm_75", "sm_80", "sm_86"});
    EXPECT_EQ(h100.verdict, Verdict::Fail);
    EXPECT_NE(h100.text.find("lists sm_90"), std::string::npos) << h100.text;
    // Only PTX at or below the GPU: JIT-able, WARN.
    EXPECT_EQ(arch_compat("10.0", {"sm_80", "sm_90", "compute_90"}).verdict, Verdict::Warn);
    // PTX above the GPU does not help; arch-specific sm_90a is not portable to 10.0.
    EXPECT_EQ(arch_compat("8.0", {"sm_90", "compute_90"}).verdict, Verdict::Fail);
    EXPECT_EQ(arch_compat("10.0", {"sm_90a"}).verdict, Verdict::Fail);
}

TEST(SoftwareRules, CudnnVersionsInWords) {
    EXPECT_EQ(cudnn_text(90100), "9.1.0");
    EXPECT_EQ(cudnn_text(8907), "8.9.7");
}

namespace {
SoftwareStack stack() {
    SoftwareStack s;
    s.python_version = "3.11.7";
    s.python_path = "/usr/bin/python3";
    s.python_how = "PATH";
    s.torch = "2.5.1+cu124";
    s.torch_cuda = "12.4";
    s.cudnn = 90100;
    s.nccl = "2.21.5";
    s.arch_list = {"sm_80", "sm_90"};
    s.cuda_available = true;
    s.device_count = 8;
    return s;
}
SoftwareTarget target() { return {12080, 8, {"9.0", "9.0"}}; }
}  // namespace

TEST(SoftwareJudge, HealthyStackPasses) {
    CheckResult r = judge_software(stack(), target());
    EXPECT_EQ(r.verdict, Verdict::Pass) << r.summary;
    EXPECT_NE(r.summary.find("cuDNN 9.1.0"), std::string::npos);
}

TEST(SoftwareJudge, NoTorchIsSkipNotFailure) {
    SoftwareStack s = stack();
    s.torch.reset();
    s.torch_error = "ModuleNotFoundError: No module named 'torch'";
    CheckResult r = judge_software(s, target());
    EXPECT_EQ(r.verdict, Verdict::Skip);
    EXPECT_NE(r.summary.find("No module named 'torch'"), std::string::npos);
}

TEST(SoftwareJudge, CpuOnlyWheelOnAGpuBoxFailsWithThePipCommand) {
    SoftwareStack s = stack();
    s.torch = "2.5.1+cpu";
    s.torch_cuda.reset();
    CheckResult r = judge_software(s, target());
    EXPECT_EQ(r.verdict, Verdict::Fail);
    EXPECT_NE(r.summary.find("the wheel has no CUDA"), std::string::npos);
    EXPECT_NE(r.summary.find("pip install"), std::string::npos);
}

TEST(SoftwareJudge, DevicesPyTorchCannotSee) {
    SoftwareStack s = stack();
    s.device_count = 4;
    EXPECT_EQ(judge_software(s, target()).verdict, Verdict::Warn);
    s.cuda_available = false;
    s.device_count = 0;
    EXPECT_EQ(judge_software(s, target()).verdict, Verdict::Fail);
}
