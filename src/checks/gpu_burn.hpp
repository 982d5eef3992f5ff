// gpu.burn: sustained full load on every selected GPU with correctness, telemetry and verdicts.
// In `gpuvet check` it runs last among the GPU checks: 20 s with --quick, 60 s by default,
// 10 minutes with --full, or --burn-duration.
#pragma once
#include <optional>

#include "core/check.hpp"
#include "gpu/burn.hpp"

namespace gpuvet {

class GpuBurnCheck final : public Check {
public:
    // `gpuvet check`: the tier's duration unless `duration_s` is given.
    explicit GpuBurnCheck(std::optional<double> duration_s = std::nullopt) : duration_s_(duration_s) {}
    // `gpuvet burn` passes its own options (duration, dtype, load, sample rate).
    explicit GpuBurnCheck(BurnOptions o) : fixed_(o) {}
    std::string_view key() const override { return "gpu.burn"; }
    std::string_view title() const override { return "Sustained load (burn)"; }
    std::optional<std::string> unmet_requirement(const CheckContext& ctx) const override;
    std::vector<CheckResult> run(CheckContext& ctx) override;

    // The tier's duration unless `duration_s` is given.
    static double duration_for(Tier tier, std::optional<double> duration_s);

private:
    std::optional<double> duration_s_;
    std::optional<BurnOptions> fixed_;
};

}  // namespace gpuvet
