// What a process started by Slurm sees of it (srun.1, gres.shtml of Slurm 22.05): the job and step
// ids, the node name, the task's rank and the GPU variables. Every report made under Slurm records
// them, so a fleet's node reports say which node and which GPUs each was.
#pragma once
#include <functional>
#include <optional>
#include <string>

#include "core/slurm_context.hpp"

namespace gpuvet {

using EnvLookup = std::function<std::optional<std::string>(const char*)>;
// The process environment.
std::optional<std::string> process_env(const char* name);

// The context when the process runs in a Slurm job (SLURM_JOB_ID set), else nothing.
std::optional<SlurmContext> slurm_context(const EnvLookup& env = process_env);

// The folder a --report of this process goes into under its --report DIR, when the process is one of
// several tasks of a Slurm step (SLURM_STEP_NUM_TASKS above 1): the node's name (SLURMD_NODENAME),
// with "-<SLURM_LOCALID>" when the step runs several tasks per node. Every task then writes its own
// folder of a shared DIR, none overwrites another's. Nothing outside such a step.
std::optional<std::string> slurm_report_subfolder(const EnvLookup& env = process_env);

// When Slurm gave the task GPUs but CUDA_VISIBLE_DEVICES is empty or unset (what gres.conf File=
// lines that do not name character devices produce, so the job would silently use every GPU):
// the message that says so. Nothing when the GPU variables agree.
std::optional<std::string> slurm_gpu_problem(const SlurmContext& s);

}  // namespace gpuvet
