// NVML for the whole run: loaded and initialised (nvmlInit_v2) once, shut down (nvmlShutdown)
// once at the end. Every NVML reader goes through the session's backend, so the driver's state
// and a test double's scripted call counts see one lifecycle per run.
#pragma once
#include <string>

#include "gpu/bindings/nvml_api.hpp"

namespace gpuvet {

class NvmlSession {
public:
    // Loads `api` (already resolved) and calls nvmlInit; never throws: see absent_reason().
    explicit NvmlSession(NvmlApi api);
    ~NvmlSession();
    NvmlSession(const NvmlSession&) = delete;
    NvmlSession& operator=(const NvmlSession&) = delete;

    // The run's session: GPUVET_LIBNVML, else libnvidia-ml.so.1, opened on first use and shut
    // down when the process exits.
    static NvmlSession& shared();

    const NvmlApi& api() const { return api_; }
    bool ok() const { return reason_.empty(); }
    // Why NVML is unusable: the library did not load or nvmlInit failed; empty when ok().
    const std::string& absent_reason() const { return reason_; }
    int init_status() const { return init_status_; }                       // nvmlInit's code when it failed, else 0
    std::string init_advice() const { return nvml_advice(init_status_); }  // what to do about it
    bool loaded() const { return api_.ok(); }

private:
    NvmlApi api_;
    std::string reason_;
    int init_status_ = 0;
    bool initialised_ = false;
};

}  // namespace gpuvet
