// gpu.software's judge: the framework stack the probe read (src/train/software_probe.py) held
// against the driver and the GPUs. Pure functions of plain values, for the unit tests.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "core/result.hpp"

namespace gpuvet {

// What the probe read from the server's Python.
struct SoftwareStack {
    std::string python_version, python_path, python_how;  // "3.11.7", "/usr/bin/python3", "PATH"
    std::optional<std::string> torch;                     // "2.5.1+cu124"; absent: torch_error says why
    std::string torch_error;
    std::optional<std::string> torch_cuda;  // "12.4"; absent on a CPU-only build
    std::optional<int> cudnn;               // 90100 as torch.backends.cudnn.version() returns
    std::optional<std::string> nccl;        // "2.21.5"
    std::vector<std::string> arch_list;     // torch.cuda.get_arch_list(): "sm_90", "compute_90"; ROCm: "gfx942"
    std::optional<std::string> torch_hip;   // torch.version.hip: "6.2.41133-dd7f95766" (a ROCm build)
    bool cuda_available = false;
    int device_count = 0;
    std::optional<std::string> torchvision, transformers, tensorflow, jax;
};

// What the stack is held against, from the run's facts.
struct SoftwareTarget {
    std::optional<int> driver_cuda;  // cuDriverGetVersion: 12080 = CUDA 12.8
    int nvml_gpus = 0;
    std::vector<std::string> compute_capabilities;  // per GPU, "9.0" (absent ones left out)
    // AMD GPUs: their count, gfx targets, the amdgpu kernel driver's version ("6.10.5") and the ROCm
    // user space installed on the server (/opt/rocm/.info/version: "6.3.1-48").
    int amd_gpus = 0;
    std::vector<std::string> gfx_targets;
    std::optional<std::string> amd_driver;
    std::optional<std::string> rocm_user_space;
};

struct Rule {
    Verdict verdict = Verdict::Pass;
    std::string text;
};

// CUDA's compatibility rule (NVIDIA CUDA Compatibility guide): a build for a newer CUDA major than
// the driver's cannot run -> FAIL; a newer minor of the same major runs by minor-version
// compatibility, without PTX JIT of its newer code and features needing the newer driver -> WARN.
Rule cuda_compat(int driver_cuda_version, const std::string& framework_cuda);
// A compute capability against the build's arch list: sm_XY of the same major and a minor at most
// the GPU's runs (binary compatibility) -> PASS; only a compute_XY PTX at most the GPU's -> WARN
// (JIT-compiled at start-up); neither -> FAIL.
Rule arch_compat(const std::string& compute_capability, const std::vector<std::string>& arch_list);
// cuDNN's integer version in words: 90100 -> "9.1.0", 8907 -> "8.9.7".
std::string cudnn_text(int v);
// The pip command that installs a CUDA build of torch for the driver's CUDA (12080 -> cu128).
std::string torch_cuda_wheel_command(std::optional<int> driver_cuda);

CheckResult judge_software(const SoftwareStack& s, const SoftwareTarget& t);

// ---- AMD (gpu_software_amd.cpp) ---------------------------------------------------------------
// The ROCm release whose amdgpu driver carries this module version ("6.10.5" -> "6.3"), from the
// versions rocminfo prints beside the ROCm release in public reports (docs/amd.md); nullopt when
// gpuvet's table does not know it.
std::optional<std::string> rocm_release_of_amdgpu(const std::string& module_version);
// A ROCm user space (a release "6.3", or a version "6.3.1-48" / torch.version.hip "6.2.41133-...")
// against the ROCm release of the kernel driver: AMD's user and kernel-space support matrix.
// In the matrix -> PASS; outside it -> FAIL with the fix; an unknown release -> WARN.
Rule rocm_kernel_compat(const std::string& kernel_release, const std::string& user_space, const std::string& what);
// A gfx target against a ROCm build's arch list ("gfx942", "gfx90a:xnack-"): listed -> PASS, else FAIL.
Rule gfx_arch_compat(const std::string& gfx_target, const std::vector<std::string>& arch_list);
// The pip command that installs a ROCm build of torch ("6.3" -> whl/rocm6.3).
std::string torch_rocm_wheel_command(const std::optional<std::string>& rocm_release);
// judge_software for a box whose GPUs are AMD's.
CheckResult judge_software_amd(const SoftwareStack& s, const SoftwareTarget& t);

}  // namespace gpuvet
