// gpu.software's compatibility rules on constructed stacks: driver CUDA vs framework CUDA, compute
// capability vs the build's arch list, and the whole judge.
#include <gtest/gtest.h>

#include "checks/gpu_software_judge.hpp"

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
SoftwareTarget target() {
    SoftwareTarget t;
    t.driver_cuda = 12080;
    t.nvml_gpus = 8;
    t.compute_capabilities = {"9.0", "9.0"};
    return t;
}
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

// ---- AMD: the ROCm user space and the PyTorch ROCm build against the amdgpu driver and gfx targets.

TEST(SoftwareRulesAmd, KernelDriverReleaseFromTheModuleVersion) {
    EXPECT_EQ(rocm_release_of_amdgpu("6.10.5").value_or(""), "6.3");
    EXPECT_EQ(rocm_release_of_amdgpu("6.8.5").value_or(""), "6.2");
    EXPECT_EQ(rocm_release_of_amdgpu("6.12.12").value_or(""), "6.4");
    EXPECT_FALSE(rocm_release_of_amdgpu("5.15.0-91-generic").has_value());  // an in-kernel amdgpu
    EXPECT_FALSE(rocm_release_of_amdgpu("unknown").has_value());
}

TEST(SoftwareRulesAmd, UserSpaceAgainstTheKernelDriver) {
    EXPECT_EQ(rocm_kernel_compat("6.3", "6.3.1-48", "The ROCm user space").verdict, Verdict::Pass);
    EXPECT_EQ(rocm_kernel_compat("6.3", "6.1.0", "x").verdict, Verdict::Pass);
    // torch.version.hip carries the release in its first two numbers.
    EXPECT_EQ(rocm_kernel_compat("6.2", "6.2.41133-dd7f95766", "x").verdict, Verdict::Pass);
    Rule old = rocm_kernel_compat("6.3", "5.7.1", "The ROCm user space");
    EXPECT_EQ(old.verdict, Verdict::Fail);
    EXPECT_NE(old.text.find("ROCm 6.1 to 7.0 on this driver"), std::string::npos) << old.text;
    EXPECT_NE(old.text.find("Fix:"), std::string::npos);
    EXPECT_EQ(rocm_kernel_compat("6.0", "6.3", "x").verdict, Verdict::Fail);
    EXPECT_EQ(rocm_kernel_compat("4.5", "6.3", "x").verdict, Verdict::Warn);  // not in gpuvet's matrix
}

TEST(SoftwareRulesAmd, GfxTargetAgainstTheArchList) {
    const std::vector<std::string> rocm62 = {"gfx900", "gfx906", "gfx908", "gfx90a", "gfx942", "gfx1030", "gfx1100"};
    EXPECT_EQ(gfx_arch_compat("gfx942", rocm62).verdict, Verdict::Pass);
    EXPECT_EQ(gfx_arch_compat("gfx90a", {"gfx90a:xnack-"}).verdict, Verdict::Pass);
    Rule none = gfx_arch_compat("gfx942", {"gfx900", "gfx906", "gfx908", "gfx90a"});
    EXPECT_EQ(none.verdict, Verdict::Fail);
    EXPECT_NE(none.text.find("no kernels for gfx942"), std::string::npos) << none.text;
}

namespace {
SoftwareStack rocm_stack() {
    SoftwareStack s;
    s.python_version = "3.11.7";
    s.python_path = "/usr/bin/python3";
    s.python_how = "PATH";
    s.torch = "2.5.1+rocm6.2";
    s.torch_hip = "6.2.41133-dd7f95766";
    s.arch_list = {"gfx900", "gfx906", "gfx908", "gfx90a", "gfx942", "gfx1030", "gfx1100"};
    s.cuda_available = true;
    s.device_count = 8;
    return s;
}
SoftwareTarget mi300x_box() {
    SoftwareTarget t;
    t.amd_gpus = 8;
    t.gfx_targets = std::vector<std::string>(8, "gfx942");
    t.amd_driver = "6.10.5";
    t.rocm_user_space = "6.3.1-48";
    return t;
}
}  // namespace

TEST(SoftwareRulesAmd, RocmWheelOnAnMi300xBoxPasses) {
    CheckResult r = judge_software(rocm_stack(), mi300x_box());
    EXPECT_EQ(r.verdict, Verdict::Pass) << r.summary;
    EXPECT_NE(r.summary.find("PyTorch 2.5.1+rocm6.2 (ROCm 6.2.41133-dd7f95766)"), std::string::npos) << r.summary;
    bool driver_row = false;
    for (const auto& m : r.measurements)
        driver_row = driver_row || (m.key == "amd_driver_rocm_release" && m.text && *m.text == "6.3");
    EXPECT_TRUE(driver_row);
}

TEST(SoftwareRulesAmd, MismatchesFailWithTheirFix) {
    SoftwareStack cuda = rocm_stack();
    cuda.torch = "2.5.1+cu124";
    cuda.torch_hip.reset();
    cuda.torch_cuda = "12.4";
    CheckResult r = judge_software(cuda, mi300x_box());
    EXPECT_EQ(r.verdict, Verdict::Fail);
    EXPECT_NE(r.summary.find("is a CUDA build: it cannot use AMD GPUs"), std::string::npos) << r.summary;
    EXPECT_NE(r.summary.find("whl/rocm6.3"), std::string::npos) << r.summary;

    SoftwareStack old_arch = rocm_stack();
    old_arch.arch_list = {"gfx900", "gfx906", "gfx908", "gfx90a"};
    EXPECT_EQ(judge_software(old_arch, mi300x_box()).verdict, Verdict::Fail);

    SoftwareTarget old_user = mi300x_box();
    old_user.rocm_user_space = "5.6.0";
    CheckResult u = judge_software(rocm_stack(), old_user);
    EXPECT_EQ(u.verdict, Verdict::Fail);
    EXPECT_NE(u.summary.find("The ROCm user space is ROCm 5.6"), std::string::npos) << u.summary;

    SoftwareStack unseen = rocm_stack();
    unseen.cuda_available = false;
    unseen.device_count = 0;
    CheckResult n = judge_software(unseen, mi300x_box());
    EXPECT_EQ(n.verdict, Verdict::Fail);
    EXPECT_NE(n.summary.find("/dev/kfd"), std::string::npos) << n.summary;
}
