// judge_software (gpu_software_judge.hpp): the stack's facts as measurements, then the rules.
#include <set>

#include "checks/gpu_software_judge.hpp"

namespace gpuvet {

namespace {

Measurement text_or_absent(const char* key, const char* label, const std::optional<std::string>& v, const char* why) {
    return v ? Measurement::textual(key, label, *v) : Measurement::absent(key, label, "", why);
}

void add_facts(CheckResult& r, const SoftwareStack& s, const SoftwareTarget& t) {
    auto& m = r.measurements;
    m.push_back(Measurement::textual("python_version", "Python", s.python_version));
    m.push_back(
        Measurement::textual("python_path", "Python interpreter", s.python_path + " (from " + s.python_how + ")"));
    m.push_back(text_or_absent("torch_version", "PyTorch", s.torch, "PyTorch is not importable"));
    if (!s.torch) return;
    m.push_back(text_or_absent("torch_cuda_version", "PyTorch built for CUDA", s.torch_cuda, "CPU-only build"));
    m.push_back(s.cudnn ? Measurement::textual("cudnn_version", "cuDNN", cudnn_text(*s.cudnn))
                        : Measurement::absent("cudnn_version", "cuDNN", "", "this build has no cuDNN"));
    m.push_back(text_or_absent("nccl_version", "NCCL", s.nccl, "this build has no NCCL"));
    std::string arch;
    for (auto& a : s.arch_list) arch += (arch.empty() ? "" : " ") + a;
    if (!arch.empty()) m.push_back(Measurement::textual("arch_list", "Build arch list", arch));
    m.push_back(
        Measurement::textual("torch_cuda_available", "torch.cuda.is_available()", s.cuda_available ? "True" : "False"));
    m.push_back(Measurement::number("torch_device_count", "GPUs PyTorch sees", s.device_count, "count"));
    m.push_back(Measurement::number("nvml_device_count", "GPUs NVML lists", t.nvml_gpus, "count"));
}

void add_others(CheckResult& r, const SoftwareStack& s) {
    auto& m = r.measurements;
    m.push_back(text_or_absent("torchvision_version", "torchvision", s.torchvision, "not installed"));
    m.push_back(text_or_absent("transformers_version", "transformers", s.transformers, "not installed"));
    m.push_back(text_or_absent("tensorflow_version", "TensorFlow", s.tensorflow, "not installed"));
    m.push_back(text_or_absent("jax_version", "JAX", s.jax, "not installed"));
}

void apply(CheckResult& r, const Rule& rule) {
    r.findings.emplace_back(rule.verdict, rule.text);
    r.verdict = worst(r.verdict, rule.verdict);
}

}  // namespace

CheckResult judge_software(const SoftwareStack& s, const SoftwareTarget& t) {
    if (t.amd_gpus > 0 && t.nvml_gpus == 0) return judge_software_amd(s, t);
    CheckResult r;
    add_facts(r, s, t);
    add_others(r, s);
    if (!s.torch) {
        r.verdict = Verdict::Skip;
        r.summary =
            "PyTorch is not importable by " + s.python_path + " (" + s.torch_error +
            "): nothing to check; install the framework the job uses, or point gpuvet at its Python with --python";
        return r;
    }
    const std::string torch = "PyTorch " + *s.torch;
    if (!s.torch_cuda) {
        r.verdict = t.nvml_gpus > 0 ? Verdict::Fail : Verdict::Skip;
        r.summary = torch + " is a CPU-only build: the wheel has no CUDA, so no job can use the " +
                    std::to_string(t.nvml_gpus) + " GPU(s). Fix: " + torch_cuda_wheel_command(t.driver_cuda);
        return r;
    }
    r.verdict = Verdict::Pass;
    std::optional<Rule> cuda;
    if (t.driver_cuda) apply(r, *(cuda = cuda_compat(*t.driver_cuda, *s.torch_cuda)));
    std::set<std::string> seen;
    for (const auto& cc : t.compute_capabilities)
        if (seen.insert(cc).second) apply(r, arch_compat(cc, s.arch_list));
    if (!s.cuda_available && t.nvml_gpus > 0) {
        std::string why = cuda && cuda->verdict == Verdict::Fail
                              ? " (the CUDA versions above do not match)"
                              : " (CUDA_VISIBLE_DEVICES, a broken driver install, or a "
                                "container without the GPUs)";
        apply(r, {Verdict::Fail, "torch.cuda.is_available() is False although NVML lists " +
                                     std::to_string(t.nvml_gpus) + " GPU(s)" + why});
    } else if (s.device_count < t.nvml_gpus) {
        apply(r, {Verdict::Warn, "PyTorch sees " + std::to_string(s.device_count) + " of the " +
                                     std::to_string(t.nvml_gpus) + " GPUs NVML lists (CUDA_VISIBLE_DEVICES or MIG?)"});
    }
    r.summary = torch + " (CUDA " + *s.torch_cuda + (s.cudnn ? ", cuDNN " + cudnn_text(*s.cudnn) : "") +
                (s.nccl ? ", NCCL " + *s.nccl : "") + ") on Python " + s.python_version;
    for (const auto& f : r.findings)
        if (f.verdict == r.verdict && r.verdict != Verdict::Pass) {
            r.summary += ": " + f.text;
            break;
        }
    if (r.verdict == Verdict::Pass) r.summary += ": can use all " + std::to_string(s.device_count) + " GPU(s)";
    return r;
}

}  // namespace gpuvet
