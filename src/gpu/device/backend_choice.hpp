// Which vendor's management library reads this box's GPUs, chosen once per run: NVIDIA's NVML,
// AMD's AMD SMI (ROCm SMI where a stack has no AMD SMI), both on a box with GPUs of both vendors,
// or neither. inventory, check (through the run's facts), top, export, run and the burn's
// telemetry all read the GPUs through devices(), so they see the same GPUs with the same indexes:
// NVIDIA's first, in NVML's order, then AMD's in AMD SMI's.
#pragma once
#include <functional>
#include <memory>
#include <string>

#include "gpu/device/backend.hpp"

namespace gpuvet {

struct VendorBackend {
    std::string vendor;                      // "NVIDIA", "AMD"
    std::string library;                     // "NVML", "AMD SMI", "ROCm SMI"
    const DeviceBackend* backend = nullptr;  // the library, usable or not; null when none was tried
    int gpus = 0;                            // GPUs it lists (0 when unusable)
    std::string absent_reason;               // why it lists none: the library's words; empty when it lists some
    bool in_use() const { return gpus > 0; }
};

class GpuBackends {
public:
    // The libraries to choose from: NVML's, AMD SMI's, and ROCm SMI's (opened only when AMD SMI
    // cannot be used). Any may be null; tests pass their own.
    GpuBackends(const DeviceBackend* nvml, const DeviceBackend* amd_smi,
                std::function<const DeviceBackend*()> rocm_smi = {});
    ~GpuBackends();
    GpuBackends(const GpuBackends&) = delete;
    GpuBackends& operator=(const GpuBackends&) = delete;

    // The run's choice over NvmlBackend::shared(), AmdSmiBackend::shared() and RocmSmiBackend::shared().
    static const GpuBackends& shared();

    // What the commands read: NVML alone (also when no vendor lists a GPU and NVML is usable, as
    // before AMD was read), AMD's library alone, both joined, or, with neither, a backend whose
    // absent reason names both.
    const DeviceBackend& devices() const { return *devices_; }
    const VendorBackend& nvidia() const { return nvidia_; }
    const VendorBackend& amd() const { return amd_; }
    bool both() const { return nvidia_.in_use() && amd_.in_use(); }
    bool amd_only() const { return amd_.in_use() && !nvidia_.in_use(); }
    // "NVIDIA" or "AMD" for an index of devices().
    std::string vendor_of(int index) const;
    // "no GPU driver found: NVIDIA (why), AMD (why)".
    std::string none_reason() const;

private:
    VendorBackend nvidia_, amd_;
    std::unique_ptr<DeviceBackend> owned_;  // the joined or the empty backend, when one is chosen
    const DeviceBackend* devices_ = nullptr;
};

}  // namespace gpuvet
