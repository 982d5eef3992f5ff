// gpu.burn on AMD GPUs: the GPUs selected and opened as for the other AMD measurements
// (amd_measurement.hpp), each with what AMD SMI (or ROCm SMI) describes of it, then the burn's HIP
// loads (gpu/amd_burn.cpp) under the same telemetry and verdicts as on NVIDIA.
#include "checks/amd_burn.hpp"

#include "checks/amd_measurement.hpp"
#include "core/context.hpp"
#include "gpu/burn_load.hpp"
#include "gpu/device/backend_choice.hpp"
#include "specs/gpu_spec.hpp"

namespace gpuvet::amd_measure {

std::vector<CheckResult> burn(CheckContext& ctx, const BurnOptions& opt) {
    std::vector<Member> members = open_gpus(ctx);
    if (members.empty()) {
        CheckResult r;
        r.key = "gpu.burn";
        r.title = "Sustained load (burn)";
        r.gpu = -1;
        r.verdict = Verdict::Skip;
        r.summary = "no GPU selected";
        return {r};
    }
    const VendorBackend& amd = GpuBackends::shared().amd();
    const std::string library = amd.library.empty() ? "AMD SMI" : amd.library;
    std::vector<GpuBurnOutcome> outcomes;
    std::vector<HipSession*> sessions;
    for (Member& m : members) {
        GpuBurnOutcome o;
        o.gpu = m.index;
        const DeviceFacts& f = m.facts;
        if (f.name) o.name = *f.name;
        o.sku = m.spec ? m.spec->key : o.name;
        // The junction's critical threshold (AMD SMI, ROCm SMI) is where the GPU throttles on heat,
        // the VRAM's critical one the memory's.
        if (f.temperature_slowdown_c) o.slowdown_temp_c = *f.temperature_slowdown_c;
        if (f.temperature_memory_max_c) o.memory_max_temp_c = *f.temperature_memory_max_c;
        o.slowdown_source = library + " junction critical threshold of this GPU";
        o.memory_max_source = library + " VRAM critical threshold of this GPU";
        if (f.power_default_limit_w) o.default_power_limit_w = *f.power_default_limit_w;
        if (!m.session) o.load_error = m.error + (m.advice.empty() ? "" : " (" + m.advice + ")");
        outcomes.push_back(std::move(o));
        sessions.push_back(m.session.get());
    }
    return run_burn_hip(ctx, opt, std::move(outcomes), sessions, library);
}

}  // namespace gpuvet::amd_measure
