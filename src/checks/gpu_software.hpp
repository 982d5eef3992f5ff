// gpu.software: the deep-learning stack of the server's own Python (PyTorch and what it was built
// with, TensorFlow and JAX when installed) held against the driver and the GPUs. No Python or no
// PyTorch is a SKIP with the reason, never a failure of the box.
#pragma once
#include <nlohmann/json.hpp>

#include "checks/gpu_software_judge.hpp"
#include "core/check.hpp"
#include "core/host_fs.hpp"
#include "train/python_env.hpp"
#include "train/train_settings.hpp"

namespace gpuvet {

class RunFacts;
struct Inventory;

// The probe's JSON as a SoftwareStack (missing or mistyped fields stay absent).
SoftwareStack software_stack_of(const nlohmann::json& j, const PythonChoice& python);
// The driver's CUDA version, the GPU count and the compute capabilities, from the run's facts; on
// AMD GPUs their gfx targets, the amdgpu driver's version and the ROCm user space under `fs`'s root.
SoftwareTarget software_target_of(const RunFacts& facts, const HostFs& fs);

// The same from the inventory alone (gpuvet inventory): compute capabilities as NVML reports them.
SoftwareTarget software_target_of(const Inventory& inv, const HostFs& fs);
// The ROCm user space's version ($ROCM_PATH, else /opt/rocm, /.info/version: "6.3.1-48"), if installed.
std::optional<std::string> read_rocm_user_space(const HostFs& fs);
// gpu.software's whole reading for `gpuvet inventory`: find the Python, probe, judge; a failure is
// an ERROR result with the message, no Python a SKIP.
CheckResult read_software(const std::optional<std::string>& python, const Inventory& inv, const HostFs& fs,
                          const std::atomic<bool>* stop);

// Runs the probe with `python`: the stack, or a runtime_error naming what went wrong.
SoftwareStack probe_software(const PythonChoice& python, const std::atomic<bool>* stop);

class GpuSoftwareCheck final : public Check {
public:
    explicit GpuSoftwareCheck(TrainSettings s = {}) : settings_(std::move(s)) {}
    std::string_view key() const override { return "gpu.software"; }
    std::string_view title() const override { return "Deep-learning software stack"; }
    std::optional<std::string> unmet_requirement(const CheckContext& ctx) const override;
    std::vector<CheckResult> run(CheckContext& ctx) override;

private:
    TrainSettings settings_;
};

}  // namespace gpuvet
