#include "checks/gpu_requirements.hpp"

#include "checks/run_facts.hpp"
#include "core/context.hpp"
#include "gpu/inventory.hpp"

namespace gpuvet {

std::optional<std::string> gpu_requirement(const CheckContext& ctx, GpuNeed need, bool full_reason) {
    if (!ctx.facts) return std::string("the GPU inventory was not read");
    const DriverInfo& d = ctx.facts->driver();
    const Inventory& inv = ctx.facts->inventory();
    // A named problem (module not loaded, MIG hiding the GPUs from CUDA) says more than the loader.
    auto problem = [&]() -> std::optional<std::string> {
        if (d.problems.empty()) return std::nullopt;
        // The report's header prints the whole problem with its fix; checks cite its headline.
        return full_reason ? d.problems.front().headline : d.problems.front().headline + " (see gpu.driver)";
    };
    if (!d.present) {
        if (auto p = problem()) return p;
        if (full_reason) return no_gpu_driver_text(d);
        return d.amd_looked_for() ? "no GPU driver found (see gpu.driver)"
                                  : std::string("no NVIDIA driver found (see gpu.driver)");
    }
    if (inv.gpus.empty()) {
        std::string why = "the driver sees no GPUs";
        if (!inv.errors.empty()) why += " (" + inv.errors.front() + ")";
        return why;
    }
    if (need == GpuNeed::Cuda && !inv.cuda_present) {
        if (auto p = problem()) return p;
        if (d.amd_present && !d.nvidia_found)
            return "not judged on AMD: this check runs CUDA kernels, which AMD GPUs cannot run (CUDA: " +
                   inv.cuda_absent_reason + ")";
        return "CUDA is unavailable: " + inv.cuda_absent_reason;
    }
    return std::nullopt;
}

}  // namespace gpuvet
