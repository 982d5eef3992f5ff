#include "checks/gpu_h2d_d2h_judge.hpp"

#include <algorithm>
#include <set>

#include "checks/gpu_h2d_d2h.hpp"
#include "checks/gpu_measurement.hpp"
#include "specs/pcie.hpp"

namespace gpuvet {

namespace {

using namespace measure;

const char* const kRateSource =
    "PCIe per-lane payload rate at the generation and width the link ran at (PCI-SIG: Gen3 0.985, Gen4 1.969, "
    "Gen5 3.938, Gen6 7.563 GB/s per lane and direction); healthy pinned copies reach ~82% (REFERENCES.md: "
    "Gen5 x16 51-52 GB/s, Gen4 x16 24-26); Azure's floors: H100/H200 48 GB/s, A100 21 GB/s";

std::string gpu_list(const std::vector<int>& g) {
    std::string s;
    for (std::size_t i = 0; i < g.size(); ++i) s += (i ? ", " : "") + std::to_string(g[i]);
    return s;
}

Measurement rate(const char* key, const char* label, double v, int gpu) {
    return Measurement::number(key, label, v, "GB/s").on_gpu(gpu);
}

// The link the copies ran over: as NVML saw it under load, else the inventory's idle reading.
struct LinkUsed {
    std::optional<int> gen, width;
    std::string basis;           // how it was read
    std::optional<double> gbps;  // per direction, when generation and width are known
    std::string name;            // "Gen5 x16", empty when unknown
};

LinkUsed link_used(const HostCopyMeasured& g) {
    LinkUsed l{g.under_load.gen, g.under_load.width, "read from " + g.link_reader + " while the copies ran", {}, {}};
    if ((!l.gen || !l.width) && g.idle_gen && g.idle_width) {
        l.gen = g.idle_gen;
        l.width = g.idle_width;
        l.basis = "read at idle before the test (" + g.under_load.why + " under load)";
    }
    if (l.gen && l.width) {
        l.gbps = pcie_gbps_per_direction(*l.gen, *l.width);
        l.name = "Gen" + std::to_string(*l.gen) + " x" + std::to_string(*l.width);
    }
    return l;
}

void add_link_figures(const HostCopyMeasured& g, const LinkUsed& link, CheckResult& r) {
    const PcieLinkReading& now = g.under_load;
    r.measurements.push_back(
        Measurement::maybe("link_gen_under_load", "Link generation during the copies", now.gen, "count", now.why)
            .on_gpu(g.gpu));
    r.measurements.push_back(
        Measurement::maybe("link_width_under_load", "Link width during the copies", now.width, "count", now.why)
            .on_gpu(g.gpu));
    if (link.gbps)
        r.measurements.push_back(rate("link_gbps", "Link rate per direction (theoretical)", *link.gbps, g.gpu));
    else
        r.measurements.push_back(
            Measurement::absent("link_gbps", "Link rate per direction (theoretical)", "GB/s",
                                link.gen && link.width ? "unknown PCIe generation" : "link state unknown")
                .on_gpu(g.gpu));
}

// H2D and D2H graded against the link; both ways shown against twice the link, without a verdict.
void add_alone_figures(const HostCopyMeasured& g, const LinkUsed& link, CheckResult& r) {
    Measurement h2d = rate("h2d_gbps", "Host to GPU (pinned)", g.alone.h2d_gbps, g.gpu);
    Measurement d2h = rate("d2h_gbps", "GPU to host (pinned)", g.alone.d2h_gbps, g.gpu);
    Measurement bi = rate("bidir_gbps", "Both directions at once", g.alone.bidir_gbps, g.gpu);
    if (link.gbps) {
        const std::string source = std::string(kRateSource) + "; link " + link.name + " " + link.basis;
        h2d.against(of_spec(*link.gbps, kHostCopyExpected, kHostCopyWarn, kHostCopyFail, source));
        d2h.against(of_spec(*link.gbps, kHostCopyExpected, kHostCopyWarn, kHostCopyFail, source));
        Reference both;
        both.spec = 2 * *link.gbps;
        both.source = "twice the link's rate per direction (" + link.name + ")";
        bi.against(both);
        grade_into(r, h2d);
        grade_into(r, d2h);
    }
    r.measurements.push_back(h2d);
    r.measurements.push_back(d2h);
    r.measurements.push_back(bi);
}

// With every GPU copying, each rate against this GPU's own rate alone.
void add_all_figures(const HostCopyMeasured& g, const HostCopyGroup& group, CheckResult& r) {
    if (!g.all) {
        std::string why = group.gpus_measured < 2 ? "only one GPU could be measured" : "not measured (interrupted)";
        for (const char* k : {"h2d_all_gbps", "d2h_all_gbps", "bidir_all_gbps"})
            r.measurements.push_back(Measurement::absent(k, "All GPUs at once", "GB/s", why).on_gpu(g.gpu));
        return;
    }
    auto vs_alone = [&](const char* k, const char* label, double v, double alone) {
        Reference ref;
        ref.spec = alone;
        ref.warn_below = kSharedBelow * alone;
        ref.source = "this GPU's rate measured alone; below 70% of it the GPU shares its PCIe uplink";
        r.measurements.push_back(rate(k, label, v, g.gpu).against(ref));
    };
    vs_alone("h2d_all_gbps", "Host to GPU, all GPUs at once", g.all->h2d_gbps, g.alone.h2d_gbps);
    vs_alone("d2h_all_gbps", "GPU to host, all GPUs at once", g.all->d2h_gbps, g.alone.d2h_gbps);
    vs_alone("bidir_all_gbps", "Both directions, all GPUs at once", g.all->bidir_gbps, g.alone.bidir_gbps);
}

std::string alone_figures(const HostCopyMeasured& g) {
    return "H2D " + fixed(g.alone.h2d_gbps, 1) + ", D2H " + fixed(g.alone.d2h_gbps, 1) + ", both ways " +
           fixed(g.alone.bidir_gbps, 1) + " GB/s";
}

std::string all_figures(const HostCopyMeasured& g, const HostCopyGroup& group) {
    if (!g.all) return "";
    return "; all " + std::to_string(group.gpus_measured) + " GPUs at once: " + fixed(g.all->h2d_gbps, 1) + " / " +
           fixed(g.all->d2h_gbps, 1) + " GB/s";
}

// The slower direction against the link's rate.
std::optional<Finding> speed_finding(const HostCopyMeasured& g, const LinkUsed& link) {
    if (!link.gbps) return std::nullopt;
    const double worst_dir = std::min(g.alone.h2d_gbps, g.alone.d2h_gbps);
    Verdict v = grade(worst_dir, of_spec(*link.gbps, kHostCopyExpected, kHostCopyWarn, kHostCopyFail, ""));
    if (v == Verdict::Pass) return std::nullopt;
    return Finding{v,
                   "host copies reach only " + fixed(100 * worst_dir / *link.gbps, 0) + "% of the " + link.name +
                       " link's " + fixed(*link.gbps, 1) + " GB/s (healthy is about 82%, floor " +
                       fixed(100 * (v == Verdict::Fail ? kHostCopyFail : kHostCopyWarn), 0) + "%): " + alone_figures(g),
                   g.alone.h2d_gbps <= g.alone.d2h_gbps ? "h2d_gbps" : "d2h_gbps"};
}

// This GPU slowed down with the others: they share an uplink.
std::optional<Finding> shared_finding(const HostCopyMeasured& g, const HostCopyGroup& group) {
    if (!g.all || std::find(group.shared.begin(), group.shared.end(), g.gpu) == group.shared.end()) return std::nullopt;
    const double h2d_ratio = g.all->h2d_gbps / g.alone.h2d_gbps, d2h_ratio = g.all->d2h_gbps / g.alone.d2h_gbps;
    return Finding{Verdict::Warn,
                   "with all " + std::to_string(group.gpus_measured) + " GPUs copying, this GPU gets " +
                       fixed(g.all->h2d_gbps, 1) + " / " + fixed(g.all->d2h_gbps, 1) + " GB/s (H2D / D2H), " +
                       fixed(100 * std::min(h2d_ratio, d2h_ratio), 0) + "% of its " + fixed(g.alone.h2d_gbps, 1) +
                       " / " + fixed(g.alone.d2h_gbps, 1) + " alone: GPUs " + gpu_list(group.shared) +
                       " slow down together, so they share " + group.shared_path +
                       " (data loading to all of them at once runs at that rate)",
                   h2d_ratio <= d2h_ratio ? "h2d_all_gbps" : "d2h_all_gbps"};
}

std::vector<Finding> copy_findings(const HostCopyMeasured& g, const HostCopyGroup& group, const LinkUsed& link) {
    std::vector<Finding> found;
    const std::uint64_t wrong = g.alone.wrong_words + (g.all ? g.all->wrong_words : 0);
    if (wrong)
        found.emplace_back(Verdict::Fail, "wrong data after host<->GPU copies: " + std::to_string(wrong) +
                                              " 8-byte words differ (a fast wrong answer is a failure: check dmesg for "
                                              "Xid errors and the PCIe replay counter)");
    if (auto f = speed_finding(g, link)) found.push_back(*f);
    // Idle links drop their generation to save power; under load they must be back at the maximum.
    if (g.under_load.gen && g.max_gen && *g.under_load.gen < *g.max_gen)
        found.emplace_back(Verdict::Warn,
                           "the link stayed at Gen" + std::to_string(*g.under_load.gen) +
                               " during the copies where Gen" + std::to_string(*g.max_gen) + " is possible",
                           "link_gen_under_load");
    if (auto f = shared_finding(g, group)) found.push_back(*f);
    return found;
}

}  // namespace

std::vector<int> gpus_sharing_uplink(const std::vector<HostCopyMeasured>& gpus) {
    std::vector<int> shared;
    for (const HostCopyMeasured& g : gpus)
        if (g.all &&
            (g.all->h2d_gbps < kSharedBelow * g.alone.h2d_gbps || g.all->d2h_gbps < kSharedBelow * g.alone.d2h_gbps))
            shared.push_back(g.gpu);
    return shared;
}

std::string shared_path(const std::vector<int>& group, const TopologyLabels& labels) {
    const std::string unknown = "a PCIe switch or uplink";
    if (group.size() < 2) return unknown;
    std::set<std::string> seen;
    for (std::size_t i = 0; i < group.size(); ++i)
        for (std::size_t j = i + 1; j < group.size(); ++j) {
            auto it = labels.find({std::min(group[i], group[j]), std::max(group[i], group[j])});
            if (it == labels.end()) return unknown;
            seen.insert(it->second);
        }
    if (seen == std::set<std::string>{"PIX"} || seen == std::set<std::string>{"PXB"})
        return "one PCIe switch (topology " + *seen.begin() + ")";
    if (seen == std::set<std::string>{"PHB"}) return "one PCIe host bridge (topology PHB)";
    return unknown;
}

CheckResult judge_host_copies(const HostCopyMeasured& g, const HostCopyGroup& group) {
    CheckResult r;
    r.gpu = g.gpu;
    r.verdict = Verdict::Pass;
    r.duration_s = g.duration_s;
    const LinkUsed link = link_used(g);
    add_link_figures(g, link, r);
    add_alone_figures(g, link, r);
    add_all_figures(g, group, r);
    r.measurements.push_back(
        Measurement::number("buffer_bytes", "Bytes per copy", double(group.buffer_bytes), "bytes").on_gpu(g.gpu));

    std::vector<Finding> found = copy_findings(g, group, link);
    const std::string figures = alone_figures(g), all_text = all_figures(g, group);
    if (found.empty()) {
        r.summary =
            figures +
            (link.gbps ? " (" + fixed(100 * std::min(g.alone.h2d_gbps, g.alone.d2h_gbps) / *link.gbps, 0) +
                             "% of the " + link.name + " link's " + fixed(*link.gbps, 1) + " GB/s; healthy ~82%)"
                       : " (link rate unknown, so no verdict on speed)") +
            all_text + ".";
        return r;
    }
    for (const Finding& f : found) r.verdict = worst(r.verdict, f.verdict);
    std::stable_sort(found.begin(), found.end(),
                     [](const Finding& a, const Finding& b) { return severity(a.verdict) > severity(b.verdict); });
    r.summary = found.front().text + ".";
    r.findings = std::move(found);
    r.details.push_back(figures + all_text);
    return r;
}

}  // namespace gpuvet
