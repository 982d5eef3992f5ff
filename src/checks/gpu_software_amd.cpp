// gpu.software on AMD GPUs: the ROCm user space and the PyTorch ROCm build held against the amdgpu
// kernel driver (AMD's user and kernel-space support matrix) and the GPUs' gfx targets.
#include <algorithm>
#include <set>

#include "checks/gpu_software_judge.hpp"

namespace gpuvet {

namespace {

struct Release {
    int major = 0, minor = 0;
    bool operator<(const Release& o) const { return major != o.major ? major < o.major : minor < o.minor; }
    bool operator==(const Release& o) const = default;
};

// "6.3", "6.3.1-48", "6.2.41133-dd7f95766" -> 6.3 / 6.2.
std::optional<Release> release_of(const std::string& s) {
    Release r;
    std::size_t used = 0;
    try {
        r.major = std::stoi(s, &used);
        if (used >= s.size() || s[used] != '.') return std::nullopt;
        r.minor = std::stoi(s.substr(used + 1));
    } catch (const std::exception&) {
        return std::nullopt;
    }
    if (r.major < 0 || r.minor < 0) return std::nullopt;
    // HIP's version carries its patch in the minor's place ("6.2.41133"): major.minor is the release.
    return r;
}

std::string text(Release r) { return std::to_string(r.major) + "." + std::to_string(r.minor); }

// The amdgpu module version rocminfo prints ("ROCk module version 6.10.5 is loaded") beside the ROCm
// release in public ROCm/ROCm issue reports: 6.7.0 with ROCm 6.1.0, 6.8.5 with ROCm 6.2.0-6.2.4 (MI300X
// and W7900 servers), 6.10.5 with ROCm 6.3.2-6.3.4, 6.12.12 with ROCm 6.4.0-6.4.1. Keyed by major.minor.
struct KernelRelease {
    Release module;
    Release rocm;
};
const KernelRelease kKernelReleases[] = {
    {{6, 7}, {6, 1}},
    {{6, 8}, {6, 2}},
    {{6, 10}, {6, 3}},
    {{6, 12}, {6, 4}},
};

// AMD's "User and kernel-space support matrix" (rocm.docs.amd.com/projects/install-on-linux,
// reference/user-kernel-space-compat-matrix): the user space releases tested with each kernel
// driver's release, oldest and newest.
struct Supported {
    Release kernel, oldest, newest;
};
const Supported kMatrix[] = {
    {{6, 4}, {6, 1}, {7, 0}}, {{6, 3}, {6, 1}, {7, 0}}, {{6, 2}, {6, 0}, {7, 0}}, {{6, 1}, {5, 7}, {6, 4}},
    {{6, 0}, {5, 6}, {6, 2}}, {{5, 7}, {5, 5}, {6, 1}}, {{5, 6}, {5, 4}, {6, 0}}, {{5, 5}, {5, 3}, {5, 7}},
    {{5, 4}, {5, 2}, {5, 6}}, {{5, 3}, {5, 1}, {5, 5}},
};

std::string base_target(const std::string& a) { return a.substr(0, a.find(':')); }

Measurement text_or_absent(const char* key, const char* label, const std::optional<std::string>& v,
                           const std::string& why) {
    return v ? Measurement::textual(key, label, *v) : Measurement::absent(key, label, "", why);
}

void apply(CheckResult& r, const Rule& rule) {
    r.findings.emplace_back(rule.verdict, rule.text);
    r.verdict = worst(r.verdict, rule.verdict);
}

std::string joined(const std::vector<std::string>& v) {
    std::string out;
    for (auto& s : v) out += (out.empty() ? "" : " ") + s;
    return out.empty() ? "(empty)" : out;
}

void add_facts(CheckResult& r, const SoftwareStack& s, const SoftwareTarget& t,
               const std::optional<std::string>& kernel_release) {
    auto& m = r.measurements;
    m.push_back(Measurement::textual("python_version", "Python", s.python_version));
    m.push_back(
        Measurement::textual("python_path", "Python interpreter", s.python_path + " (from " + s.python_how + ")"));
    m.push_back(text_or_absent("amd_driver_version", "amdgpu kernel driver", t.amd_driver, "not read"));
    m.push_back(text_or_absent("amd_driver_rocm_release", "ROCm release of the kernel driver", kernel_release,
                               t.amd_driver ? "amdgpu " + *t.amd_driver + " is not in gpuvet's table (docs/amd.md)"
                                            : std::string("the kernel driver's version was not read")));
    m.push_back(text_or_absent("rocm_user_space", "ROCm user space (/opt/rocm)", t.rocm_user_space,
                               "no ROCm installed under /opt/rocm (PyTorch wheels bring their own)"));
    m.push_back(text_or_absent("torch_version", "PyTorch", s.torch, "PyTorch is not importable"));
    if (!s.torch) return;
    m.push_back(text_or_absent("torch_hip_version", "PyTorch built for HIP (ROCm)", s.torch_hip,
                               s.torch_cuda ? "a CUDA build" : "a CPU-only build"));
    if (!s.arch_list.empty()) m.push_back(Measurement::textual("arch_list", "Build arch list", joined(s.arch_list)));
    m.push_back(
        Measurement::textual("torch_cuda_available", "torch.cuda.is_available()", s.cuda_available ? "True" : "False"));
    m.push_back(Measurement::number("torch_device_count", "GPUs PyTorch sees", s.device_count, "count"));
    m.push_back(Measurement::number("amd_device_count", "GPUs AMD SMI lists", t.amd_gpus, "count"));
}

}  // namespace

std::optional<std::string> rocm_release_of_amdgpu(const std::string& module_version) {
    auto v = release_of(module_version);
    if (!v) return std::nullopt;
    for (const auto& k : kKernelReleases)
        if (k.module == *v) return text(k.rocm);
    return std::nullopt;
}

Rule rocm_kernel_compat(const std::string& kernel_release, const std::string& user_space, const std::string& what) {
    auto k = release_of(kernel_release);
    auto u = release_of(user_space);
    if (!k || !u)
        return {Verdict::Warn, what + " '" + user_space + "' or the driver's release '" + kernel_release +
                                   "' is not a ROCm version number"};
    const Supported* row = nullptr;
    for (const auto& s : kMatrix)
        if (s.kernel == *k) row = &s;
    const std::string both = what + " is ROCm " + text(*u) + ", the amdgpu kernel driver is ROCm " + text(*k) + "'s";
    if (!row)
        return {Verdict::Warn, both +
                                   ": AMD's support matrix in gpuvet does not list that driver release, so the "
                                   "pair is not judged"};
    if (*u < row->oldest || row->newest < *u)
        return {Verdict::Fail, both + ": outside AMD's user and kernel-space support matrix (ROCm " +
                                   text(row->oldest) + " to " + text(row->newest) +
                                   " on this driver), so kernels may fail to load or "
                                   "crash. Fix: install a user space within that range, or the amdgpu driver of ROCm " +
                                   text(*u) + " (amdgpu-install)"};
    return {Verdict::Pass, both + ": within AMD's support matrix (ROCm " + text(row->oldest) + " to " +
                               text(row->newest) + " on this driver)"};
}

Rule gfx_arch_compat(const std::string& gfx, const std::vector<std::string>& arch_list) {
    for (const auto& a : arch_list)
        if (base_target(a) == gfx) return {Verdict::Pass, "the build has " + gfx + " kernels"};
    return {Verdict::Fail, "the build has no kernels for " + gfx + " (arch list: " + joined(arch_list) +
                               "): PyTorch cannot run on these GPUs. Fix: a PyTorch ROCm build whose arch list has " +
                               gfx + " (the official ROCm wheels of a release that supports it)"};
}

std::string torch_rocm_wheel_command(const std::optional<std::string>& rocm_release) {
    return "pip install --force-reinstall torch --index-url https://download.pytorch.org/whl/rocm" +
           rocm_release.value_or("6.3") +
           " (a wheel for a ROCm release the kernel driver supports; PyTorch's install page lists the tags)";
}

CheckResult judge_software_amd(const SoftwareStack& s, const SoftwareTarget& t) {
    CheckResult r;
    const std::optional<std::string> kernel = t.amd_driver ? rocm_release_of_amdgpu(*t.amd_driver) : std::nullopt;
    add_facts(r, s, t, kernel);
    r.verdict = Verdict::Pass;
    // The ROCm installed on the server, which tools and frameworks built against it load.
    if (kernel && t.rocm_user_space) apply(r, rocm_kernel_compat(*kernel, *t.rocm_user_space, "The ROCm user space"));
    if (!s.torch) {
        if (r.verdict != Verdict::Fail) r.verdict = Verdict::Skip;  // a user-space mismatch still fails
        r.summary = "PyTorch is not importable by " + s.python_path + " (" + s.torch_error +
                    "): nothing to check; install the framework the job uses, or point gpuvet at its Python with "
                    "--python";
        return r;
    }
    const std::string torch = "PyTorch " + *s.torch;
    if (!s.torch_hip) {
        r.verdict = Verdict::Fail;
        r.summary = torch + (s.torch_cuda ? " is a CUDA build: it cannot use AMD GPUs" : " is a CPU-only build") +
                    ", so no job can use the " + std::to_string(t.amd_gpus) +
                    " AMD GPU(s). Fix: " + torch_rocm_wheel_command(kernel);
        return r;
    }
    // A PyTorch ROCm wheel brings its own ROCm user space: torch.version.hip names its release.
    if (kernel) apply(r, rocm_kernel_compat(*kernel, *s.torch_hip, "PyTorch's ROCm (torch.version.hip)"));
    std::set<std::string> seen;
    for (const auto& gfx : t.gfx_targets)
        if (seen.insert(gfx).second) apply(r, gfx_arch_compat(gfx, s.arch_list));
    if (!s.cuda_available && t.amd_gpus > 0)
        apply(r, {Verdict::Fail, "torch.cuda.is_available() is False although AMD SMI lists " +
                                     std::to_string(t.amd_gpus) +
                                     " GPU(s) (HIP_VISIBLE_DEVICES, a user outside the video and render groups, or a "
                                     "container without /dev/kfd and /dev/dri)"});
    else if (s.device_count < t.amd_gpus)
        apply(r, {Verdict::Warn, "PyTorch sees " + std::to_string(s.device_count) + " of the " +
                                     std::to_string(t.amd_gpus) + " GPUs AMD SMI lists (HIP_VISIBLE_DEVICES?)"});
    r.summary = torch + " (ROCm " + *s.torch_hip + ") on Python " + s.python_version;
    for (const auto& f : r.findings)
        if (f.verdict == r.verdict && r.verdict != Verdict::Pass) {
            r.summary += ": " + f.text;
            break;
        }
    if (r.verdict == Verdict::Pass) r.summary += ": can use all " + std::to_string(s.device_count) + " GPU(s)";
    return r;
}

}  // namespace gpuvet
