#include "checks/gpu_allreduce.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "checks/run_facts.hpp"
#include "core/context.hpp"
#include "core/error.hpp"
#include "gpu/allreduce_plan.hpp"
#include "checks/gpu_gemm.hpp"
#include "gpu/device_fill.hpp"
#include "gpu/inventory.hpp"
#include "checks/gpu_requirements.hpp"
#include "gpu/session.hpp"
#include "gpu/bindings/nccl_api.hpp"
#include "specs/gpu_spec.hpp"

namespace gpuvet {

namespace {

std::string fmt(double v, int digits = 1) {
    char b[64];
    std::snprintf(b, sizeof b, "%.*f", digits, v);
    return b;
}

std::string size_text(std::uint64_t b) {
    return b >= (1ull << 30) ? std::to_string(b >> 30) + " GiB" : std::to_string(b >> 20) + " MiB";
}

void nccl_check(const NcclApi& n, nccl::ncclResult_t r, const char* call) {
    if (r != nccl::ncclSuccess) throw NcclError(call, r, n.error_text(r));
}

// Destroys the communicators however the run ends.
struct Comms {
    const NcclApi& n;
    std::vector<nccl::ncclComm_t> c;
    ~Comms() {
        for (auto* x : c)
            if (x) n.ncclCommDestroy(x);
    }
};

struct Rank {
    GpuSession* s;
    DeviceBuffer send{}, recv{};  // {}: built as Rank{session}, the rest filled in later
    Stream stream{};
    Event start{}, end{};
};

constexpr std::uint64_t kCheckChunk = 1u << 20;  // bytes verified at the start, middle and end

}  // namespace

std::optional<std::string> GpuAllReduceCheck::unmet_requirement(const CheckContext& ctx) const {
    if (auto why = gpu_requirement(ctx, GpuNeed::Cuda)) return why;
    std::size_t n = ctx.facts->selected_gpus().size();
    if (n < 2) return "all-reduce needs at least 2 GPUs, this run has " + std::to_string(n);
    return std::nullopt;
}

std::vector<CheckResult> GpuAllReduceCheck::run(CheckContext& ctx) {
    CheckResult r;
    NcclApi nccl = NcclApi::load();
    if (!nccl.ok()) {
        r.verdict = Verdict::Skip;
        r.summary = kNcclMissingAdvice;
        r.details.push_back("tried (" + std::to_string(nccl.tried.size()) + "):");
        for (const auto& t : nccl.tried) r.details.push_back("  " + t);
        return {r};
    }
    GpuSet set = GpuSet::open(ctx.facts->selected_gpus());
    std::vector<Rank> ranks;
    std::vector<int> devlist;
    bool all_nvlink = true;
    const GpuSpec* spec = nullptr;
    for (auto& m : set.members()) {
        if (!m.session) {
            r.verdict = Verdict::Error;
            r.summary = "could not open GPU " + std::to_string(m.index) + ": " + m.error;
            return {r};
        }
        ranks.push_back(Rank{m.session.get()});
        devlist.push_back(m.session->ordinal());
        if (!spec) spec = (m.info ? ctx.facts->spec_of(m.info->index) : nullptr);
        bool active = false;
        if (m.info)
            for (const auto& l : m.info->nvlinks) active = active || (l.active && *l.active.value);
        all_nvlink = all_nvlink && active;
    }
    int n = static_cast<int>(ranks.size());
    if (n < 2) {
        r.verdict = Verdict::Skip;
        r.summary = "all-reduce needs at least 2 GPUs, " + std::to_string(n) + " could be opened";
        return {r};
    }

    std::uint64_t free_min = UINT64_MAX;
    for (auto& k : ranks) free_min = std::min<std::uint64_t>(free_min, (k.s->make_current(), k.s->mem_info().free_bytes));
    std::vector<std::uint64_t> sizes = allreduce::sizes(ctx.options.tier, free_min * 4 / 10);
    if (sizes.empty()) {
        r.verdict = Verdict::Skip;
        r.summary = "not enough free GPU memory for a 1 MiB all-reduce";
        return {r};
    }
    std::uint64_t max_bytes = sizes.back();

    Comms comms{nccl, std::vector<nccl::ncclComm_t>(n, nullptr)};
    nccl_check(nccl, nccl.ncclCommInitAll(comms.c.data(), n, devlist.data()), "ncclCommInitAll");
    for (int i = 0; i < n; ++i) {
        Rank& k = ranks[i];
        k.s->make_current();
        k.send = k.s->alloc(max_bytes);
        k.recv = k.s->alloc(max_bytes);
        k.stream = k.s->stream();
        k.start = k.s->event();
        k.end = k.s->event();
        std::vector<float> tile(7 << 16);  // a multiple of 7 elements keeps i % 7 aligned
        for (std::size_t e = 0; e < tile.size(); ++e) tile[e] = allreduce::pattern(i, e);
        try {
            fill_repeating(*k.s, k.send.ptr(), max_bytes, tile.data(), tile.size() * sizeof(float), ctx.stop);
        } catch (const Interrupted&) {
            r.verdict = Verdict::Skip;
            r.summary = "interrupted while the buffers were filled, before any all-reduce ran; no verdict";
            return {r};
        }
    }

    auto one_pass = [&](std::uint64_t bytes) {
        nccl_check(nccl, nccl.ncclGroupStart(), "ncclGroupStart");
        for (int i = 0; i < n; ++i)
            nccl_check(nccl,
                       nccl.ncclAllReduce(reinterpret_cast<const void*>(ranks[i].send.ptr()),
                                          reinterpret_cast<void*>(ranks[i].recv.ptr()), bytes / sizeof(float),
                                          nccl::ncclFloat32, nccl::ncclSum, comms.c[i], ranks[i].stream.get()),
                       "ncclAllReduce");
        nccl_check(nccl, nccl.ncclGroupEnd(), "ncclGroupEnd");
    };

    std::string algo = allreduce::algorithm_label(std::getenv("NCCL_ALGO"));
    // Figures at the largest size, absent until that size was measured (a stop can come first).
    std::optional<double> last_busbw, last_algbw, peak_busbw;
    std::uint64_t wrong = 0, checked = 0, measured_bytes = 0;
    bool first = true, cut = false;
    // A stop is polled before every pass; a pass in flight is waited for, never judged.
    auto polled_pass = [&](std::uint64_t bytes) {
        if (ctx.stop_requested()) {
            for (auto& k : ranks) k.stream.synchronize();
            throw Interrupted{};
        }
        one_pass(bytes);
    };
    try {
        for (std::uint64_t bytes : sizes) {
            ctx.throw_if_stopped();
            if (ctx.progress) ctx.progress->update("all-reduce " + size_text(bytes));
            for (int w = 0; w < (first ? 5 : 2); ++w) polled_pass(bytes);
            first = false;
            int iters = bytes <= (64ull << 20) ? 20 : 5;
            for (auto& k : ranks) k.start.record(k.stream);
            for (int it = 0; it < iters; ++it) polled_pass(bytes);
            for (auto& k : ranks) k.end.record(k.stream);
            double ms = 0;
            for (auto& k : ranks) ms = std::max(ms, elapsed_ms(k.s->api(), k.start, k.end));
            for (auto& k : ranks) k.stream.synchronize();
            if (nccl.ncclCommGetAsyncError)
                for (auto* c : comms.c) {
                    nccl::ncclResult_t async = nccl::ncclSuccess;
                    nccl.ncclCommGetAsyncError(c, &async);
                    nccl_check(nccl, async, "ncclCommGetAsyncError");
                }
            double algbw = ms > 0 ? double(bytes) / (ms / iters * 1e-3) / 1e9 : 0;
            double busbw = allreduce::bus_bandwidth(algbw, n);

            // Verify: start, middle and end of every rank's result.
            std::uint64_t sz_wrong = 0;
            std::uint64_t count = bytes / sizeof(float), chunk = std::min<std::uint64_t>(kCheckChunk / 4, count);
            std::vector<float> host(chunk);
            for (auto& k : ranks) {
                k.s->make_current();
                for (std::uint64_t at : {std::uint64_t{0}, (count - chunk) / 2, count - chunk}) {
                    k.s->download(host.data(), k.recv.ptr() + at * sizeof(float), chunk * sizeof(float));
                    for (std::uint64_t e = 0; e < chunk; ++e)
                        if (host[e] != allreduce::expected_sum(n, at + e)) ++sz_wrong;
                    checked += chunk;
                }
            }
            wrong += sz_wrong;
            r.details.push_back(size_text(bytes) + ": algbw " + fmt(algbw) + " GB/s, busbw " + fmt(busbw) + " GB/s" +
                                (sz_wrong ? ", " + std::to_string(sz_wrong) + " WRONG elements" : ", verified"));
            last_algbw = algbw, last_busbw = busbw, peak_busbw = std::max(peak_busbw.value_or(0), busbw);
            measured_bytes = bytes;
        }
    } catch (const Interrupted&) {
        cut = true;
    }
    if (cut) {  // the figures at the largest size were not reached: absent, and no verdict on speed
        last_busbw.reset();
        last_algbw.reset();
        r.details.push_back("interrupted" + (measured_bytes ? " after the " + size_text(measured_bytes) + " size"
                                                            : std::string(" before the first size was measured")) +
                            "; the figures at " + size_text(max_bytes) + " were not measured");
    }

    Measurement bus = Measurement::maybe("busbw_gbps", "Bus bandwidth at " + size_text(max_bytes), last_busbw, "GB/s",
                                         kInterrupted);
    auto fl = spec ? allreduce::floor_for(spec->key, n, all_nvlink) : std::nullopt;
    Verdict v = Verdict::Pass;
    if (fl) {
        Reference ref;
        ref.fail_below = fl->busbw_gbps;
        ref.warn_below = fl->busbw_gbps * 1.05;
        ref.source = fl->source;
        bus.against(ref);
        if (last_busbw && *last_busbw < fl->busbw_gbps) v = Verdict::Fail;
        else if (last_busbw && *last_busbw < fl->busbw_gbps * 1.05) v = Verdict::Warn;
    }
    r.measurements.push_back(bus);
    r.measurements.push_back(Measurement::maybe("algbw_gbps", "Algorithm bandwidth at " + size_text(max_bytes), last_algbw,
                                                "GB/s", kInterrupted));
    r.measurements.push_back(Measurement::maybe("peak_busbw_gbps", "Peak bus bandwidth", peak_busbw, "GB/s", kInterrupted));
    r.measurements.push_back(Measurement::number("gpus", "GPUs in the all-reduce", n, "count"));
    r.measurements.push_back(Measurement::textual("algorithm", "Algorithm", algo));
    r.measurements.push_back(Measurement::textual("nccl", "NCCL used", nccl.path + ", NCCL " + nccl.version_text()));
    r.details.push_back("NCCL " + nccl.version_text() + " from " + nccl.path + "; " + algo);
    r.details.push_back("busbw = algbw x 2(n-1)/n with n = " + std::to_string(n) + " (nccl-tests)");
    if (!fl)
        r.details.push_back(all_nvlink ? "no published all-reduce floor for this GPU: reported without a verdict"
                                       : "GPUs not all on NVLink (PCIe): no published floor, reported without a verdict");
    if (wrong) {
        r.verdict = Verdict::Fail;
        r.summary = std::to_string(wrong) + " of " + std::to_string(checked) + " checked all-reduce results are WRONG";
    } else if (cut) {
        r.verdict = Verdict::Skip;
        r.summary = "interrupted before the " + size_text(max_bytes) + " all-reduce was measured; no verdict" +
                    (peak_busbw ? " (peak so far " + fmt(*peak_busbw) + " GB/s, results verified)" : std::string());
    } else {
        r.verdict = v;
        r.summary = "busbw " + fmt(*last_busbw) + " GB/s at " + size_text(max_bytes) + " over " + std::to_string(n) +
                    " GPUs" + (fl ? " (floor " + fmt(fl->busbw_gbps, 0) + ")" : "") + ", all results verified";
    }
    return {r};
}

}  // namespace gpuvet
