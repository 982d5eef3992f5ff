#include "checks/gpu_h2d_d2h.hpp"

#include <algorithm>
#include <barrier>
#include <chrono>
#include <cstring>
#include <map>

#include "checks/amd_checks.hpp"
#include "checks/amd_measurement.hpp"
#include "checks/gpu_h2d_d2h_judge.hpp"
#include "checks/run_facts.hpp"
#include "core/error.hpp"
#include "gpu/inventory.hpp"
#include "gpu/device/backend_choice.hpp"
#include "specs/gpu_spec.hpp"
#include "gpu/device/derived_facts.hpp"
#include "specs/pcie.hpp"

namespace gpuvet {

namespace {

using namespace measure;

// The link state NVML reports now (called while copies run: idle links drop their generation).
PcieLinkReading read_link(int index) {
    PcieLinkReading l;
    const DeviceBackend& backend = GpuBackends::shared().devices();
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
        : s(session),
          api(session.api()),
          bytes(n),
          ctx(c),
          src(s.alloc_pinned(n)),
          dst(s.alloc_pinned(n)),
          da(s.alloc(n)),
          db(s.alloc(n)),
          a(s.stream()),
          b(s.stream()),
          e0(s.event()),
          eb(s.event()),
          e1(s.event()) {
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
HostCopyRates run_rig(Rig& r, int samples, int iters, const std::function<void()>& sync, PcieLinkReading* link,
                      int index) {
    const CheckContext& ctx = r.ctx;
    HostCopyRates out;
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
    out.h2d_gbps = gbps(per_sample, median_ms([&] {
                            for (int k = 0; k < iters; ++k) r.h2d(r.da, r.a);
                        }));

    sync();
    r.d2h(r.da, r.a);
    r.a.synchronize();
    out.d2h_gbps = gbps(per_sample, median_ms([&] {
                            for (int k = 0; k < iters; ++k) r.d2h(r.da, r.a);
                        }));
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

// Sizes by tier: bytes per copy, samples of `iters` copies.
struct CopyPlan {
    std::size_t bytes = 0;
    int samples = 0, iters = 0;
};

// One GPU's outcome: measured, cut short by a stop, or failed with an error.
struct GpuCopies {
    HostCopyMeasured measured;
    bool interrupted = false;  // a stop cut this GPU's own measurement short
    std::string error, advice;
};
using CopiesByGpu = std::map<int, GpuCopies>;

std::uint64_t seed_of(int index) { return 0xC0FFEE0000000000ull + std::uint64_t(index) * 0x1000193ull; }

// What the inventory knows of the GPU's link before the copies: the idle state and the maximum.
void add_inventory_link(const GpuInfo* g, HostCopyMeasured& m) {
    if (!g) return;
    if (g->pcie_gen_current) m.idle_gen = *g->pcie_gen_current;
    if (g->pcie_width_current) m.idle_width = *g->pcie_width_current;
    if (auto gen = pcie_gen_max_link(*g)) m.max_gen = *gen;
}

// Each GPU alone: the others idle, so nothing shares its path. After a stop the rest are not run.
void measure_alone(const CheckContext& ctx, GpuSet& set, const CopyPlan& plan, CopiesByGpu& per) {
    for (auto& m : set.members()) {
        if (!m.session || ctx.stop_requested()) continue;
        if (ctx.progress) ctx.progress->update("GPU " + std::to_string(m.index) + " alone");
        GpuCopies& p = per[m.index];
        p.measured.gpu = m.index;
        add_inventory_link(m.info, p.measured);
        auto t0 = std::chrono::steady_clock::now();
        try {
            m.session->make_current();
            Rig rig(*m.session, plan.bytes, seed_of(m.index), ctx);
            p.measured.alone = run_rig(
                rig, plan.samples, plan.iters, [] {}, &p.measured.under_load, m.index);
        } catch (const Interrupted&) {
            p.interrupted = true;
        } catch (const Error& e) {
            p.error = e.what();
            p.advice = e.advice();
        }
        p.measured.duration_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }
}

// All at once, one thread per GPU, phases lined up: GPUs behind one switch or root port share it.
// A GPU stopped or failing drops out of the barrier; the others go on.
void measure_all_at_once(const CheckContext& ctx, GpuSet& set, const CopyPlan& plan, CopiesByGpu& per,
                         std::ptrdiff_t n_ok) {
    if (ctx.progress) ctx.progress->update("all " + std::to_string(n_ok) + " GPUs at once");
    std::barrier<> phase(n_ok);
    set.run_parallel([&](GpuSet::Member& m) {
        auto it = per.find(m.index);
        if (it == per.end() || !it->second.error.empty() || it->second.interrupted) return;
        try {
            Rig rig(*m.session, plan.bytes, seed_of(m.index) ^ 0xFFull, ctx);
            it->second.measured.all = run_rig(
                rig, plan.samples, plan.iters, [&] { phase.arrive_and_wait(); }, nullptr, m.index);
        } catch (const Interrupted&) {
            phase.arrive_and_drop();  // the alone figures stand; the shared phase is not reported
        } catch (const Error& e) {
            phase.arrive_and_drop();  // the others go on without this GPU
            it->second.error = std::string("with all GPUs copying: ") + e.what();
            it->second.advice = e.advice();
        }
    });
}

// The topology labels between the measured GPUs, where the inventory has them.
TopologyLabels topology_labels(const CheckContext& ctx, const std::vector<int>& gpus) {
    TopologyLabels labels;
    if (!ctx.facts) return labels;
    const auto& inv = ctx.facts->inventory();
    auto pos = [&](int idx) -> int {
        for (std::size_t k = 0; k < inv.gpus.size(); ++k)
            if (inv.gpus[k].index == idx) return int(k);
        return -1;
    };
    for (std::size_t i = 0; i < gpus.size(); ++i)
        for (std::size_t j = i + 1; j < gpus.size(); ++j) {
            int a = pos(gpus[i]), b = pos(gpus[j]);
            if (a < 0 || b < 0 || std::size_t(a) >= inv.topology.matrix.size() ||
                std::size_t(b) >= inv.topology.matrix[a].size())
                continue;
            labels[{std::min(gpus[i], gpus[j]), std::max(gpus[i], gpus[j])}] = inv.topology.matrix[a][b];
        }
    return labels;
}

// What the GPUs measured without error share, for every GPU's judgement.
HostCopyGroup group_of(const CheckContext& ctx, const CopiesByGpu& per, std::ptrdiff_t n_ok, std::size_t bytes) {
    HostCopyGroup group;
    group.gpus_measured = int(n_ok);
    group.buffer_bytes = bytes;
    std::vector<HostCopyMeasured> ok;
    std::vector<int> indices;
    for (const auto& [i, p] : per)
        if (p.error.empty()) ok.push_back(p.measured), indices.push_back(i);
    group.shared = gpus_sharing_uplink(ok);
    group.shared_path = shared_path(group.shared, topology_labels(ctx, indices));
    return group;
}

}  // namespace

std::vector<CheckResult> GpuHostCopyCheck::run(CheckContext& ctx) {
    if (amd_measure::run_is_amd(ctx)) return amd_measure::host_copies(ctx, key(), title());
    std::vector<CheckResult> out;
    GpuSet set = open_gpus(ctx, key(), title(), out);
    const CopyPlan plan{std::size_t(by_tier(ctx, 32, 256, 1024)) << 20, by_tier(ctx, 3, 5, 9), by_tier(ctx, 2, 4, 4)};
    CopiesByGpu per;
    measure_alone(ctx, set, plan, per);
    std::ptrdiff_t n_ok = 0;
    for (auto& [i, p] : per) n_ok += p.error.empty() && !p.interrupted;
    if (n_ok >= 2 && !ctx.stop_requested()) measure_all_at_once(ctx, set, plan, per, n_ok);
    const HostCopyGroup group = group_of(ctx, per, n_ok, plan.bytes);

    for (auto& m : set.members()) {
        if (!m.session) continue;
        auto it = per.find(m.index);
        if (it != per.end() && !it->second.interrupted && !it->second.error.empty()) {
            out.push_back(error_result(key(), title(), m.index, it->second.error, it->second.advice));
            continue;
        }
        CheckResult r;  // a stop kept it from running, or cut it short: no verdict
        if (it == per.end() || it->second.interrupted) {
            r.gpu = m.index;
            r.summary =
                it == per.end() ? kNotRunInterrupted : "interrupted before this GPU's copies were measured; no verdict";
        } else {
            r = judge_host_copies(it->second.measured, group);
        }
        r.key = std::string(key());
        r.title = std::string(title());
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
