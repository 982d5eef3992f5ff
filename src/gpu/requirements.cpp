#include "gpu/requirements.hpp"

#include "core/context.hpp"
#include "gpu/inventory.hpp"

namespace gpuvet {

std::optional<std::string> gpu_requirement(const CheckContext& ctx, GpuNeed need, bool full_reason) {
    const DriverInfo& d = ctx.report->machine.driver;
    if (!d.present)
        return full_reason ? "no NVIDIA driver found (" + d.absent_reason + ")"
                           : std::string("no NVIDIA driver found (see gpu.driver)");
    if (!ctx.inventory) return std::string("the GPU inventory was not read");
    if (ctx.inventory->gpus.empty()) {
        std::string why = "the driver sees no GPUs";
        if (!ctx.inventory->errors.empty()) why += " (" + ctx.inventory->errors.front() + ")";
        return why;
    }
    if (need == GpuNeed::Cuda && !ctx.inventory->cuda_present)
        return "CUDA is unavailable: " + ctx.inventory->cuda_absent_reason;
    return std::nullopt;
}

}  // namespace gpuvet
