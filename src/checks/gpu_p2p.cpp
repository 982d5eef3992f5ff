#include "checks/gpu_p2p.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <map>

#include "checks/run_facts.hpp"
#include "core/error.hpp"
#include "core/result.hpp"
#include "gpu/device_fill.hpp"
#include "gpu/inventory.hpp"
#include "checks/gpu_h2d_d2h.hpp"
#include "specs/gpu_spec.hpp"

namespace gpuvet {

namespace measure {
int nvlink_count_of(const std::string& label) {
    if (label.size() < 3 || label.compare(0, 2, "NV") != 0) return 0;
    char* end = nullptr;
    long n = std::strtol(label.c_str() + 2, &end, 10);
    return *end == 0 && n > 0 ? int(n) : 0;
}

double nvlink_pair_gbps(double total, int links, int gpu_links) {
    double per_direction = total / 2;
    if (links <= 0 || gpu_links <= 0 || links >= gpu_links) return per_direction;
    return per_direction * links / gpu_links;
}
}  // namespace measure

namespace {

using namespace measure;

std::uint32_t pattern_of(int index) { return 0x5A5A0000u | std::uint32_t(index & 0xFFFF); }

// One GPU's side: a source buffer holding its pattern, a destination, a stream and events.
struct Side {
    GpuSet::Member* m = nullptr;
    DeviceBuffer src, dst, counter, tiny;
    Stream st;
    Event e0, eb, e1;
};

struct Pair {
    bool can = false, enabled = false;
    std::string enable_error;
    std::string path;  // topology label
    int nvlinks = 0;
    // Absent until measured: a stop can leave any of them unmeasured (bidir: the (lower, higher) entry only).
    std::optional<double> uni_gbps, latency_us, bidir_gbps;
    std::uint64_t wrong_words = 0;
    std::optional<double> spec_gbps;  // per direction
    std::string spec_source;
};

std::string label_between(const CheckContext& ctx, int a, int b) {
    if (!ctx.facts) return "?";
    const auto& inv = ctx.facts->inventory();
    int pa = -1, pb = -1;
    for (std::size_t k = 0; k < inv.gpus.size(); ++k) {
        if (inv.gpus[k].index == a) pa = int(k);
        if (inv.gpus[k].index == b) pb = int(k);
    }
    if (pa < 0 || pb < 0 || std::size_t(pa) >= inv.topology.matrix.size() ||
        std::size_t(pb) >= inv.topology.matrix[pa].size())
        return "?";
    return inv.topology.matrix[pa][pb];
}

int active_links(const GpuInfo* g) {
    if (!g) return 0;
    int n = 0;
    for (const auto& l : g->nvlinks) n += l.active.value_or(false);
    return n;
}

// The PCIe rate per direction a GPU's link can carry: the most both ends can do.
std::optional<double> pcie_rate_of(const GpuInfo* g) {
    if (!g || !g->pcie_gen_max_gpu || !g->pcie_width_max) return std::nullopt;
    int gen = g->pcie_gen_max_host ? std::min(*g->pcie_gen_max_gpu, *g->pcie_gen_max_host) : *g->pcie_gen_max_gpu;
    return pcie_gbps_per_direction(gen, *g->pcie_width_max);
}

std::uint64_t count_wrong(GpuSession& s, const Stream& st, const DeviceBuffer& buf, std::uint32_t expected,
                          const DeviceBuffer& counter) {
    s.zero(counter, &st);
    s.launch("stream_verify", s.geometry("stream_verify"), st,
             {arg::ptr(buf), arg::u64(buf.bytes() / 16), arg::u32(expected), arg::ptr(counter)});
    st.synchronize();
    std::uint64_t bad = 0;
    s.download(&bad, counter.ptr(), sizeof bad);
    return bad;
}

void copy(const CudaApi& api, Side& to, Side& from, const DeviceBuffer& what, std::size_t bytes, const Stream& on) {
    cuda_check(api, api.cuMemcpyPeerAsync(to.dst.ptr(), to.m->session->context(), what.ptr(),
                                          from.m->session->context(), bytes, on.get()),
               "cuMemcpyPeerAsync");
}

std::string pad(const std::string& s, std::size_t w) { return std::string(s.size() < w ? w - s.size() : 0, ' ') + s; }

}  // namespace

std::vector<CheckResult> GpuP2pCheck::run(CheckContext& ctx) {
    std::vector<CheckResult> out;
    GpuSet set = open_gpus(ctx, key(), title(), out);
    CheckResult r;
    r.key = std::string(key());
    r.title = std::string(title());
    std::vector<Side> sides;
    for (auto& m : set.members())
        if (m.session) sides.push_back(Side{&m, {}, {}, {}, {}, {}, {}, {}, {}});
    if (sides.size() < 2) {
        r.verdict = Verdict::Skip;
        r.summary = "needs two GPUs or more; " + std::to_string(sides.size()) + " could be opened.";
        out.push_back(std::move(r));
        return out;
    }
    const CudaApi& api = set.api();
    if (!api.cuDeviceCanAccessPeer || !api.cuCtxEnablePeerAccess || !api.cuMemcpyPeerAsync || !api.cuStreamWaitEvent)
        throw Error(ErrorKind::Driver, "libcuda at " + api.path + " lacks the peer-access calls",
                    "update the NVIDIA driver: GPU measurements need it");
    const std::size_t bytes = std::size_t(by_tier(ctx, 32, 256, 512)) << 20;
    const int samples = by_tier(ctx, 3, 5, 7), iters = by_tier(ctx, 2, 4, 8), small = by_tier(ctx, 20, 100, 200);
    auto t0 = std::chrono::steady_clock::now();

    for (Side& s : sides) {
        GpuSession& g = *s.m->session;
        g.make_current();
        s.src = g.alloc(bytes);
        s.dst = g.alloc(bytes);
        s.counter = g.alloc(sizeof(std::uint64_t));
        s.tiny = g.alloc(256);
        s.st = g.stream();
        s.e0 = g.event();
        s.eb = g.event();
        s.e1 = g.event();
        // In steps a stop can end: the fakes write host memory, and 256 MiB take a while there.
        for (std::size_t off = 0; off < bytes; off += kFillStepBytes) {
            if (ctx.stop_requested()) {
                s.st.synchronize();
                throw Interrupted{};  // before any pair was measured: the runner reports it
            }
            cuda_check(api, api.cuMemsetD32Async(s.src.ptr() + off, pattern_of(s.m->index),
                                                 std::min(kFillStepBytes, bytes - off) / 4, s.st.get()),
                       "cuMemsetD32Async");
        }
        s.st.synchronize();
    }

    // Support and enabling, both directions of every pair.
    const std::size_t n = sides.size();
    std::map<std::pair<int, int>, Pair> pairs;
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = 0; j < n; ++j) {
            if (i == j) continue;
            Side &a = sides[i], &b = sides[j];
            Pair& p = pairs[{a.m->index, b.m->index}];
            int can = 0;
            cuda_check(api, api.cuDeviceCanAccessPeer(&can, a.m->session->device(), b.m->session->device()), "cuDeviceCanAccessPeer");
            p.can = can != 0;
            if (p.can) {
                a.m->session->make_current();
                int rc = api.cuCtxEnablePeerAccess(b.m->session->context(), 0);
                p.enabled = rc == cu::CUDA_SUCCESS || rc == cu::CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED;
                if (!p.enabled) p.enable_error = CudaError("cuCtxEnablePeerAccess", rc, "").what();
            }
            p.path = label_between(ctx, a.m->index, b.m->index);
            p.nvlinks = nvlink_count_of(p.path);
            const GpuSpec* sa = ctx.facts->spec_of(a.m->index);
            const GpuSpec* sb = ctx.facts->spec_of(b.m->index);
            if (p.nvlinks > 0 && sa && sb && sa->nvlink_bandwidth_gbps && sb->nvlink_bandwidth_gbps) {
                p.spec_gbps = std::min(nvlink_pair_gbps(*sa->nvlink_bandwidth_gbps, p.nvlinks, active_links(a.m->info)),
                                       nvlink_pair_gbps(*sb->nvlink_bandwidth_gbps, p.nvlinks, active_links(b.m->info)));
                p.spec_source = "NVLink " + p.path + ": half the datasheet's " + fixed(*sa->nvlink_bandwidth_gbps, 0) +
                                " GB/s total per GPU (" + sa->name + ") for the pair's links; healthy 83-87% "
                                "(REFERENCES.md: H100 SXM 376-380 of 450); Azure floors 335 (H100/H200), 238 (A100)";
            } else if (p.nvlinks == 0) {
                auto ra = pcie_rate_of(a.m->info), rb = pcie_rate_of(b.m->info);
                if (ra && rb) {
                    p.spec_gbps = std::min(*ra, *rb);
                    p.spec_source = "PCIe (" + p.path + "): the slower GPU's link at its maximum generation and width "
                                    "(PCI-SIG per-lane rates); P2P over PCIe depends on the path, so only a warning "
                                    "below 40%";
                }
            }
        }

