#include "checks/gpu_burn.hpp"

#include "checks/amd_burn.hpp"
#include "checks/amd_measurement.hpp"
#include "checks/gpu_requirements.hpp"
#include "checks/run_facts.hpp"
#include "core/context.hpp"
#include "gpu/inventory.hpp"
#include "specs/gpu_spec.hpp"

namespace gpuvet {

double GpuBurnCheck::duration_for(Tier tier, std::optional<double> duration_s) {
    if (duration_s) return *duration_s;
    switch (tier) {
        case Tier::Quick: return 20;
        case Tier::Standard: return 60;
        case Tier::Full: return 600;
    }
    return 60;
}

std::optional<std::string> GpuBurnCheck::unmet_requirement(const CheckContext& ctx) const {
    if (amd_measure::run_is_amd(ctx)) return amd_measure::kernel_requirement();
    return gpu_requirement(ctx, GpuNeed::Cuda);
}

std::vector<CheckResult> GpuBurnCheck::run(CheckContext& ctx) {
    BurnOptions o = fixed_.value_or(BurnOptions{});
    if (!fixed_) o.duration_s = duration_for(ctx.options.tier, duration_s_);
    if (amd_measure::run_is_amd(ctx)) return amd_measure::burn(ctx, o);
    BurnTargets t;
    t.gpus = ctx.facts->selected_gpus();
    for (const GpuInfo* g : t.gpus) {
        const GpuSpec* s = ctx.facts->spec_of(g->index);
        t.skus.push_back(s ? s->key : g->name.value_or(""));
    }
    t.cuda_driver_version = ctx.facts->inventory().cuda_driver_version.value;
    return run_burn(ctx, o, t);
}

}  // namespace gpuvet
