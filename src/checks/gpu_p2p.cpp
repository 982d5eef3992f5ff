#include "checks/gpu_p2p.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <map>

#include "checks/gpu_p2p_judge.hpp"
#include "checks/run_facts.hpp"
#include "core/error.hpp"
#include "core/result.hpp"
#include "gpu/device_fill.hpp"
#include "gpu/inventory.hpp"

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

// Sizes by tier: bytes per copy, samples of `iters` copies, 4-byte copies for the latency.
struct CopyPlan {
    std::size_t bytes = 0;
    int samples = 0, iters = 0, small = 0;
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
    cuda_check(api,
               api.cuMemcpyPeerAsync(to.dst.ptr(), to.m->session->context(), what.ptr(), from.m->session->context(),
                                     bytes, on.get()),
               "cuMemcpyPeerAsync");
}

// One GPU's buffers, stream and events, its source filled with its pattern.
void prepare(const CheckContext& ctx, const CudaApi& api, Side& s, std::size_t bytes) {
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
        cuda_check(api,
                   api.cuMemsetD32Async(s.src.ptr() + off, pattern_of(s.m->index),
                                        std::min(kFillStepBytes, bytes - off) / 4, s.st.get()),
                   "cuMemsetD32Async");
    }
    s.st.synchronize();
}

// Support and enabling, both directions of every pair, with each pair's path and expected rate.
P2pPairs probe_pairs(const CheckContext& ctx, const CudaApi& api, std::vector<Side>& sides) {
    P2pPairs pairs;
    for (Side& a : sides)
        for (Side& b : sides) {
            if (&a == &b) continue;
            P2pPairFigures& p = pairs[{a.m->index, b.m->index}];
            int can = 0;
            cuda_check(api, api.cuDeviceCanAccessPeer(&can, a.m->session->device(), b.m->session->device()),
                       "cuDeviceCanAccessPeer");
            p.can_access = can != 0;
            if (p.can_access) {
                a.m->session->make_current();
                int rc = api.cuCtxEnablePeerAccess(b.m->session->context(), 0);
                p.enabled = rc == cu::CUDA_SUCCESS || rc == cu::CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED;
                if (!p.enabled) p.enable_error = CudaError("cuCtxEnablePeerAccess", rc, "").what();
            }
            p.path = label_between(ctx, a.m->index, b.m->index);
            p.nvlinks = nvlink_count_of(p.path);
            p.expected = p2p_expectation(p.path, ctx.facts->spec_of(a.m->index), ctx.facts->spec_of(b.m->index),
                                         a.m->info, b.m->info);
        }
    return pairs;
}

// a -> b on a's stream: the bandwidth (median of samples), the latency of 4-byte copies, and what
// arrived at b verified. A stop is polled before every copy and throws Interrupted.
void measure_one_way(const CheckContext& ctx, const CudaApi& api, const CopyPlan& plan, Side& a, Side& b,
                     P2pPairFigures& p) {
    a.m->session->make_current();
    ctx.throw_if_stopped();
    copy(api, b, a, a.src, plan.bytes, a.st);  // warm-up
    std::vector<double> ms;
    for (int k = 0; k < plan.samples; ++k)
        ms.push_back(a.m->session->time_ms(a.st, [&] {
            for (int q = 0; q < plan.iters; ++q) {
                ctx.throw_if_stopped();
                copy(api, b, a, a.src, plan.bytes, a.st);
            }
        }));
    p.uni_gbps = double(plan.bytes) * plan.iters / (median(ms).value() * 1e-3) / 1e9;
    double lat_ms = a.m->session->time_ms(a.st, [&] {
        for (int q = 0; q < plan.small; ++q)
            cuda_check(api,
                       api.cuMemcpyPeerAsync(b.tiny.ptr(), b.m->session->context(), a.tiny.ptr(),
                                             a.m->session->context(), 4, a.st.get()),
                       "cuMemcpyPeerAsync");
    });
    p.latency_us = lat_ms * 1e3 / plan.small;
    b.m->session->make_current();
    p.wrong_words += count_wrong(*b.m->session, b.st, b.dst, pattern_of(a.m->index), b.counter);
}

