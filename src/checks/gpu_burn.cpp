#include "checks/gpu_burn.hpp"

#include "core/context.hpp"
#include "gpu/inventory.hpp"
#include "checks/gpu_requirements.hpp"

namespace gpuvet {

double GpuBurnCheck::duration_for(const CheckContext& ctx) {
    if (ctx.options.burn_s) return *ctx.options.burn_s;
    switch (ctx.options.tier) {
        case Tier::Quick: return 20;
        case Tier::Standard: return 60;
        case Tier::Full: return 600;
    }
    return 60;
}

std::optional<std::string> GpuBurnCheck::unmet_requirement(const CheckContext& ctx) const {
    return gpu_requirement(ctx, GpuNeed::Cuda);
}

std::vector<CheckResult> GpuBurnCheck::run(CheckContext& ctx) {
    BurnOptions o = fixed_.value_or(BurnOptions{});
    if (!fixed_) o.duration_s = duration_for(ctx);
    return run_burn(ctx, o);
}

}  // namespace gpuvet