    // One direction at a time, then latency: copies issued on the source GPU's stream. A stop is
    // polled before every copy (one buffer, well under a second), and ends both loops.
    bool cut = false;
    try {
        for (std::size_t i = 0; i < n; ++i)
            for (std::size_t j = 0; j < n; ++j) {
                if (i == j) continue;
                Side &a = sides[i], &b = sides[j];
                Pair& p = pairs[{a.m->index, b.m->index}];
                if (ctx.progress) ctx.progress->update("GPU " + std::to_string(a.m->index) + " -> " + std::to_string(b.m->index));
                a.m->session->make_current();
                ctx.throw_if_stopped();
                copy(api, b, a, a.src, bytes, a.st);  // warm-up
                std::vector<double> ms;
                for (int k = 0; k < samples; ++k)
                    ms.push_back(a.m->session->time_ms(a.st, [&] {
                        for (int q = 0; q < iters; ++q) {
                            ctx.throw_if_stopped();
                            copy(api, b, a, a.src, bytes, a.st);
                        }
                    }));
                p.uni_gbps = double(bytes) * iters / (median(ms).value() * 1e-3) / 1e9;
                double lat_ms = a.m->session->time_ms(a.st, [&] {
                    for (int q = 0; q < small; ++q)
                        cuda_check(api, api.cuMemcpyPeerAsync(b.tiny.ptr(), b.m->session->context(), a.tiny.ptr(),
                                                              a.m->session->context(), 4, a.st.get()),
                                   "cuMemcpyPeerAsync");
                });
                p.latency_us = lat_ms * 1e3 / small;
                b.m->session->make_current();
                p.wrong_words += count_wrong(*b.m->session, b.st, b.dst, pattern_of(a.m->index), b.counter);
            }

        // Both directions at once: a->b on a's stream and b->a on b's, from e0 until both are done.
        for (std::size_t i = 0; i < n; ++i)
            for (std::size_t j = i + 1; j < n; ++j) {
                Side &a = sides[i], &b = sides[j];
                Pair& p = pairs[{a.m->index, b.m->index}];
                if (ctx.progress) ctx.progress->update("GPU " + std::to_string(a.m->index) + " <-> " + std::to_string(b.m->index));
                std::vector<double> ms;
                for (int k = 0; k < samples; ++k) {
                    a.m->session->make_current();
                    a.e0.record(a.st);
                    b.m->session->make_current();
                    cuda_check(api, api.cuStreamWaitEvent(b.st.get(), a.e0.get(), 0), "cuStreamWaitEvent");
                    for (int q = 0; q < iters; ++q) {
                        ctx.throw_if_stopped();
                        a.m->session->make_current();
                        copy(api, b, a, a.src, bytes, a.st);
                        b.m->session->make_current();
                        copy(api, a, b, b.src, bytes, b.st);
                    }
                    b.eb.record(b.st);
                    a.m->session->make_current();
                    cuda_check(api, api.cuStreamWaitEvent(a.st.get(), b.eb.get(), 0), "cuStreamWaitEvent");
                    a.e1.record(a.st);
                    ms.push_back(elapsed_ms(api, a.e0, a.e1));
                }
                p.bidir_gbps = 2.0 * double(bytes) * iters / (median(ms).value() * 1e-3) / 1e9;
                p.wrong_words += count_wrong(*a.m->session, a.st, a.dst, pattern_of(b.m->index), a.counter);
                b.m->session->make_current();
                p.wrong_words += count_wrong(*b.m->session, b.st, b.dst, pattern_of(a.m->index), b.counter);
            }
    } catch (const Interrupted&) {
        cut = true;
        for (Side& s : sides) {  // let the copies in flight finish before the buffers are freed
            s.m->session->make_current();
            s.st.synchronize();
        }
    }
    r.duration_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

