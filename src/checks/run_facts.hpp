// What is known about the machine before any check runs, computed once and then read-only: the
// host, the driver state, the GPU inventory, the GPUs --gpus selected and each GPU's SKU by one
// identification rule. Checks read facts from here, never from another check's results.
#pragma once
#include <vector>

#include "core/result.hpp"
#include "gpu/identify.hpp"
#include "gpu/inventory.hpp"

namespace gpuvet {

class SpecDb;

class RunFacts {
public:
    RunFacts() = default;
    // The host alone (gpuvet host): no GPU inventory was read.
    explicit RunFacts(MachineInfo machine) : machine_(std::move(machine)) {}
    // `machine.driver`: the driver state (driver_info_of(inventory) in a real run); `gpus`: the --gpus
    // indexes (empty = all), already checked against the inventory.
    // `devices`: the run's choice of GPU backend (gpu/device/backend_choice.hpp) that read the
    // inventory, for the checks that sample the GPUs again; null where no check samples them (tests).
    RunFacts(MachineInfo machine, Inventory inventory, const SpecDb* specs, const std::vector<int>& gpus,
             const DeviceBackend* devices = nullptr);
    RunFacts(const RunFacts&) = delete;  // the selection points into the inventory
    RunFacts& operator=(const RunFacts&) = delete;

    const MachineInfo& machine() const { return machine_; }
    const DriverInfo& driver() const { return machine_.driver; }
    const Inventory& inventory() const { return inventory_; }
    // The backend the inventory was read through (NVIDIA's, AMD's or both); throws an internal error
    // when the facts were built without one.
    const DeviceBackend& devices() const;
    bool has_devices() const { return devices_ != nullptr; }
    // Every GPU of the inventory, and the ones --gpus selected, in index order.
    const std::vector<GpuInfo>& all_gpus() const { return inventory_.gpus; }
    const std::vector<const GpuInfo*>& selected_gpus() const { return selected_; }
    // The identification of GPU `index` (identify_gpu); empty when the spec database is absent.
    const Identification& identification(int index) const;
    // Its SKU, or null when none fits or `index` is unknown.
    const GpuSpec* spec_of(int index) const { return identification(index).spec; }
    // The GPUs as the report's header lists them, with the SKU each was identified as.
    std::vector<GpuSummary> gpu_summaries() const;

private:
    MachineInfo machine_;
    Inventory inventory_;
    std::vector<const GpuInfo*> selected_;
    std::vector<Identification> ids_;  // parallel to inventory_.gpus
    const DeviceBackend* devices_ = nullptr;
};

}  // namespace gpuvet
