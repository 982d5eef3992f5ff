#include "gpu/check_driver.hpp"

#include "core/context.hpp"

namespace gpuvet {

std::vector<CheckResult> GpuDriverCheck::run(CheckContext& ctx) {
    const DriverInfo& d = ctx.report->machine.driver;
    CheckResult r;
    if (!d.present) {
        // No driver is a fact about the machine, not a failure of gpuvet: the GPU checks SKIP.
        r.verdict = Verdict::Skip;
        r.summary = "no NVIDIA driver found (" + d.absent_reason + ")";
        return {r};
    }
    r.verdict = Verdict::Pass;
    r.summary = "NVIDIA driver loaded";
    if (d.driver_version) {
        r.summary += ", version " + *d.driver_version;
        r.measurements.push_back(Measurement::textual("driver_version", "Driver version", *d.driver_version));
    }
    if (d.cuda_driver_version) {
        int v = *d.cuda_driver_version;
        std::string cuda = std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
        r.summary += ", CUDA " + cuda;
        r.measurements.push_back(Measurement::textual("cuda_driver_version", "CUDA driver API", cuda));
    }
    if (d.libcuda_path) r.measurements.push_back(Measurement::textual("libcuda_path", "libcuda", *d.libcuda_path));
    r.summary += ".";
    return {r};
}

}  // namespace gpuvet
