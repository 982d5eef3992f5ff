#include "checks/gpu_driver.hpp"

#include "checks/run_facts.hpp"
#include "core/context.hpp"
#include "core/strings.hpp"

namespace gpuvet {

namespace {
std::string capitalized(std::string s) {
    if (!s.empty() && s[0] >= 'a' && s[0] <= 'z') s[0] = char(s[0] - 'a' + 'A');
    return s;
}
}  // namespace

// NVIDIA CUDA Compatibility, "Minor Version Compatibility" table: programs built with any CUDA 12.x
// toolkit run on drivers >= 525 (CUDA 12.0), CUDA 13.x builds need >= 580 (CUDA 13.0). Framework
// wheels (PyTorch, TensorFlow, JAX) are built for CUDA 12 or 13 today, so a driver that stops at
// CUDA 11 cannot run them: the server works, but not for the job it was rented for.
CudaSupport cuda_support(int cuda_driver_version) {
    if (cuda_driver_version < 12000)
        return {Verdict::Warn,
                "This driver runs only programs built for CUDA 11 or older: CUDA 12 builds (most current PyTorch, "
                "TensorFlow and JAX wheels) need driver 525 or newer, CUDA 13 builds 580 or newer; ask for a "
                "driver update."};
    if (cuda_driver_version < 13000)
        return {Verdict::Pass, "CUDA 12 builds run on this driver; CUDA 13 builds need driver 580 or newer"};
    return {Verdict::Pass, ""};
}

std::vector<CheckResult> GpuDriverCheck::run(CheckContext& ctx) {
    const DriverInfo& d = ctx.facts->driver();
    CheckResult r;
    if (!d.present && !d.problems.empty()) {
        // Installed but not running (nvidia.ko not loaded): a GPU server that cannot run GPU work.
        r.verdict = Verdict::Fail;
        r.summary = capitalized(d.problems.front().headline) + ": " + d.problems.front().advice + ".";
        return {r};
    }
    if (!d.present) {
        // No driver is a fact about the machine, not a failure of gpuvet: the GPU checks SKIP.
        r.verdict = Verdict::Skip;
        r.summary = no_gpu_driver_text(d);
        return {r};
    }
    if (d.amd_present && !d.nvidia_found) return {amd_driver_result(d)};
    for (const DriverProblem& p : d.problems) r.details.push_back(p.message + ": " + p.advice);
    r.verdict = Verdict::Pass;
    r.summary = "NVIDIA driver loaded";
    if (d.driver_version) {
        r.summary += ", version " + *d.driver_version;
        r.measurements.push_back(Measurement::textual("driver_version", "Driver version", *d.driver_version));
    }
    std::optional<CudaSupport> support;
    if (d.cuda_driver_version) {
        int v = *d.cuda_driver_version;
        std::string cuda = cuda_version_text(v);
        r.summary += ", CUDA " + cuda;
        r.measurements.push_back(Measurement::textual("cuda_driver_version", "CUDA driver API", cuda));
        support = cuda_support(v);
    }
    if (d.libcuda_path) r.measurements.push_back(Measurement::textual("libcuda_path", "libcuda", *d.libcuda_path));
    r.summary += ".";
    if (support) {
        r.verdict = support->verdict;
        if (support->verdict != Verdict::Pass) r.summary += " " + support->advice;
        else if (!support->advice.empty()) r.details.push_back(support->advice);
    }
    if (!d.problems.empty()) {
        // The driver runs, but not as a whole: MIG, CUDA_VISIBLE_DEVICES, CUDA and NVML disagreeing.
        r.verdict = worst(r.verdict, Verdict::Warn);
        r.summary += " But " + d.problems.front().headline + ".";
    }
    if (d.amd_present) {
        // A box with GPUs of both vendors: AMD's driver beside NVIDIA's.
        CheckResult amd = amd_driver_result(d);
        r.summary += " " + amd.summary;
        r.measurements.insert(r.measurements.end(), amd.measurements.begin(), amd.measurements.end());
    }
    return {r};
}

CheckResult GpuDriverCheck::amd_driver_result(const DriverInfo& d) {
    CheckResult r;
    r.verdict = Verdict::Pass;
    r.summary = "AMD amdgpu driver loaded";
    if (d.amd_driver_version) {
        r.summary += ", version " + *d.amd_driver_version;
        r.measurements.push_back(Measurement::textual("amd_driver_version", "amdgpu driver", *d.amd_driver_version));
    }
    if (d.amd_library) {
        r.summary += ", read through " + *d.amd_library;
        r.measurements.push_back(Measurement::textual("amd_library", "AMD management library", *d.amd_library));
    }
    if (d.amd_library_path)
        r.measurements.push_back(Measurement::textual("amd_library_path", "Library path", *d.amd_library_path));
    r.summary += ".";
    // The ROCm user space and the frameworks are judged against this driver by gpu.software.
    if (!d.nvidia_found) r.details.push_back("NVIDIA: " + d.absent_reason + d.cuda_absent_reason);
    return r;
}

}  // namespace gpuvet
