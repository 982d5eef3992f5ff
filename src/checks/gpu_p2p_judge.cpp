#include "checks/gpu_p2p_judge.hpp"

#include <algorithm>
#include <functional>

#include "checks/gpu_h2d_d2h.hpp"
#include "checks/gpu_measurement.hpp"
#include "checks/gpu_p2p.hpp"
#include "gpu/inventory.hpp"
#include "specs/gpu_spec.hpp"
#include "gpu/device/derived_facts.hpp"
#include "specs/pcie.hpp"

namespace gpuvet {

namespace {

using namespace measure;

int active_links(const GpuInfo* g) { return g ? active_nvlinks(*g) : 0; }

// The PCIe rate per direction a GPU's link can carry: the most both ends can do.
std::optional<double> pcie_rate_of(const GpuInfo* g) {
    if (!g || !g->pcie_width_max) return std::nullopt;
    Fact<int> gen = pcie_gen_max_link(*g);
    if (!gen) return std::nullopt;
    return pcie_gbps_per_direction(*gen, *g->pcie_width_max);
}

std::string name(int a, int b, const char* arrow) { return std::to_string(a) + arrow + std::to_string(b); }

std::string list(const std::vector<std::string>& v) {
    std::string s;
    for (std::size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + v[i];
    return s;
}

std::string pad(const std::string& s, std::size_t w) { return std::string(s.size() < w ? w - s.size() : 0, ' ') + s; }

// A figure a stop kept from being measured is absent with the reason, never a zero.
Measurement figure(std::string key, std::string label, const std::optional<double>& v, const char* unit) {
    return Measurement::maybe(std::move(key), std::move(label), v, unit, kInterrupted);
}

void add_pair_figures(const P2pPairs& pairs, CheckResult& r) {
    for (const auto& [k, p] : pairs) {
        auto [a, b] = k;
        const std::string ab = std::to_string(a) + "_" + std::to_string(b);
        r.measurements.push_back(figure("uni_gbps_" + ab, "GPU " + name(a, b, " -> "), p.uni_gbps, "GB/s"));
        r.measurements.push_back(
            figure("latency_us_" + ab, "Small-copy latency " + name(a, b, " -> "), p.latency_us, "us"));
        if (a < b)
            r.measurements.push_back(figure("bidir_gbps_" + ab, "GPU " + name(a, b, " <-> "), p.bidir_gbps, "GB/s"));
    }
}

// Wrong data and peer access, pair by pair; the pairs without peer access in one finding per kind.
void pair_findings(const P2pPairs& pairs, std::vector<Finding>& found) {
    std::vector<std::string> staged, refused;  // pairs without peer access: PCIe-only, NVLink-joined
    double refused_gbps = 1e300;
    std::string refused_path;
    for (const auto& [k, p] : pairs) {
        auto [a, b] = k;
        if (p.wrong_words)
            found.emplace_back(Verdict::Fail,
                               "wrong data copied GPU " + name(a, b, " -> ") + ": " + std::to_string(p.wrong_words) +
                                   " words differ (a fast wrong answer is a failure: check dmesg for Xid errors)");
        if (!p.can_access && a < b) {
            if (p.nvlinks > 0) {
                refused.push_back(name(a, b, "-"));
                if (p.uni_gbps) refused_gbps = std::min(refused_gbps, *p.uni_gbps);
                refused_path = p.path;
            } else {
                staged.push_back(name(a, b, "-"));
            }
        }
        if (p.can_access && !p.enabled)
            found.emplace_back(Verdict::Fail, "peer access between GPUs " + name(a, b, " and ") +
                                                  " is supported but could not be enabled: " + p.enable_error);
    }
    if (!refused.empty())
        found.emplace_back(Verdict::Fail,
                           "peer access is not supported between GPUs " + list(refused) + ", which are joined by " +
                               refused_path + ": their copies go through host memory" +
                               (refused_gbps < 1e300 ? " (" + fixed(refused_gbps, 1) + " GB/s)" : std::string()) +
                               "; check the NVLink and fabric manager state (nvidia-smi nvlink -s) and the driver");
    if (!staged.empty())
        found.emplace_back(Verdict::Warn, "peer access is off between GPUs " + list(staged) +
                                              " (PCIe only): GPU-to-GPU copies go through host memory. Consumer cards "
                                              "commonly have P2P disabled by the driver; multi-GPU training then moves "
                                              "data over the host (NCCL falls back to shared memory)");
}

// The enabled pair with the lowest fraction of its expected rate, one direction.
struct Slowest {
    std::pair<int, int> key{};
    const P2pPairFigures* pair = nullptr;
    double fraction = 2;  // a pair at twice its expectation or more is never the slowest
};

Slowest slowest_enabled_pair(const P2pPairs& pairs) {
    Slowest s;
    for (const auto& [k, p] : pairs) {
        if (!p.can_access || !p.enabled || !p.expected.gbps || !p.uni_gbps) continue;
        double frac = *p.uni_gbps / *p.expected.gbps;
        if (frac < s.fraction) s = Slowest{k, &p, frac};
    }
    return s;
}

// The slowest pair against its path: one way and both ways graded, a finding below the line.
void grade_slowest(const P2pPairs& pairs, const Slowest& s, CheckResult& r, std::vector<Finding>& found) {
    const P2pPairFigures& p = *s.pair;
    const auto [a, b] = s.key;
    const bool nv = p.nvlinks > 0;
    const double spec = *p.expected.gbps;
    Reference ref = nv ? of_spec(spec, kNvlinkExpected, kNvlinkWarn, kNvlinkFail, p.expected.source)
                       : Reference{spec, {}, spec * kPcieP2pWarn, {}, {}, {}, {}, p.expected.source};
    Measurement m = Measurement::number("uni_gbps_min", "Slowest pair, one direction (GPU " + name(a, b, " -> ") + ")",
                                        *p.uni_gbps, "GB/s")
                        .against(ref);
    Reference bref = ref;  // both directions: twice every bound
    bref.spec = 2 * spec;
    if (bref.warn_below) bref.warn_below = *bref.warn_below * 2;
    if (bref.fail_below) bref.fail_below = *bref.fail_below * 2;
    const P2pPairFigures& both = pairs.at({std::min(a, b), std::max(a, b)});
    Measurement mb =
        figure("bidir_gbps_of_slowest_pair", "That pair, both directions", both.bidir_gbps, "GB/s").against(bref);
    Verdict v = grade(*m.value, ref);
    if (mb.value) v = worst(v, grade(*mb.value, bref));
    r.measurements.insert(r.measurements.begin(), {m, mb});
    if (v != Verdict::Pass)
        found.emplace_back(v,
                           "GPU " + name(a, b, " -> ") + " copies at " + fixed(*p.uni_gbps, 1) + " GB/s over " +
                               (nv ? p.path : "PCIe (" + p.path + ")") + ", " + fixed(100 * s.fraction, 0) +
                               "% of its " + fixed(spec, 0) + " GB/s (" +
                               (nv ? "healthy 83-87%" : "PCIe P2P varies with the path") + ")",
                           "uni_gbps_min");
}

std::optional<double> highest_latency_us(const P2pPairs& pairs) {
    double max_us = 0;
    bool any = false;
    for (const auto& [k, p] : pairs)
        if (p.latency_us) max_us = std::max(max_us, *p.latency_us), any = true;
    return any ? std::optional<double>(max_us) : std::nullopt;
}

using Cell = std::function<std::string(int, int)>;

void add_matrix(CheckResult& r, const std::vector<int>& idx, const std::string& title, const Cell& cell) {
    r.details.push_back(title);
    std::string head = pad("", 4);
    for (int b : idx) head += pad(std::to_string(b), 8);
    r.details.push_back(head);
    for (int a : idx) {
        std::string line = pad(std::to_string(a), 4);
        for (int b : idx) line += pad(a == b ? "-" : cell(a, b), 8);
        r.details.push_back(line);
    }
}

// Compact matrices: one direction (row -> column), both directions, latency, path.
void add_matrices(const P2pMeasured& in, CheckResult& r) {
    const P2pPairs& pairs = in.pairs;
    auto cell = [](const std::optional<double>& v, int digits) { return v ? fixed(*v, digits) : std::string("?"); };
    add_matrix(r, in.gpus,
               "GB/s one direction (row -> column; * = no peer access, staged through the host):", [&](int a, int b) {
                   const P2pPairFigures& p = pairs.at({a, b});
                   return cell(p.uni_gbps, 0) + (p.can_access && p.enabled ? "" : "*");
               });
    add_matrix(r, in.gpus, "GB/s both directions:", [&](int a, int b) {
        return cell(pairs.at({std::min(a, b), std::max(a, b)}).bidir_gbps, 0);
    });
    add_matrix(r, in.gpus, "small-copy latency, us:", [&](int a, int b) {
        return cell(pairs.at({a, b}).latency_us, 1);
    });
    add_matrix(r, in.gpus, "path:", [&](int a, int b) { return pairs.at({a, b}).path; });
}

// The summary: the worst finding, or the slowest pair when nothing was found.
void summarize(const P2pMeasured& in, const Slowest& s, std::vector<Finding> found, CheckResult& r) {
    const std::string counts =
        std::to_string(in.pairs.size()) + " directed pairs of " + std::to_string(in.gpus.size()) + " GPUs";
    if (in.interrupted) {
        std::size_t measured = 0;
        for (const auto& [k, p] : in.pairs) measured += p.uni_gbps.has_value();
        const std::string what =
            "interrupted after " + std::to_string(measured) + " of " + counts + " were measured ('?': not measured)";
        r.details.insert(r.details.begin(), what);
        if (found.empty()) {  // no verdict on a matrix the stop left unfinished
            r.verdict = Verdict::Skip;
            r.summary = what + "; no verdict.";
            return;
        }
    }
    if (!found.empty()) {
        std::stable_sort(found.begin(), found.end(),
                         [](const Finding& x, const Finding& y) { return severity(x.verdict) > severity(y.verdict); });
        r.summary = found.front().text + ".";
        r.findings = std::move(found);
    } else if (s.pair) {
        r.summary = "slowest pair GPU " + name(s.key.first, s.key.second, " -> ") + ": " + fixed(*s.pair->uni_gbps, 1) +
                    " GB/s one way over " + s.pair->path + " (" + fixed(100 * s.fraction, 0) + "% of " +
                    fixed(*s.pair->expected.gbps, 0) + " GB/s), " + counts + ", latency up to " +
                    fixed(highest_latency_us(in.pairs).value_or(0), 1) + " us.";
    } else {
        r.summary = "peer access works for all " + counts + "; no NVLink or PCIe rate known, so no verdict on speed.";
    }
}

}  // namespace

P2pExpectation p2p_expectation(const std::string& path, const GpuSpec* sa, const GpuSpec* sb, const GpuInfo* ia,
                               const GpuInfo* ib) {
    P2pExpectation e;
    const int links = nvlink_count_of(path);
    if (links > 0 && sa && sb && sa->nvlink_bandwidth_gbps && sb->nvlink_bandwidth_gbps) {
        e.gbps = std::min(nvlink_pair_gbps(*sa->nvlink_bandwidth_gbps, links, active_links(ia)),
                          nvlink_pair_gbps(*sb->nvlink_bandwidth_gbps, links, active_links(ib)));
        e.source = "NVLink " + path + ": half the datasheet's " + fixed(*sa->nvlink_bandwidth_gbps, 0) +
                   " GB/s total per GPU (" + sa->name +
                   ") for the pair's links; healthy 83-87% "
                   "(REFERENCES.md: H100 SXM 376-380 of 450); Azure floors 335 (H100/H200), 238 (A100)";
    } else if (links == 0) {
        auto ra = pcie_rate_of(ia), rb = pcie_rate_of(ib);
        if (ra && rb) {
            e.gbps = std::min(*ra, *rb);
            e.source = "PCIe (" + path +
                       "): the slower GPU's link at its maximum generation and width "
                       "(PCI-SIG per-lane rates); P2P over PCIe depends on the path, so only a warning below 40%";
        }
    }
    return e;
}

CheckResult judge_p2p(const P2pMeasured& in) {
    CheckResult r;
    r.duration_s = in.duration_s;
    std::vector<Finding> found;
    add_pair_figures(in.pairs, r);
    pair_findings(in.pairs, found);
    const Slowest slowest = slowest_enabled_pair(in.pairs);
    if (slowest.pair) grade_slowest(in.pairs, slowest, r, found);
    r.measurements.insert(r.measurements.begin(), figure("latency_us_max", "Highest small-copy latency (4 bytes)",
                                                         highest_latency_us(in.pairs), "us"));
    r.measurements.push_back(Measurement::number("buffer_bytes", "Bytes per copy", double(in.buffer_bytes), "bytes"));
    add_matrices(in, r);
    r.verdict = Verdict::Pass;
    for (const Finding& f : found) r.verdict = worst(r.verdict, f.verdict);
    summarize(in, slowest, std::move(found), r);
    return r;
}

}  // namespace gpuvet
