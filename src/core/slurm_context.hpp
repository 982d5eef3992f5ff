// The Slurm job, step, node and GPU variables a report made under Slurm records (core/slurm_env
// reads them from the environment; a report reader reads them back).
#pragma once
#include <optional>
#include <string>

namespace gpuvet {

struct SlurmContext {
    std::string job_id;                    // SLURM_JOB_ID
    std::optional<std::string> step_id;    // SLURM_STEP_ID (absent in a batch script itself)
    std::optional<std::string> node;       // SLURMD_NODENAME: the Slurm node, not the hostname
    std::optional<std::string> procid;     // SLURM_PROCID: the task's rank in the step
    std::optional<std::string> step_gpus;  // SLURM_STEP_GPUS: global GPU ids of the step
    std::optional<std::string> job_gpus;   // SLURM_JOB_GPUS: only in batch and interactive jobs
    std::optional<std::string> cuda_visible_devices;
    std::optional<std::string> gpus_on_node;  // SLURM_GPUS_ON_NODE: how many GPUs this task was given
};

}  // namespace gpuvet
