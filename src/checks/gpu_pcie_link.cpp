#include "checks/gpu_pcie_link.hpp"

#include <algorithm>

#include "gpu/device/derived_facts.hpp"
#include "specs/gpu_spec.hpp"

namespace gpuvet {

namespace {

const char* const kNvmlSource =
    "NVML: maximum link of this device and system; PCIe per-lane rates (PCI-SIG); gpuvet spec database";
const char* const kAmdSource =
    "AMD SMI: the GPU's maximum link (the host's is not reported); PCIe per-lane rates (PCI-SIG); gpuvet spec "
    "database";

Measurement gen_or_width(const char* key, const char* label, const Fact<int>& f) {
    if (!f) return Measurement::absent(key, label, "count", f.absent_reason);
    return Measurement::number(key, label, *f, "count");
}

}  // namespace

CheckResult GpuPcieLinkCheck::assess(const GpuInfo& g, const GpuSpec* spec, CheckContext&) {
    CheckResult r;
    Findings f;
    const std::string label = gpu_label(g, spec);
    const char* const kSource = is_amd_gpu(g) ? kAmdSource : kNvmlSource;

    // Width: NVML's maximum width already is the smaller of the GPU's and the slot's.
    Measurement w = gen_or_width("pcie_width", "Link width (lanes)", g.pcie_width_current);
    if (g.pcie_width_max) {
        Reference ref;
        ref.spec = *g.pcie_width_max;
        ref.fail_below = *g.pcie_width_max;
        ref.source = kSource;
        w.against(ref);
    }
    r.measurements.push_back(w);
    r.measurements.push_back(gen_or_width("pcie_width_max", "Link width possible", g.pcie_width_max));
    if (g.pcie_width_current && g.pcie_width_max && *g.pcie_width_current < *g.pcie_width_max)
        f.add(Verdict::Fail, "link trained down to x" + std::to_string(*g.pcie_width_current) + " of x" +
                                 std::to_string(*g.pcie_width_max) + ": " +
                                 (*g.pcie_width_current * 2 <= *g.pcie_width_max ? "half or less of" : "less than") +
                                 " the host<->GPU bandwidth (reseat the card or check the riser)");
    if (g.pcie_width_max && spec && spec->pcie_lanes && *g.pcie_width_max < *spec->pcie_lanes)
        f.add(Verdict::Fail, "the slot offers only x" + std::to_string(*g.pcie_width_max) + " to a x" +
                                 std::to_string(*spec->pcie_lanes) + " GPU");

    // Generation: the most both ends can do, and the words that say how it was found.
    const Fact<int> gen_max = pcie_gen_max_link(g);
    const std::string gen_basis =
        !gen_max ? ""
        : g.pcie_gen_max_host
            ? "the lower of GPU (Gen" + std::to_string(*g.pcie_gen_max_gpu) + ") and host (Gen" +
                  std::to_string(*g.pcie_gen_max_host) + ")"
            : "the GPU's maximum; the host's maximum is unknown (" + g.pcie_gen_max_host.absent_reason + ")";
    Measurement gm = gen_or_width("pcie_gen", "Link generation", g.pcie_gen_current);
    if (gen_max) {
        Reference ref;
        ref.spec = *gen_max;
        ref.warn_below = *gen_max;
        ref.source = std::string(kSource) + "; expected = " + gen_basis;
        gm.against(ref);
    }
    r.measurements.push_back(gm);
    r.measurements.push_back(gen_or_width("pcie_gen_max_gpu", "Generation, GPU maximum", g.pcie_gen_max_gpu));
    r.measurements.push_back(gen_or_width("pcie_gen_max_host", "Generation, host maximum", g.pcie_gen_max_host));
    if (g.pcie_gen_current && gen_max && *g.pcie_gen_current < *gen_max)
        f.add(Verdict::Warn, "link at Gen" + std::to_string(*g.pcie_gen_current) + " where Gen" +
                                 std::to_string(*gen_max) + " is possible (" + gen_basis +
                                 "); idle GPUs lower the generation to save power, so the "
                                 "host<->GPU bandwidth test decides");
    if (gen_max && spec && spec->pcie_generation && *gen_max < *spec->pcie_generation)
        r.details.push_back("the host supports only Gen" + std::to_string(*gen_max) + " where the GPU can do Gen" +
                            std::to_string(*spec->pcie_generation));

    if (g.pcie_replay_count)
        r.measurements.push_back(
            Measurement::number("pcie_replay_count", "PCIe replays", double(*g.pcie_replay_count), "count"));

    std::string link = "link";
    if (g.pcie_gen_current && g.pcie_width_current)
        link = "Gen" + std::to_string(*g.pcie_gen_current) + " x" + std::to_string(*g.pcie_width_current) + " link";
    if (!g.pcie_width_current && !g.pcie_gen_current) {
        r.verdict = Verdict::Skip;
        r.summary = label + ": the link state could not be read (" + g.pcie_width_current.absent_reason + ").";
        return r;
    }
    f.apply(r, label, label + " has a " + link + ", the most the GPU and the slot can do.");
    return r;
}

}  // namespace gpuvet
