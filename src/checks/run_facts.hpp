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
    RunFacts(MachineInfo machine, Inventory inventory, const SpecDb* specs, const std::vector<int>& gpus);
    RunFacts(const RunFacts&) = delete;  // the selection points into the inventory
    RunFacts& operator=(const RunFacts&) = delete;

    const MachineInfo& machine() const { return machine_; }
    const DriverInfo& driver() const { return machine_.driver; }
    const Inventory& inventory() const { return inventory_; }
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
};

}  // namespace gpuvet
