#include "checks/gpu_h2d_d2h.hpp"

#include <algorithm>
#include <barrier>
#include <chrono>
#include <cstring>
#include <map>
#include <set>

#include "checks/run_facts.hpp"
#include "core/error.hpp"
#include "gpu/inventory.hpp"
#include "gpu/device/nvml_backend.hpp"
#include "specs/gpu_spec.hpp"

namespace gpuvet {

namespace measure {
std::optional<double> pcie_gbps_per_direction(int gen, int width) {
    // GB/s per lane and direction: Gen1/2 8b/10b at 2.5/5 GT/s, Gen3-5 128b/130b at 8/16/32 GT/s,
    // Gen6 FLIT mode at 64 GT/s (PCI-SIG figures as quoted in REFERENCES.md).
    static const double kLane[] = {0, 0.25, 0.5, 0.985, 1.969, 3.938, 7.563};
    if (gen < 1 || gen > 6 || width < 1) return std::nullopt;
    return kLane[gen] * width;
}
}  // namespace measure

namespace {

using namespace measure;

const char* const kRateSource =
    "PCIe per-lane payload rate at the generation and width the link ran at (PCI-SIG: Gen3 0.985, Gen4 1.969, "
    "Gen5 3.938, Gen6 7.563 GB/s per lane and direction); healthy pinned copies reach ~82% (REFERENCES.md: "
    "Gen5 x16 51-52 GB/s, Gen4 x16 24-26); Azure's floors: H100/H200 48 GB/s, A100 21 GB/s";

struct Rates {
    double h2d_gbps = 0, d2h_gbps = 0, bidir_gbps = 0;
    std::uint64_t wrong_words = 0;
};

// The link state NVML reports now (called while copies run: idle links drop their generation).
struct LinkNow {
    std::optional<int> gen, width;
    std::string why;  // when either is unknown
};

LinkNow read_link(int index) {
    LinkNow l;
    const DeviceBackend& backend = NvmlBackend::shared();
    l.why = backend.absent_reason();
    if (!l.why.empty()) return l;
    auto dev = backend.open(index);
    l.why = dev->unopened_reason();
    if (!l.why.empty()) return l;
    DeviceSample s = dev->sample(kReadPcieLink);
    if (s.pcie_gen_current) l.gen = *s.pcie_gen_current;
    if (s.pcie_width_current) l.width = *s.pcie_width_current;
    if (!l.gen) l.why = s.pcie_gen_current.absent_reason;
    else if (!l.width) l.why = s.pcie_width_current.absent_reason;
    return l;
}

// Distinct, nonzero words (never time or verify on zeros), different per GPU.
void fill_pattern(void* p, std::size_t bytes, std::uint64_t seed) {
    auto* w = static_cast<std::uint64_t*>(p);
    for (std::size_t i = 0, n = bytes / 8; i < n; ++i) w[i] = ((i + 1) * 0x9E3779B97F4A7C15ull) ^ seed;
}

std::uint64_t count_wrong(const void* got, const void* want, std::size_t bytes) {
    if (std::memcmp(got, want, bytes) == 0) return 0;
    const auto* a = static_cast<const std::uint64_t*>(got);
    const auto* b = static_cast<const std::uint64_t*>(want);
    std::uint64_t bad = 0;
    for (std::size_t i = 0, n = bytes / 8; i < n; ++i) bad += a[i] != b[i];
    return bad;
}

double gbps(double bytes, double ms) { return bytes / (ms * 1e-3) / 1e9; }

// The buffers, streams and events of one GPU's copies. `src` holds the pattern; `dst` receives.
struct Rig {
    GpuSession& s;
    const CudaApi& api;
    std::size_t bytes;
    const CheckContext& ctx;  // polled before every copy: one buffer's copy is the most a stop waits for
    PinnedBuffer src, dst;
    DeviceBuffer da, db;
    Stream a, b;
    Event e0, eb, e1;

