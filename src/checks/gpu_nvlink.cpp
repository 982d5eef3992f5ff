#include "checks/gpu_nvlink.hpp"

#include "checks/run_facts.hpp"
#include "core/context.hpp"
#include "core/strings.hpp"
#include "specs/gpu_spec.hpp"

namespace gpuvet {

bool nvlink_needs_bridge(const GpuSpec& spec) {
    std::string f = to_lower(spec.form_factor);
    return f == "pcie" || f == "nvl";
}

namespace {

void topology_row(const Inventory& inv, const GpuInfo& g, CheckResult& r) {
    const auto& m = inv.topology.matrix;
    if (m.empty()) {
        if (!inv.topology.absent_reason.empty()) r.details.push_back("topology: " + inv.topology.absent_reason);
        return;
    }
    if (g.index < 0 || std::size_t(g.index) >= m.size()) return;
    std::string row = "topology, GPU" + std::to_string(g.index) + " to GPU0.." + std::to_string(m.size() - 1) + ":";
    for (auto& cell : m[std::size_t(g.index)]) row += " " + cell;
    r.details.push_back(row);
}

// The driver could not say how the links stand (no links listed, with the reason).
void judge_unreadable_links(const GpuInfo& g, const GpuSpec& sp, const std::string& label, int gpus_in_box,
                            CheckResult& r) {
    r.measurements.push_back(
        Measurement::absent("nvlink_links_active", "NVLink links active", "count", g.nvlink_absent_reason));
    if (nvlink_needs_bridge(sp)) {
        // Without a bridge the driver has no links to report: the usual state of these cards.
        r.verdict = Verdict::Skip;
        r.summary = "No NVLink bridge on " + label + ": the " + sp.name +
                    " links GPUs only through an optional bridge (the driver reports NVLink as " +
                    g.nvlink_absent_reason + ").";
        return;
    }
    if (gpus_in_box == 1) {
        r.verdict = Verdict::Pass;
        r.summary = label + " is the only GPU in the box: its NVLink state could not be read (" +
                    g.nvlink_absent_reason + "), and none is needed, since NVLink only carries traffic between GPUs.";
        return;
    }
    r.verdict = Verdict::Warn;
    r.summary = label + ": the NVLink state could not be read (" + g.nvlink_absent_reason + ").";
}

// Every link the spec sheet lists, trained: a link down costs its share of GPU-to-GPU bandwidth.
void judge_links(const GpuInfo& g, const GpuSpec& sp, const std::string& label, int present, int active,
                 CheckResult& r) {
    Findings f;
    std::string inactive;
    for (auto& l : g.nvlinks)
        if (l.active && !*l.active) inactive += (inactive.empty() ? "" : ", ") + std::to_string(l.link);
    if (!inactive.empty())
        f.add(Verdict::Fail, "NVLink link(s) " + inactive +
                                 " inactive: GPU-to-GPU traffic loses that bandwidth or falls back to PCIe");
    if (sp.nvlink_links && present < *sp.nvlink_links)
        f.add(Verdict::Fail, "the driver reports " + std::to_string(present) + " NVLink links where the " + sp.name +
                                 " has " + std::to_string(*sp.nvlink_links));
    f.apply(r, label,
            label + ": " + std::to_string(active) + " of " + std::to_string(present) + " NVLink links active, as the " +
                sp.name + " should have.");
}

}  // namespace

CheckResult GpuNvlinkCheck::assess(const GpuInfo& g, const GpuSpec* spec, CheckContext& ctx) {
    CheckResult r;
    const std::string label = gpu_label(g, spec);
    topology_row(ctx.facts->inventory(), g, r);
    int present = int(g.nvlinks.size());
    int active = active_nvlinks(g);
    // Links matter between the GPUs of this box: with a single GPU there is no peer to carry traffic to.
    const int gpus_in_box = int(ctx.facts->all_gpus().size());

    if (!spec) {
        r.verdict = Verdict::Skip;
        r.summary = label + " is not in the spec database, so its NVLink links are unknown.";
        return r;
    }
    if (!spec->nvlink_generation) {
        r.verdict = Verdict::Skip;
        r.summary = "The " + spec->name + " has no NVLink.";
        return r;
    }
    if (present == 0 && !g.nvlink_absent_reason.empty()) {
        judge_unreadable_links(g, *spec, label, gpus_in_box, r);
        return r;
    }

    Measurement am = Measurement::number("nvlink_links_active", "NVLink links active", active, "count");
    if (spec->nvlink_links && gpus_in_box != 1) {
        Reference ref;
        ref.spec = *spec->nvlink_links;
        ref.fail_below = *spec->nvlink_links;
        ref.source = "gpuvet spec database (data/gpus.toml): " + spec->name;
        am.against(ref);
    }
    r.measurements.push_back(am);
    r.measurements.push_back(Measurement::number("nvlink_links_present", "NVLink links present", present, "count"));

    if (nvlink_needs_bridge(*spec) && active == 0) {
        r.verdict = Verdict::Skip;
        r.summary =
            "No NVLink bridge on " + label + ": the " + spec->name + " links GPUs only through an optional bridge.";
        return r;
    }

    if (gpus_in_box == 1) {
        // A one-GPU slice of an HGX board reports its links present but untrained: nothing to link to.
        r.verdict = Verdict::Pass;
        r.summary = label + " is the only GPU in the box: " + std::to_string(active) + " of " +
                    std::to_string(present) +
                    " NVLink links active, and none is needed, since NVLink only carries traffic between GPUs.";
        if (active < present)
            r.details.push_back(
                std::to_string(present - active) +
                " link(s) not trained: expected without a peer GPU "
                "(a one-GPU slice of an NVLink board); they would matter only with other GPUs in the box");
        return r;
    }

    judge_links(g, *spec, label, present, active, r);
    return r;
}

}  // namespace gpuvet
