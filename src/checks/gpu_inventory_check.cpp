#include "checks/gpu_inventory_check.hpp"

#include <algorithm>

#include "checks/run_facts.hpp"
#include "core/context.hpp"
#include "gpu/identify.hpp"
#include "checks/gpu_requirements.hpp"
#include "specs/spec_db.hpp"

namespace gpuvet {

std::optional<std::string> InventoryCheck::unmet_requirement(const CheckContext& ctx) const {
    return gpu_requirement(ctx);
}

CheckResult InventoryCheck::lost(const GpuInfo& g) {
    CheckResult r;
    r.verdict = Verdict::Skip;
    r.summary = "GPU " + std::to_string(g.index) + " fell off the bus while being read (see gpu.identity).";
    return r;
}

std::vector<const GpuInfo*> InventoryCheck::selected(const CheckContext& ctx) { return ctx.facts->selected_gpus(); }

std::vector<CheckResult> InventoryCheck::run(CheckContext& ctx) {
    std::vector<CheckResult> out;
    for (const GpuInfo* gp : selected(ctx)) {
        const GpuInfo& g = *gp;
        const GpuSpec* spec = ctx.facts->spec_of(g.index);
        CheckResult r = g.lost ? lost(g) : assess(g, spec, ctx);
        r.key = std::string(key());
        r.title = std::string(title());
        r.gpu = g.index;
        for (auto& m : r.measurements)
            if (!m.gpu) m.gpu = g.index;
        out.push_back(std::move(r));
    }
    return out;
}

void Findings::apply(CheckResult& r, const std::string& label, const std::string& pass_summary) const {
    Verdict v = Verdict::Pass;
    for (auto& [fv, _] : items) v = worst(v, fv);
    r.verdict = v;
    for (auto& [fv, text] : items) r.findings.push_back(Finding{fv, text, ""});
    if (v == Verdict::Pass) {
        r.summary = pass_summary;
        return;
    }
    for (auto& [fv, text] : items)
        if (fv == v) {
            r.summary = label + ": " + text +
                        (items.size() > 1 ? " (and " + std::to_string(items.size() - 1) + " more)." : ".");
            return;
        }
}

std::string gpu_label(const GpuInfo& g, const GpuSpec* spec) {
    std::string s = "GPU " + std::to_string(g.index);
    if (spec) s += " (" + spec->name + ")";
    else if (g.name) s += " (" + *g.name + ")";
    return s;
}

}  // namespace gpuvet
