// AMD SMI for the whole run: loaded and initialised (amdsmi_init with AMDSMI_INIT_AMD_GPUS) once,
// shut down once at the end, and the GPUs' processor handles listed once, socket by socket.
#pragma once
#include <string>
#include <vector>

#include "gpu/bindings/amd_smi_api.hpp"

namespace gpuvet {

class AmdSmiSession {
public:
    // Takes `api` (already resolved), calls amdsmi_init and lists the GPUs; never throws.
    explicit AmdSmiSession(AmdSmiApi api);
    ~AmdSmiSession();
    AmdSmiSession(const AmdSmiSession&) = delete;
    AmdSmiSession& operator=(const AmdSmiSession&) = delete;

    // The run's session: GPUVET_LIBAMD_SMI, else libamd_smi.so, opened on first use.
    static AmdSmiSession& shared();

    const AmdSmiApi& api() const { return api_; }
    bool ok() const { return reason_.empty(); }
    // Why AMD SMI is unusable: the library did not load, amdsmi_init failed, or the GPUs could
    // not be listed; empty when ok().
    const std::string& absent_reason() const { return reason_; }
    // One handle per GPU (per partition in CPX mode), in AMD SMI's order.
    const std::vector<amdsmi::amdsmi_processor_handle>& gpus() const { return gpus_; }

private:
    std::string list_gpus();

    AmdSmiApi api_;
    std::string reason_;
    bool initialised_ = false;
    std::vector<amdsmi::amdsmi_processor_handle> gpus_;
};

}  // namespace gpuvet
