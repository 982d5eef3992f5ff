#include "checks/run_facts.hpp"

#include <algorithm>

#include "core/error.hpp"
#include "specs/gpu_spec.hpp"
#include "specs/spec_db.hpp"

namespace gpuvet {

RunFacts::RunFacts(MachineInfo machine, Inventory inventory, const SpecDb* specs, const std::vector<int>& gpus,
                   const DeviceBackend* devices)
    : machine_(std::move(machine)), inventory_(std::move(inventory)), devices_(devices) {
    for (const GpuInfo& g : inventory_.gpus) {
        ids_.push_back(specs ? identify_gpu(g, *specs) : Identification{});
        if (gpus.empty() || std::find(gpus.begin(), gpus.end(), g.index) != gpus.end()) selected_.push_back(&g);
    }
}

const DeviceBackend& RunFacts::devices() const {
    if (!devices_) throw internal_error("the run's facts were built without a GPU backend");
    return *devices_;
}

const Identification& RunFacts::identification(int index) const {
    static const Identification none;
    for (std::size_t i = 0; i < inventory_.gpus.size(); ++i)
        if (inventory_.gpus[i].index == index) return ids_[i];
    return none;
}

std::vector<GpuSummary> RunFacts::gpu_summaries() const {
    std::vector<GpuSummary> out = gpu_summaries_of(inventory_);
    for (GpuSummary& s : out) {
        const Identification& id = identification(s.index);
        if (!id.spec) continue;
        s.sku = id.spec->key;
        s.sku_match = id.how;
    }
    return out;
}

}  // namespace gpuvet
