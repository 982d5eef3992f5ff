// gpu.train: a standard training benchmark (ResNet-50, BERT, a GPT step) run with the server's own
// Python and PyTorch, judged against the public baselines of the same GPU (gpu_train_judge.hpp).
// Part of `check --full` and `gpuvet bench train`; SKIPs without Python or PyTorch.
#pragma once
#include <nlohmann/json.hpp>

#include "checks/gpu_train_judge.hpp"
#include "core/check.hpp"
#include "train/train_settings.hpp"

namespace gpuvet {

// The script's "ok" result as figures; `world` devices were asked for.
TrainFigures train_figures_of(const nlohmann::json& j);
// A script's "error" result (error_kind, message) as the check's result: SKIP for what is missing
// from the stack, FAIL for what the box cannot do (CPU-only wheel, out of memory, NCCL). `amd`: the
// box's GPUs are AMD ones, so the fix for a wheel without GPU support is a ROCm wheel.
CheckResult train_error_result(const std::string& kind, const std::string& message, bool amd = false);

class GpuTrainCheck final : public Check {
public:
    explicit GpuTrainCheck(TrainSettings s = {}) : settings_(std::move(s)) {}
    std::string_view key() const override { return "gpu.train"; }
    std::string_view title() const override { return "Training benchmark"; }
    std::optional<std::string> unmet_requirement(const CheckContext& ctx) const override;
    std::vector<CheckResult> run(CheckContext& ctx) override;

private:
    TrainSettings settings_;
};

}  // namespace gpuvet
