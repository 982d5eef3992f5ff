// ROCm SMI for the whole run, on stacks without AMD SMI (ROCm 5 and older): loaded and initialised
// (rsmi_init) once, shut down once at the end. ROCm SMI names a GPU by its index.
#pragma once
#include <string>

#include "gpu/bindings/rocm_smi_api.hpp"

namespace gpuvet {

class RocmSmiSession {
public:
    // Takes `api` (already resolved), calls rsmi_init and counts the GPUs; never throws.
    explicit RocmSmiSession(RocmSmiApi api);
    ~RocmSmiSession();
    RocmSmiSession(const RocmSmiSession&) = delete;
    RocmSmiSession& operator=(const RocmSmiSession&) = delete;

    // The run's session: GPUVET_LIBROCM_SMI, else librocm_smi64.so, opened on first use.
    static RocmSmiSession& shared();

    const RocmSmiApi& api() const { return api_; }
    bool ok() const { return reason_.empty(); }
    const std::string& absent_reason() const { return reason_; }
    int gpu_count() const { return count_; }
    // Which rsmi_frequencies_t the library writes (rocm_smi_api.hpp).
    RsmiFrequenciesLayout layout() const { return layout_; }
    // "ROCm SMI 5.0.0" from rsmi_version_get; empty when the library does not say.
    const std::string& version() const { return version_; }

private:
    RocmSmiApi api_;
    std::string reason_, version_;
    bool initialised_ = false;
    int count_ = 0;
    RsmiFrequenciesLayout layout_ = RsmiFrequenciesLayout::V5;
};

}  // namespace gpuvet
