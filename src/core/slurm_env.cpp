#include "core/slurm_env.hpp"

#include <cctype>
#include <cstdlib>

namespace gpuvet {

std::optional<std::string> process_env(const char* name) {
    const char* v = std::getenv(name);
    if (!v) return std::nullopt;
    return std::string(v);
}

std::optional<SlurmContext> slurm_context(const EnvLookup& env) {
    auto job = env("SLURM_JOB_ID");
    if (!job || job->empty()) return std::nullopt;
    SlurmContext s;
    s.job_id = *job;
    s.step_id = env("SLURM_STEP_ID");
    s.node = env("SLURMD_NODENAME");
    s.procid = env("SLURM_PROCID");
    s.step_gpus = env("SLURM_STEP_GPUS");
    s.job_gpus = env("SLURM_JOB_GPUS");
    s.cuda_visible_devices = env("CUDA_VISIBLE_DEVICES");
    s.gpus_on_node = env("SLURM_GPUS_ON_NODE");
    return s;
}

namespace {

long count_of(const std::optional<std::string>& v) {
    if (!v || v->empty()) return 0;
    char* end = nullptr;
    long n = std::strtol(v->c_str(), &end, 10);
    return *end == '\0' ? n : 0;
}

}  // namespace

std::optional<std::string> slurm_report_subfolder(const EnvLookup& env) {
    auto node = env("SLURMD_NODENAME");
    long tasks = count_of(env("SLURM_STEP_NUM_TASKS")), nodes = count_of(env("SLURM_STEP_NUM_NODES"));
    if (!node || node->empty() || tasks <= 1) return std::nullopt;
    std::string name = *node;
    if (tasks > nodes) {
        name += '-';
        name += env("SLURM_LOCALID").value_or("0");
    }
    for (char& c : name)  // a file name: Slurm's node names are [A-Za-z0-9._-] in practice
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') c = '_';
    if (name == "." || name == "..") name = std::string("_").append(name);
    return name;
}

namespace {

bool names_gpus(const std::optional<std::string>& v) { return v && !v->empty() && *v != "0"; }

}  // namespace

std::optional<std::string> slurm_gpu_problem(const SlurmContext& s) {
    bool given = names_gpus(s.gpus_on_node) || names_gpus(s.step_gpus) || names_gpus(s.job_gpus);
    if (!given || (s.cuda_visible_devices && !s.cuda_visible_devices->empty())) return std::nullopt;
    std::string what = s.gpus_on_node ? "SLURM_GPUS_ON_NODE=" + *s.gpus_on_node
                       : s.step_gpus  ? "SLURM_STEP_GPUS=" + *s.step_gpus
                                      : "SLURM_JOB_GPUS=" + *s.job_gpus;
    return "Slurm gave this task GPUs (" + what + ") but CUDA_VISIBLE_DEVICES is " +
           (s.cuda_visible_devices ? "empty" : "unset") + " on node " + s.node.value_or("?") +
           ": slurmd dropped the GPU devices of gres.conf, so a job here would see every GPU of the machine";
}

}  // namespace gpuvet
