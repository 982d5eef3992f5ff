#include "checks/gpu_software.hpp"

#include <cstdlib>

#include "checks/gpu_requirements.hpp"
#include "checks/run_facts.hpp"
#include "core/context.hpp"
#include "core/error.hpp"
#include "gpu/inventory.hpp"
#include "specs/gpu_spec.hpp"
#include "train/python_script.hpp"

namespace gpuvet {

namespace {

std::optional<std::string> text_of(const nlohmann::json& j, const char* k) {
    auto it = j.find(k);
    if (it == j.end() || !it->is_string()) return std::nullopt;
    return it->get<std::string>();
}

}  // namespace

SoftwareStack software_stack_of(const nlohmann::json& j, const PythonChoice& python) {
    SoftwareStack s;
    s.python_version = text_of(j, "python").value_or("unknown");
    s.python_path = text_of(j, "executable").value_or(python.path);
    if (s.python_path != python.path) s.python_path = python.path + " = " + s.python_path;
    s.python_how = python.how;
    s.torch = text_of(j, "torch");
    s.torch_error = text_of(j, "torch_error").value_or("no torch version reported");
    s.torch_cuda = text_of(j, "torch_cuda");
    s.torch_hip = text_of(j, "torch_hip");
    if (auto it = j.find("cudnn"); it != j.end() && it->is_number_integer()) s.cudnn = it->get<int>();
    s.nccl = text_of(j, "nccl");
    if (auto it = j.find("arch_list"); it != j.end() && it->is_array())
        for (auto& a : *it)
            if (a.is_string()) s.arch_list.push_back(a.get<std::string>());
    if (auto it = j.find("cuda_available"); it != j.end() && it->is_boolean()) s.cuda_available = it->get<bool>();
    if (auto it = j.find("device_count"); it != j.end() && it->is_number_integer()) s.device_count = it->get<int>();
    s.torchvision = text_of(j, "torchvision");
    s.transformers = text_of(j, "transformers");
    s.tensorflow = text_of(j, "tensorflow");
    s.jax = text_of(j, "jax");
    return s;
}

namespace {

// AMD's GPUs: their count, gfx targets (the SKU's where the driver does not say, as on ROCm SMI)
// and the amdgpu driver's version.
void add_amd(SoftwareTarget& t, const Inventory& inv, const RunFacts* facts) {
    for (const auto& g : inv.gpus) {
        if (!is_amd_gpu(g)) continue;
        ++t.amd_gpus;
        if (g.gfx_target) t.gfx_targets.push_back(*g.gfx_target);
        else if (const GpuSpec* sp = facts ? facts->spec_of(g.index) : nullptr; sp && !sp->gfx_target.empty())
            t.gfx_targets.push_back(sp->gfx_target);
    }
    if (inv.amd_driver_version) t.amd_driver = *inv.amd_driver_version;
}

}  // namespace

std::optional<std::string> read_rocm_user_space(const HostFs& fs) {
    const char* env = std::getenv("ROCM_PATH");
    std::string dir = env && *env ? env : "/opt/rocm";
    return fs.read_line(dir + "/.info/version");
}

SoftwareTarget software_target_of(const RunFacts& facts, const HostFs& fs) {
    SoftwareTarget t;
    t.driver_cuda = facts.driver().cuda_driver_version;
    for (const auto& g : facts.all_gpus()) {
        if (is_amd_gpu(g)) continue;
        ++t.nvml_gpus;
        if (g.compute_capability) t.compute_capabilities.push_back(*g.compute_capability);
        else if (const GpuSpec* sp = facts.spec_of(g.index); sp && !sp->compute_capability.empty())
            t.compute_capabilities.push_back(sp->compute_capability);
    }
    add_amd(t, facts.inventory(), &facts);
    if (t.amd_gpus > 0) t.rocm_user_space = read_rocm_user_space(fs);
    return t;
}

SoftwareTarget software_target_of(const Inventory& inv, const HostFs& fs) {
    SoftwareTarget t;
    if (inv.cuda_driver_version) t.driver_cuda = *inv.cuda_driver_version;
    for (const auto& g : inv.gpus) {
        if (is_amd_gpu(g)) continue;
        ++t.nvml_gpus;
        if (g.compute_capability) t.compute_capabilities.push_back(*g.compute_capability);
    }
    add_amd(t, inv, nullptr);
    if (t.amd_gpus > 0) t.rocm_user_space = read_rocm_user_space(fs);
    return t;
}

CheckResult read_software(const std::optional<std::string>& python, const Inventory& inv, const HostFs& fs,
                          const std::atomic<bool>* stop) {
    CheckResult r;
    PythonLookup py = find_python(python);
    if (!py.found) {
        r.verdict = Verdict::Skip;
        r.summary = py.absent_reason;
        return r;
    }
    try {
        return judge_software(probe_software(*py.found, stop), software_target_of(inv, fs));
    } catch (const Error& e) {
        r.verdict = Verdict::Error;
        r.summary = std::string(e.what()) + "; " + e.advice();
    } catch (const Interrupted&) {
        r.summary = kInterrupted;
    }
    return r;
}

SoftwareStack probe_software(const PythonChoice& python, const std::atomic<bool>* stop) {
    ScriptRun run;
    run.python = python.path;
    run.script = software_probe_script();
    run.name = "software_probe.py";
    // One import of torch: seconds; a minute covers a cold disk. No heartbeat: the idle limit is the total.
    run.idle_timeout_s = run.total_timeout_s = train_watchdog_s(90);
    run.stop = stop;
    ScriptOutcome out = run_script(run);
    if (out.failure == ScriptFailure::Interrupted) throw Interrupted{};
    if (out.failure != ScriptFailure::None)
        throw runtime_error("the software probe failed: " + out.message,
                            "run the same Python by hand ('" + python.path + " -c \"import torch\"') to see why");
    return software_stack_of(out.result, python);
}

std::optional<std::string> GpuSoftwareCheck::unmet_requirement(const CheckContext& ctx) const {
    return gpu_requirement(ctx, GpuNeed::Inventory);
}

std::vector<CheckResult> GpuSoftwareCheck::run(CheckContext& ctx) {
    PythonLookup py = find_python(settings_.python);
    CheckResult r;
    if (!py.found) {
        r.verdict = Verdict::Skip;
        r.summary = py.absent_reason + ": the framework stack cannot be read; give --python PATH";
        return {r};
    }
    r = judge_software(probe_software(*py.found, ctx.stop), software_target_of(*ctx.facts, HostFs(ctx.options.root)));
    return {r};
}

}  // namespace gpuvet
