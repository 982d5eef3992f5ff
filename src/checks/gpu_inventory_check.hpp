// Base of the checks drawn from the GPU inventory (gpu.identity, gpu.tenancy, gpu.health,
// gpu.pcie_link, gpu.nvlink): the shared requirement (a driver and an inventory) and one result
// per selected GPU.
#pragma once
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/check.hpp"
#include "gpu/inventory.hpp"

namespace gpuvet {

struct GpuSpec;

class InventoryCheck : public Check {
public:
    std::optional<std::string> unmet_requirement(const CheckContext& ctx) const override;
    std::vector<CheckResult> run(CheckContext& ctx) override;

protected:
    // One GPU's result. `spec` is the SKU identify_gpu() chose, or null. Key/title/gpu are filled in.
    virtual CheckResult assess(const GpuInfo& gpu, const GpuSpec* spec, CheckContext& ctx) = 0;
    // A GPU that fell off the bus while being read: SKIP here; gpu.identity reports it as FAIL.
    virtual CheckResult lost(const GpuInfo& gpu);
    // The GPUs of the inventory that --gpus selects (all when it is empty), lost ones included.
    static std::vector<const GpuInfo*> selected(const CheckContext& ctx);
};

// Findings of one GPU: the verdict is the worst; the summary names the first of the worst.
struct Findings {
    std::vector<std::pair<Verdict, std::string>> items;
    void add(Verdict v, std::string text) { items.emplace_back(v, std::move(text)); }
    // Sets r.verdict, r.summary ("<label>: <worst finding>." or pass_summary) and r.findings.
    void apply(CheckResult& r, const std::string& label, const std::string& pass_summary) const;
};

// "GPU 3 (H100 SXM5 80GB)" for sentences.
std::string gpu_label(const GpuInfo& g, const GpuSpec* spec);

}  // namespace gpuvet