    Rig(GpuSession& session, std::size_t n, std::uint64_t seed, const CheckContext& c)
        : s(session), api(session.api()), bytes(n), ctx(c), src(s.alloc_pinned(n)), dst(s.alloc_pinned(n)),
          da(s.alloc(n)), db(s.alloc(n)), a(s.stream()), b(s.stream()), e0(s.event()), eb(s.event()), e1(s.event()) {
        if (!api.cuMemcpyHtoDAsync || !api.cuMemcpyDtoHAsync || !api.cuStreamWaitEvent)
            throw Error(ErrorKind::Driver, "libcuda at " + api.path + " lacks the asynchronous copy calls",
                        "update the NVIDIA driver: GPU measurements need it");
        fill_pattern(src.data(), n, seed);
    }
    ~Rig() {  // a stop can leave copies in flight: they end before their buffers are freed
        try {
            a.synchronize();
            b.synchronize();
        } catch (const Error&) {  // a GPU lost mid-copy: nothing left to wait for
        }
    }
    Rig(const Rig&) = delete;
    Rig& operator=(const Rig&) = delete;
    void h2d(const DeviceBuffer& d, const Stream& st) const {
        ctx.throw_if_stopped();
        cuda_check(api, api.cuMemcpyHtoDAsync(d.ptr(), src.data(), bytes, st.get()), "cuMemcpyHtoDAsync_v2");
    }
    void d2h(const DeviceBuffer& d, const Stream& st) const {
        ctx.throw_if_stopped();
        cuda_check(api, api.cuMemcpyDtoHAsync(dst.data(), d.ptr(), bytes, st.get()), "cuMemcpyDtoHAsync_v2");
    }
};

// H2D, D2H and both at once; `sync` lines the phases up across GPUs (a no-op alone) and is called
// once more at the end so no GPU frees its buffers while others still copy. `link` (when given)
// receives the link state read while the first copies run.
// A stop is polled before every sample and every copy, and throws Interrupted.
Rates run_rig(Rig& r, int samples, int iters, const std::function<void()>& sync, LinkNow* link, int index) {
    const CheckContext& ctx = r.ctx;
    Rates out;
    const double per_sample = double(r.bytes) * iters;
    auto median_ms = [&](const std::function<void()>& work) {
        std::vector<double> ms;
        for (int i = 0; i < samples; ++i) {
            ctx.throw_if_stopped();
            ms.push_back(r.s.time_ms(r.a, work));
        }
        return median(ms).value();
    };

    sync();
    for (int k = 0; k < iters; ++k) r.h2d(r.da, r.a);  // warm-up, and the load for the link reading
    if (link) *link = read_link(index);
    r.a.synchronize();
    out.h2d_gbps = gbps(per_sample, median_ms([&] { for (int k = 0; k < iters; ++k) r.h2d(r.da, r.a); }));

    sync();
    r.d2h(r.da, r.a);
    r.a.synchronize();
    out.d2h_gbps = gbps(per_sample, median_ms([&] { for (int k = 0; k < iters; ++k) r.d2h(r.da, r.a); }));
    out.wrong_words += count_wrong(r.dst.data(), r.src.data(), r.bytes);  // the round trip src -> da -> dst

    // Both directions at once on two streams: from e0 on `a` until both streams are done.
    std::memset(r.dst.data(), 0, r.bytes);
    sync();
    std::vector<double> ms;
    for (int i = 0; i < samples; ++i) {
        ctx.throw_if_stopped();
        r.e0.record(r.a);
        cuda_check(r.api, r.api.cuStreamWaitEvent(r.b.get(), r.e0.get(), 0), "cuStreamWaitEvent");
        for (int k = 0; k < iters; ++k) {
            r.h2d(r.db, r.a);
            r.d2h(r.da, r.b);
        }
        r.eb.record(r.b);
        cuda_check(r.api, r.api.cuStreamWaitEvent(r.a.get(), r.eb.get(), 0), "cuStreamWaitEvent");
        r.e1.record(r.a);
        ms.push_back(elapsed_ms(r.api, r.e0, r.e1));
    }
    out.bidir_gbps = gbps(2 * per_sample, median(ms).value());
    out.wrong_words += count_wrong(r.dst.data(), r.src.data(), r.bytes);
    std::memset(r.dst.data(), 0, r.bytes);
    r.d2h(r.db, r.a);  // what the H2D half wrote
    r.a.synchronize();
    out.wrong_words += count_wrong(r.dst.data(), r.src.data(), r.bytes);
    sync();
    return out;
}

struct GpuCopies {
    Rates alone, all;
    bool all_measured = false;
    bool interrupted = false;  // a stop cut this GPU's own measurement short
    LinkNow link;
    std::string error, advice;
    double duration_s = 0;
};

std::string gpu_list(const std::vector<int>& g) {
    std::string s;
    for (std::size_t i = 0; i < g.size(); ++i) s += (i ? ", " : "") + std::to_string(g[i]);
    return s;
}

// What the topology says about a group of GPUs that slowed down together.
std::string shared_path(const CheckContext& ctx, const std::vector<int>& group) {
    if (!ctx.facts || group.size() < 2) return "a PCIe switch or uplink";
    const auto& inv = ctx.facts->inventory();
    auto pos = [&](int idx) -> int {
        for (std::size_t k = 0; k < inv.gpus.size(); ++k)
            if (inv.gpus[k].index == idx) return int(k);
        return -1;
    };
    std::set<std::string> labels;
    for (std::size_t i = 0; i < group.size(); ++i)
        for (std::size_t j = i + 1; j < group.size(); ++j) {
            int a = pos(group[i]), b = pos(group[j]);
            if (a < 0 || b < 0 || std::size_t(a) >= inv.topology.matrix.size() ||
                std::size_t(b) >= inv.topology.matrix[a].size())
                return "a PCIe switch or uplink";
            labels.insert(inv.topology.matrix[a][b]);
        }
    if (labels == std::set<std::string>{"PIX"} || labels == std::set<std::string>{"PXB"})
        return "one PCIe switch (topology " + *labels.begin() + ")";
    if (labels == std::set<std::string>{"PHB"}) return "one PCIe host bridge (topology PHB)";
    return "a PCIe switch or uplink";
}

Measurement rate(const char* key, const char* label, double v, int gpu) {
    return Measurement::number(key, label, v, "GB/s").on_gpu(gpu);
}

}  // namespace

std::vector<CheckResult> GpuHostCopyCheck::run(CheckContext& ctx) {
    std::vector<CheckResult> out;
    GpuSet set = open_gpus(ctx, key(), title(), out);
    const std::size_t bytes = std::size_t(by_tier(ctx, 32, 256, 1024)) << 20;
    const int samples = by_tier(ctx, 3, 5, 9), iters = by_tier(ctx, 2, 4, 4);
    auto seed = [](int index) { return 0xC0FFEE0000000000ull + std::uint64_t(index) * 0x1000193ull; };
    auto no_sync = [] {};

    // Each GPU alone: the others idle, so nothing shares its path.
    std::map<int, GpuCopies> per;
    for (auto& m : set.members()) {
        if (!m.session || ctx.stop_requested()) continue;
        if (ctx.progress) ctx.progress->update("GPU " + std::to_string(m.index) + " alone");
        GpuCopies& p = per[m.index];
        auto t0 = std::chrono::steady_clock::now();
        try {
            m.session->make_current();
            Rig rig(*m.session, bytes, seed(m.index), ctx);
            p.alone = run_rig(rig, samples, iters, no_sync, &p.link, m.index);
        } catch (const Interrupted&) {
            p.interrupted = true;
        } catch (const Error& e) {
            p.error = e.what();
            p.advice = e.advice();
        }
        p.duration_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }

    // All at once, one thread per GPU, phases lined up: GPUs behind one switch or root port share it.
    std::ptrdiff_t n_ok = 0;
    for (auto& [i, p] : per) n_ok += p.error.empty() && !p.interrupted;
    if (n_ok >= 2 && !ctx.stop_requested()) {
        if (ctx.progress) ctx.progress->update("all " + std::to_string(n_ok) + " GPUs at once");
        std::barrier<> phase(n_ok);
        set.run_parallel([&](GpuSet::Member& m) {
            auto it = per.find(m.index);
            if (it == per.end() || !it->second.error.empty() || it->second.interrupted) return;
            try {
                Rig rig(*m.session, bytes, seed(m.index) ^ 0xFFull, ctx);
                it->second.all = run_rig(rig, samples, iters, [&] { phase.arrive_and_wait(); }, nullptr, m.index);
                it->second.all_measured = true;
            } catch (const Interrupted&) {
                phase.arrive_and_drop();  // the alone figures stand; the shared phase is not reported
            } catch (const Error& e) {
                phase.arrive_and_drop();  // the others go on without this GPU
                it->second.error = std::string("with all GPUs copying: ") + e.what();
                it->second.advice = e.advice();
            }
        });
    }

    // GPUs whose rate dropped when all copied: they share an uplink.
    std::vector<int> shared;
    for (auto& [i, p] : per)
        if (p.error.empty() && p.all_measured &&
            (p.all.h2d_gbps < kSharedBelow * p.alone.h2d_gbps || p.all.d2h_gbps < kSharedBelow * p.alone.d2h_gbps))
            shared.push_back(i);

    for (auto& m : set.members()) {
        auto it = per.find(m.index);
        if (!m.session) continue;
        if (it == per.end() || it->second.interrupted) {  // a stop kept it from running, or cut it short
            CheckResult r;
            r.key = std::string(key());
            r.title = std::string(title());
            r.gpu = m.index;
            r.summary = it == per.end() ? kNotRunInterrupted : "interrupted before this GPU's copies were measured; no verdict";
            out.push_back(std::move(r));
            continue;
        }
        const GpuCopies& p = it->second;
        if (!p.error.empty()) {
            out.push_back(error_result(key(), title(), m.index, p.error, p.advice));
            continue;
        }
        CheckResult r;
        r.key = std::string(key());
        r.title = std::string(title());
        r.gpu = m.index;
        r.verdict = Verdict::Pass;
        r.duration_s = p.duration_s;
        std::vector<std::pair<Verdict, std::string>> findings;
        auto find = [&](Verdict v, std::string text) {
            r.verdict = worst(r.verdict, v);
            findings.emplace_back(v, std::move(text));
        };
        const GpuInfo* g = m.info;

        // The link the copies ran over: as NVML saw it under load, else the inventory's idle reading.
        std::optional<int> gen = p.link.gen, width = p.link.width;
        std::string basis = "read from NVML while the copies ran";
        if ((!gen || !width) && g && g->pcie_gen_current && g->pcie_width_current) {
            gen = *g->pcie_gen_current;
            width = *g->pcie_width_current;
            basis = "read at idle before the test (" + p.link.why + " under load)";
        }
        std::optional<double> link;
        if (gen && width) link = pcie_gbps_per_direction(*gen, *width);
        const std::string link_name = gen && width ? "Gen" + std::to_string(*gen) + " x" + std::to_string(*width) : "";
        if (p.link.gen)
            r.measurements.push_back(Measurement::number("link_gen_under_load", "Link generation during the copies", *p.link.gen, "count").on_gpu(m.index));
        else
            r.measurements.push_back(Measurement::absent("link_gen_under_load", "Link generation during the copies", "count", p.link.why).on_gpu(m.index));
        if (p.link.width)
            r.measurements.push_back(Measurement::number("link_width_under_load", "Link width during the copies", *p.link.width, "count").on_gpu(m.index));
        else
            r.measurements.push_back(Measurement::absent("link_width_under_load", "Link width during the copies", "count", p.link.why).on_gpu(m.index));
        if (link)
            r.measurements.push_back(rate("link_gbps", "Link rate per direction (theoretical)", *link, m.index));
        else
            r.measurements.push_back(Measurement::absent("link_gbps", "Link rate per direction (theoretical)", "GB/s",
                                                         gen && width ? "unknown PCIe generation" : "link state unknown").on_gpu(m.index));

        std::string source = std::string(kRateSource) + "; link " + link_name + " " + basis;
        Measurement h2d = rate("h2d_gbps", "Host to GPU (pinned)", p.alone.h2d_gbps, m.index);
        Measurement d2h = rate("d2h_gbps", "GPU to host (pinned)", p.alone.d2h_gbps, m.index);
        Measurement bi = rate("bidir_gbps", "Both directions at once", p.alone.bidir_gbps, m.index);
        if (link) {
            h2d.against(of_spec(*link, kHostCopyExpected, kHostCopyWarn, kHostCopyFail, source));
            d2h.against(of_spec(*link, kHostCopyExpected, kHostCopyWarn, kHostCopyFail, source));
            Reference both;
            both.spec = 2 * *link;
            both.source = "twice the link's rate per direction (" + link_name + ")";
            bi.against(both);
            grade_into(r, h2d);
            grade_into(r, d2h);
        }
        r.measurements.push_back(h2d);
        r.measurements.push_back(d2h);
        r.measurements.push_back(bi);

        // With every GPU copying.
        std::string all_text;
        if (p.all_measured) {
            auto vs_alone = [&](const char* k, const char* label, double v, double alone) {
                Measurement x = rate(k, label, v, m.index);
                Reference ref;
                ref.spec = alone;
                ref.warn_below = kSharedBelow * alone;
                ref.source = "this GPU's rate measured alone; below 70% of it the GPU shares its PCIe uplink";
                x.against(ref);
                r.measurements.push_back(x);
            };
            vs_alone("h2d_all_gbps", "Host to GPU, all GPUs at once", p.all.h2d_gbps, p.alone.h2d_gbps);
            vs_alone("d2h_all_gbps", "GPU to host, all GPUs at once", p.all.d2h_gbps, p.alone.d2h_gbps);
            vs_alone("bidir_all_gbps", "Both directions, all GPUs at once", p.all.bidir_gbps, p.alone.bidir_gbps);
            all_text = "; all " + std::to_string(n_ok) + " GPUs at once: " + fixed(p.all.h2d_gbps, 1) + " / " +
                       fixed(p.all.d2h_gbps, 1) + " GB/s";
        } else {
            std::string why = n_ok < 2 ? "only one GPU could be measured" : "not measured (interrupted)";
            for (const char* k : {"h2d_all_gbps", "d2h_all_gbps", "bidir_all_gbps"})
                r.measurements.push_back(Measurement::absent(k, "All GPUs at once", "GB/s", why).on_gpu(m.index));
        }
        r.measurements.push_back(Measurement::number("buffer_bytes", "Bytes per copy", double(bytes), "bytes").on_gpu(m.index));

        const std::string figures = "H2D " + fixed(p.alone.h2d_gbps, 1) + ", D2H " + fixed(p.alone.d2h_gbps, 1) +
                                    ", both ways " + fixed(p.alone.bidir_gbps, 1) + " GB/s";
        std::uint64_t wrong = p.alone.wrong_words + p.all.wrong_words;
        if (wrong)
            find(Verdict::Fail, "wrong data after host<->GPU copies: " + std::to_string(wrong) +
                                    " 8-byte words differ (a fast wrong answer is a failure: check dmesg for Xid "
                                    "errors and the PCIe replay counter)");
        if (link) {
            double worst_dir = std::min(p.alone.h2d_gbps, p.alone.d2h_gbps);
            Verdict v = grade(worst_dir, of_spec(*link, kHostCopyExpected, kHostCopyWarn, kHostCopyFail, ""));
            if (v != Verdict::Pass)
                find(v, "host copies reach only " + fixed(100 * worst_dir / *link, 0) + "% of the " + link_name +
                            " link's " + fixed(*link, 1) + " GB/s (healthy is about 82%, floor " +
                            fixed(100 * (v == Verdict::Fail ? kHostCopyFail : kHostCopyWarn), 0) + "%): " + figures);
        }
        // Idle links drop their generation to save power; under load they must be back at the maximum.
        if (p.link.gen && g && g->pcie_gen_max_gpu) {
            int gmax = g->pcie_gen_max_host ? std::min(*g->pcie_gen_max_gpu, *g->pcie_gen_max_host) : *g->pcie_gen_max_gpu;
            if (*p.link.gen < gmax)
                find(Verdict::Warn, "the link stayed at Gen" + std::to_string(*p.link.gen) + " during the copies where Gen" +
                                        std::to_string(gmax) + " is possible");
        }
        if (std::find(shared.begin(), shared.end(), m.index) != shared.end()) {
            double ratio = std::min(p.all.h2d_gbps / p.alone.h2d_gbps, p.all.d2h_gbps / p.alone.d2h_gbps);
            find(Verdict::Warn, "with all " + std::to_string(n_ok) + " GPUs copying, this GPU gets " +
                                    fixed(p.all.h2d_gbps, 1) + " / " + fixed(p.all.d2h_gbps, 1) + " GB/s (H2D / D2H), " +
                                    fixed(100 * ratio, 0) + "% of its " + fixed(p.alone.h2d_gbps, 1) + " / " +
                                    fixed(p.alone.d2h_gbps, 1) + " alone: GPUs " + gpu_list(shared) +
                                    " slow down together, so they share " + shared_path(ctx, shared) +
                                    " (data loading to all of them at once runs at that rate)");
        }

        if (findings.empty()) {
            r.summary = figures + (link ? " (" + fixed(100 * std::min(p.alone.h2d_gbps, p.alone.d2h_gbps) / *link, 0) +
                                              "% of the " + link_name + " link's " + fixed(*link, 1) + " GB/s; healthy ~82%)"
                                        : " (link rate unknown, so no verdict on speed)") +
                        all_text + ".";
        } else {
            std::stable_sort(findings.begin(), findings.end(),
                             [](const auto& a, const auto& b) { return severity(a.first) > severity(b.first); });
            r.summary = findings.front().second + ".";
            for (auto& [v, text] : findings) r.findings.push_back(Finding{v, text});
            r.details.push_back(figures + all_text);
        }
        out.push_back(std::move(r));
    }
    std::sort(out.begin(), out.end(), [](const CheckResult& a, const CheckResult& b) { return a.gpu < b.gpu; });
    if (out.empty()) {
        CheckResult r;
        r.key = std::string(key());
        r.title = std::string(title());
        r.verdict = Verdict::Skip;
        r.summary = ctx.stop_requested() ? "interrupted before any GPU was measured" : "no GPU selected";
        out.push_back(r);
    }
    return out;
}

}  // namespace gpuvet