// Both directions at once: a->b on a's stream and b->a on b's, from e0 until both are done; both
// destinations verified. Recorded on the (a, b) entry. A stop throws Interrupted.
void measure_both_ways(const CheckContext& ctx, const CudaApi& api, const CopyPlan& plan, Side& a, Side& b,
                       P2pPairFigures& p) {
    std::vector<double> ms;
    for (int k = 0; k < plan.samples; ++k) {
        a.m->session->make_current();
        a.e0.record(a.st);
        b.m->session->make_current();
        cuda_check(api, api.cuStreamWaitEvent(b.st.get(), a.e0.get(), 0), "cuStreamWaitEvent");
        for (int q = 0; q < plan.iters; ++q) {
            ctx.throw_if_stopped();
            a.m->session->make_current();
            copy(api, b, a, a.src, plan.bytes, a.st);
            b.m->session->make_current();
            copy(api, a, b, b.src, plan.bytes, b.st);
        }
        b.eb.record(b.st);
        a.m->session->make_current();
        cuda_check(api, api.cuStreamWaitEvent(a.st.get(), b.eb.get(), 0), "cuStreamWaitEvent");
        a.e1.record(a.st);
        ms.push_back(elapsed_ms(api, a.e0, a.e1));
    }
    p.bidir_gbps = 2.0 * double(plan.bytes) * plan.iters / (median(ms).value() * 1e-3) / 1e9;
    p.wrong_words += count_wrong(*a.m->session, a.st, a.dst, pattern_of(b.m->index), a.counter);
    b.m->session->make_current();
    p.wrong_words += count_wrong(*b.m->session, b.st, b.dst, pattern_of(a.m->index), b.counter);
}

// Every ordered pair one way (with latency), then every pair both ways. Returns true when a stop
// ended both loops; the copies in flight then finish before the buffers are freed.
bool measure_pairs(const CheckContext& ctx, const CudaApi& api, const CopyPlan& plan, std::vector<Side>& sides,
                   P2pPairs& pairs) {
    const std::size_t n = sides.size();
    auto show = [&](const Side& a, const char* arrow, const Side& b) {
        if (ctx.progress)
            ctx.progress->update("GPU " + std::to_string(a.m->index) + arrow + std::to_string(b.m->index));
    };
    try {
        for (std::size_t i = 0; i < n; ++i)
            for (std::size_t j = 0; j < n; ++j) {
                if (i == j) continue;
                show(sides[i], " -> ", sides[j]);
                measure_one_way(ctx, api, plan, sides[i], sides[j], pairs[{sides[i].m->index, sides[j].m->index}]);
            }
        for (std::size_t i = 0; i < n; ++i)
            for (std::size_t j = i + 1; j < n; ++j) {
                show(sides[i], " <-> ", sides[j]);
                measure_both_ways(ctx, api, plan, sides[i], sides[j], pairs[{sides[i].m->index, sides[j].m->index}]);
            }
    } catch (const Interrupted&) {
        for (Side& s : sides) {
            s.m->session->make_current();
            s.st.synchronize();
        }
        return true;
    }
    return false;
}

}  // namespace

std::vector<CheckResult> GpuP2pCheck::run(CheckContext& ctx) {
    std::vector<CheckResult> out;
    GpuSet set = open_gpus(ctx, key(), title(), out);
    std::vector<Side> sides;
    for (auto& m : set.members())
        if (m.session) sides.push_back(Side{&m, {}, {}, {}, {}, {}, {}, {}, {}});
    if (sides.size() < 2) {
        CheckResult r;
        r.key = std::string(key());
        r.title = std::string(title());
        r.verdict = Verdict::Skip;
        r.summary = "needs two GPUs or more; " + std::to_string(sides.size()) + " could be opened.";
        out.push_back(std::move(r));
        return out;
    }
    const CudaApi& api = set.api();
    if (!api.cuDeviceCanAccessPeer || !api.cuCtxEnablePeerAccess || !api.cuMemcpyPeerAsync || !api.cuStreamWaitEvent)
        throw Error(ErrorKind::Driver, "libcuda at " + api.path + " lacks the peer-access calls",
                    "update the NVIDIA driver: GPU measurements need it");
    const CopyPlan plan{std::size_t(by_tier(ctx, 32, 256, 512)) << 20, by_tier(ctx, 3, 5, 7), by_tier(ctx, 2, 4, 8),
                        by_tier(ctx, 20, 100, 200)};
    auto t0 = std::chrono::steady_clock::now();
    for (Side& s : sides) prepare(ctx, api, s, plan.bytes);

    P2pMeasured measured;
    for (const Side& s : sides) measured.gpus.push_back(s.m->index);
    measured.buffer_bytes = plan.bytes;
    measured.pairs = probe_pairs(ctx, api, sides);
    measured.interrupted = measure_pairs(ctx, api, plan, sides, measured.pairs);
    measured.duration_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

    CheckResult r = judge_p2p(measured);
    r.key = std::string(key());
    r.title = std::string(title());
    out.push_back(std::move(r));
    return out;
}

}  // namespace gpuvet
