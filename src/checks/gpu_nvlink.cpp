#include "checks/gpu_nvlink.hpp"

#include <algorithm>

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

// AMD's counterpart: the xGMI links the driver lists against the SKU's Infinity Fabric links.
CheckResult assess_xgmi(const GpuInfo& g, const GpuSpec* spec, const std::string& label, int gpus_in_box,
                        CheckResult r) {
    const int present = int(g.xgmi_links.size());
    int active = 0, unread = 0;
    std::string down;
    for (const auto& l : g.xgmi_links) {
        if (!l.active) ++unread;
        else if (*l.active) ++active;
        else down += (down.empty() ? "" : ", ") + l.remote_pci_bus_id.value_or("link " + std::to_string(l.link));
    }
    if (!spec) {
        r.verdict = Verdict::Skip;
        r.summary = label + " is not in the spec database, so its xGMI links are unknown.";
        return r;
    }
    if (!spec->xgmi_links) {
        r.verdict = Verdict::Skip;
        r.summary = "The " + spec->name + " has no xGMI (Infinity Fabric) links.";
        return r;
    }
    if (!g.xgmi_absent_reason.empty()) {
        r.measurements.push_back(
            Measurement::absent("xgmi_links_active", "xGMI links active", "count", g.xgmi_absent_reason));
        r.verdict = gpus_in_box == 1 ? Verdict::Pass : Verdict::Warn;
        r.summary = label + ": the xGMI links could not be read (" + g.xgmi_absent_reason + ").";
        return r;
    }
    // On a board of N GPUs each links to the N-1 others, at most the SKU's links (shared by a
    // multi-die board's dies).
    const int expected = std::min(*spec->xgmi_links / spec->devices_per_board, std::max(gpus_in_box - 1, 0));
    const std::string source = "gpuvet spec database (data/gpus.toml): " + spec->name + ", " +
                               std::to_string(*spec->xgmi_links) + " Infinity Fabric links";
    if (unread > 0) {
        // ROCm SMI names the link type, not the link's state.
        r.measurements.push_back(Measurement::number("xgmi_links_present", "xGMI links present", present, "count"));
        r.measurements.push_back(Measurement::absent("xgmi_links_active", "xGMI links active", "count",
                                                     g.xgmi_links.front().active.absent_reason));
        r.verdict = present < expected ? Verdict::Fail : Verdict::Warn;
        r.summary = label + ": " + std::to_string(present) + " xGMI links listed" +
                    (present < expected ? " where " + std::to_string(expected) + " are expected"
                                        : ", their state unread (" + g.xgmi_links.front().active.absent_reason + ")") +
                    ".";
        return r;
    }
    Measurement am = Measurement::number("xgmi_links_active", "xGMI links active", active, "count");
    if (expected > 0) {
        Reference ref;
        ref.spec = expected;
        ref.fail_below = expected;
        ref.source = source;
        am.against(ref);
    }
    r.measurements.push_back(am);
    r.measurements.push_back(Measurement::number("xgmi_links_present", "xGMI links present", present, "count"));
    if (gpus_in_box == 1) {
        r.verdict = Verdict::Pass;
        r.summary = label + " is the only GPU in the box: xGMI only carries traffic between GPUs, so none is needed.";
        return r;
    }
    if (nvlink_needs_bridge(*spec) && present == 0) {
        r.verdict = Verdict::Skip;
        r.summary = "No Infinity Fabric bridge on " + label + ": the " + spec->name +
                    " links GPUs only through an optional bridge.";
        return r;
    }
    Findings f;
    if (!down.empty())
        f.add(Verdict::Fail, "xGMI link(s) to " + down +
                                 " did not train: traffic to those GPUs loses that bandwidth or crosses other links");
    if (active < expected && down.empty())
        f.add(Verdict::Fail, "the driver lists " + std::to_string(active) + " active xGMI links where " +
                                 std::to_string(expected) + " are expected on this board");
    f.apply(r, label,
            label + ": " + std::to_string(active) + " of " + std::to_string(present) + " xGMI links active, as the " +
                spec->name + " should have.");
    return r;
}

}  // namespace

CheckResult GpuNvlinkCheck::assess(const GpuInfo& g, const GpuSpec* spec, CheckContext& ctx) {
    CheckResult r;
    const std::string label = gpu_label(g, spec);
    topology_row(ctx.facts->inventory(), g, r);
    if (is_amd_gpu(g)) return assess_xgmi(g, spec, label, int(ctx.facts->all_gpus().size()), std::move(r));
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