    // Findings, the worst pair and the matrices.
    r.verdict = Verdict::Pass;
    std::vector<std::pair<Verdict, std::string>> findings;
    auto find = [&](Verdict v, std::string text) {
        r.verdict = worst(r.verdict, v);
        findings.emplace_back(v, std::move(text));
    };
    auto name = [](int a, int b, const char* arrow) { return std::to_string(a) + arrow + std::to_string(b); };
    const Pair* worst_pair = nullptr;
    std::pair<int, int> worst_key{};
    double worst_frac = 2;
    double max_latency = 0;
    std::vector<std::string> staged, refused;  // pairs without peer access: PCIe-only, NVLink-joined
    double refused_gbps = 1e300;
    std::string refused_path;
    auto list = [](const std::vector<std::string>& v) {
        std::string s;
        for (std::size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + v[i];
        return s;
    };
    // A figure a stop kept from being measured is absent with the reason, never a zero.
    auto figure = [](std::string key, std::string label, const std::optional<double>& v, const char* unit) {
        return Measurement::maybe(std::move(key), std::move(label), v, unit, kInterrupted);
    };
    std::size_t measured = 0;
    bool any_latency = false;
    for (auto& [k, p] : pairs) {
        auto [a, b] = k;
        const std::string ab = std::to_string(a) + "_" + std::to_string(b);
        r.measurements.push_back(figure("uni_gbps_" + ab, "GPU " + name(a, b, " -> "), p.uni_gbps, "GB/s"));
        r.measurements.push_back(figure("latency_us_" + ab, "Small-copy latency " + name(a, b, " -> "), p.latency_us, "us"));
        if (a < b) r.measurements.push_back(figure("bidir_gbps_" + ab, "GPU " + name(a, b, " <-> "), p.bidir_gbps, "GB/s"));
        measured += p.uni_gbps.has_value();
        if (p.latency_us) max_latency = std::max(max_latency, *p.latency_us), any_latency = true;
        if (p.wrong_words)
            find(Verdict::Fail, "wrong data copied GPU " + name(a, b, " -> ") + ": " + std::to_string(p.wrong_words) +
                                    " words differ (a fast wrong answer is a failure: check dmesg for Xid errors)");
        if (!p.can && a < b) {
            if (p.nvlinks > 0) {
                refused.push_back(name(a, b, "-"));
                if (p.uni_gbps) refused_gbps = std::min(refused_gbps, *p.uni_gbps);
                refused_path = p.path;
            } else {
                staged.push_back(name(a, b, "-"));
            }
        }
        if (p.can && !p.enabled)
            find(Verdict::Fail, "peer access between GPUs " + name(a, b, " and ") + " is supported but could not be enabled: " +
                                    p.enable_error);
        if (p.can && p.enabled && p.spec_gbps && p.uni_gbps) {
            double frac = *p.uni_gbps / *p.spec_gbps;
            if (frac < worst_frac) worst_frac = frac, worst_pair = &p, worst_key = k;
        }
    }
    if (!refused.empty())
        find(Verdict::Fail, "peer access is not supported between GPUs " + list(refused) + ", which are joined by " +
                                refused_path + ": their copies go through host memory" +
                                (refused_gbps < 1e300 ? " (" + fixed(refused_gbps, 1) + " GB/s)" : std::string()) +
                                "; check the NVLink and fabric manager state (nvidia-smi nvlink -s) and the driver");
    if (!staged.empty())
        find(Verdict::Warn, "peer access is off between GPUs " + list(staged) + " (PCIe only): GPU-to-GPU copies go through host memory. Consumer cards commonly have P2P disabled by "
              "the driver; multi-GPU training then moves data over the host (NCCL falls back to shared memory)");

    // The worst enabled pair against its expectation.
    if (worst_pair) {
        const Pair& p = *worst_pair;
        bool nv = p.nvlinks > 0;
        Reference ref = nv ? of_spec(*p.spec_gbps, kNvlinkExpected, kNvlinkWarn, kNvlinkFail, p.spec_source)
                           : Reference{*p.spec_gbps, {}, *p.spec_gbps * kPcieP2pWarn, {}, {}, {}, {}, p.spec_source};
        Measurement m = Measurement::number("uni_gbps_min", "Slowest pair, one direction (GPU " +
                                                                name(worst_key.first, worst_key.second, " -> ") + ")",
                                            *p.uni_gbps, "GB/s")
                            .against(ref);
        Reference bref = ref;
        bref.spec = 2 * *p.spec_gbps;
        if (bref.warn_below) bref.warn_below = *bref.warn_below * 2;
        if (bref.fail_below) bref.fail_below = *bref.fail_below * 2;
        auto lo = std::minmax(worst_key.first, worst_key.second);
        const Pair& both = pairs[{lo.first, lo.second}];
        Measurement mb = figure("bidir_gbps_of_slowest_pair", "That pair, both directions", both.bidir_gbps, "GB/s")
                             .against(bref);
        Verdict v = grade(m.value.value(), ref);
        if (mb.value) v = worst(v, grade(*mb.value, bref));
        r.measurements.insert(r.measurements.begin(), {m, mb});
        if (v != Verdict::Pass)
            find(v, "GPU " + name(worst_key.first, worst_key.second, " -> ") + " copies at " + fixed(*p.uni_gbps, 1) +
                        " GB/s over " + (nv ? p.path : "PCIe (" + p.path + ")") + ", " + fixed(100 * worst_frac, 0) +
                        "% of its " + fixed(*p.spec_gbps, 0) + " GB/s (" +
                        (nv ? "healthy 83-87%" : "PCIe P2P varies with the path") + ")");
    }
    r.measurements.insert(r.measurements.begin(),
                          figure("latency_us_max", "Highest small-copy latency (4 bytes)",
                                 any_latency ? std::optional<double>(max_latency) : std::nullopt, "us"));
    r.measurements.push_back(Measurement::number("buffer_bytes", "Bytes per copy", double(bytes), "bytes"));

    // Compact matrices: one direction (row -> column), both directions, latency.
    std::vector<int> idx;
    for (auto& s : sides) idx.push_back(s.m->index);
    auto matrix = [&](const std::string& title, auto cell) {
        r.details.push_back(title);
        std::string head = pad("", 4);
        for (int b : idx) head += pad(std::to_string(b), 8);
        r.details.push_back(head);
        for (int a : idx) {
            std::string line = pad(std::to_string(a), 4);
            for (int b : idx) line += pad(a == b ? "-" : cell(a, b), 8);
            r.details.push_back(line);
        }
    };
    matrix("GB/s one direction (row -> column; * = no peer access, staged through the host):", [&](int a, int b) {
        const Pair& p = pairs[{a, b}];
        return (p.uni_gbps ? fixed(*p.uni_gbps, 0) : std::string("?")) + (p.can && p.enabled ? "" : "*");
    });
    auto cell = [](const std::optional<double>& v, int digits) { return v ? fixed(*v, digits) : std::string("?"); };
    matrix("GB/s both directions:", [&](int a, int b) {
        auto lo = std::minmax(a, b);
        return cell(pairs[{lo.first, lo.second}].bidir_gbps, 0);
    });
    matrix("small-copy latency, us:", [&](int a, int b) { return cell(pairs[{a, b}].latency_us, 1); });
    matrix("path:", [&](int a, int b) { return pairs[{a, b}].path; });

    const std::string counts = std::to_string(pairs.size()) + " directed pairs of " + std::to_string(n) + " GPUs";
    if (cut) {
        const std::string what = "interrupted after " + std::to_string(measured) + " of " + counts + " were measured ('?': not measured)";
        r.details.insert(r.details.begin(), what);
        if (findings.empty()) {  // no verdict on a matrix the stop left unfinished
            r.verdict = Verdict::Skip;
            r.summary = what + "; no verdict.";
            out.push_back(std::move(r));
            return out;
        }
    }
    if (findings.empty()) {
        if (worst_pair)
            r.summary = "slowest pair GPU " + name(worst_key.first, worst_key.second, " -> ") + ": " +
                        fixed(*worst_pair->uni_gbps, 1) + " GB/s one way over " + worst_pair->path + " (" +
                        fixed(100 * worst_frac, 0) + "% of " + fixed(*worst_pair->spec_gbps, 0) + " GB/s), " + counts +
                        ", latency up to " + fixed(max_latency, 1) + " us.";
        else
            r.summary = "peer access works for all " + counts + "; no NVLink or PCIe rate known, so no verdict on speed.";
    } else {
        std::stable_sort(findings.begin(), findings.end(),
                         [](const auto& x, const auto& y) { return severity(x.first) > severity(y.first); });
        r.summary = findings.front().second + ".";
        for (auto& [v, text] : findings) r.findings.push_back(Finding{v, text});
    }
    out.push_back(std::move(r));
    return out;
}

}  // namespace gpuvet
