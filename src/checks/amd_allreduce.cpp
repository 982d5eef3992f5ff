// gpu.allreduce on AMD GPUs: RCCL (ROCm's NCCL) all-reduce across the selected GPUs from one process
// (ncclCommInitAll over their HIP ordinals), buffers in HIP device memory, the same sizes, fill
// pattern, verification and bus bandwidth as on NVIDIA, judged by judge_allreduce. No all-reduce
// floor is published for AMD's xGMI boards, so the bandwidth is reported without a verdict on speed
// (the details say why); wrong sums fail whatever the speed.
#include <algorithm>
#include <cstdlib>

#include "checks/amd_checks.hpp"
#include "checks/amd_measurement.hpp"
#include "checks/gpu_allreduce_judge.hpp"
#include "core/context.hpp"
#include "core/error.hpp"
#include "core/strings.hpp"
#include "gpu/allreduce_plan.hpp"
#include "gpu/bindings/nccl_api.hpp"
#include "specs/gpu_spec.hpp"

namespace gpuvet::amd_measure {

namespace {

using namespace allreduce;

void rccl_check(const RcclApi& n, nccl::ncclResult_t r, const char* call) {
    if (r != nccl::ncclSuccess) throw NcclError(call, r, n.error_text(r), RcclLib::kName);
}

void copy_check(const HipApi& api, unsigned code, const char* what) { hip_check(api, code, what); }

// Destroys the communicators however the run ends.
struct Comms {
    const RcclApi& n;
    std::vector<nccl::ncclComm_t> c;
    ~Comms() {
        for (auto* x : c)
            if (x) n.ncclCommDestroy(x);
    }
};

struct Rank {
    HipSession* s;
    HipBuffer send{}, recv{};
    HipStream stream{};
    HipEvent start{}, end{};
};

constexpr std::uint64_t kCheckChunk = 1u << 20;  // bytes verified at the start, middle and end

CheckResult skip(std::string why) {
    CheckResult r;
    r.verdict = Verdict::Skip;
    r.summary = std::move(why);
    return r;
}

// Why busbw is not judged on these GPUs: the xGMI figures the spec database holds are link peaks,
// not a measured all-reduce floor.
std::string unjudged_reason(const GpuSpec* spec) {
    if (!spec) return "GPU not in the spec database: busbw reported without a verdict on speed";
    std::string links;
    if (spec->xgmi_links && spec->xgmi_link_bandwidth_gbps)
        links = " (its data sheet gives " + std::to_string(*spec->xgmi_links) + " xGMI links at " +
                format_fixed(*spec->xgmi_link_bandwidth_gbps, 0) +
                " GB/s peak each: a link peak, not an all-reduce figure)";
    return "no published RCCL all-reduce floor for " + spec->name + links +
           ": busbw reported without a verdict on speed";
}

class Bench {
public:
    Bench(const RcclApi& rccl, std::vector<Rank>& ranks, std::vector<int>& devlist)
        : rccl_(rccl),
          ranks_(ranks),
          n_(static_cast<int>(ranks.size())),
          comms_{rccl, std::vector<nccl::ncclComm_t>(ranks.size(), nullptr)} {
        rccl_check(rccl_, rccl_.ncclCommInitAll(comms_.c.data(), n_, devlist.data()), "ncclCommInitAll");
    }

    // Buffers of `max_bytes` on every rank, the send buffers filled with the rank's pattern.
    void prepare(CheckContext& ctx, std::uint64_t max_bytes) {
        for (int i = 0; i < n_; ++i) {
            Rank& k = ranks_[i];
            k.s->make_current();
            k.send = k.s->alloc(max_bytes);
            k.recv = k.s->alloc(max_bytes);
            k.stream = k.s->stream();
            k.start = k.s->event();
            k.end = k.s->event();
            std::vector<float> tile(7 << 16);  // a multiple of 7 elements keeps i % 7 aligned
            for (std::size_t e = 0; e < tile.size(); ++e) tile[e] = pattern(i, e);
            const std::uint64_t tile_bytes = tile.size() * sizeof(float);
            auto* base = static_cast<char*>(k.send.get());
            for (std::uint64_t at = 0; at < max_bytes; at += tile_bytes) {
                ctx.throw_if_stopped();
                copy_check(k.s->api(),
                           k.s->api().hipMemcpy(base + at, tile.data(), std::min(tile_bytes, max_bytes - at),
                                                hip::hipMemcpyHostToDevice),
                           "hipMemcpy(host to device)");
            }
        }
    }

    SizeOutcome measure(CheckContext& ctx, std::uint64_t bytes, bool first) {
        for (int w = 0; w < (first ? 5 : 2); ++w) polled_pass(ctx, bytes);
        const int iters = bytes <= (64ull << 20) ? 20 : 5;
        for (auto& k : ranks_) k.start.record(k.stream);
        for (int it = 0; it < iters; ++it) polled_pass(ctx, bytes);
        for (auto& k : ranks_) k.end.record(k.stream);
        double ms = 0;
        for (auto& k : ranks_) ms = std::max(ms, k.start.ms_until(k.end));
        for (auto& k : ranks_) k.stream.synchronize();
        check_async_errors();
        SizeOutcome z;
        z.bytes = bytes;
        if (!(ms > 0))
            throw runtime_error("the GPU event timer measured no time for " + std::to_string(iters) +
                                    " all-reduce passes of " + size_text(bytes),
                                "run again; if it repeats, HIP's events do not time this GPU's work");
        z.algbw_gbps = double(bytes) / (ms / iters * 1e-3) / 1e9;
        z.busbw_gbps = bus_bandwidth(z.algbw_gbps, n_);
        verify(z);
        return z;
    }

private:
    void one_pass(std::uint64_t bytes) {
        rccl_check(rccl_, rccl_.ncclGroupStart(), "ncclGroupStart");
        for (int i = 0; i < n_; ++i)
            rccl_check(rccl_,
                       rccl_.ncclAllReduce(ranks_[i].send.get(), ranks_[i].recv.get(), bytes / sizeof(float),
                                           nccl::ncclFloat32, nccl::ncclSum, comms_.c[i], ranks_[i].stream.get()),
                       "ncclAllReduce");
        rccl_check(rccl_, rccl_.ncclGroupEnd(), "ncclGroupEnd");
    }
    void polled_pass(CheckContext& ctx, std::uint64_t bytes) {
        if (ctx.stop_requested()) {
            for (auto& k : ranks_) k.stream.synchronize();
            throw Interrupted{};
        }
        one_pass(bytes);
    }
    void check_async_errors() {
        if (!rccl_.ncclCommGetAsyncError) return;
        for (auto* c : comms_.c) {
            nccl::ncclResult_t async = nccl::ncclSuccess;
            rccl_.ncclCommGetAsyncError(c, &async);
            rccl_check(rccl_, async, "ncclCommGetAsyncError");
        }
    }
    // The start, middle and end of every rank's result against the exact sums.
    void verify(SizeOutcome& z) {
        const std::uint64_t count = z.bytes / sizeof(float), chunk = std::min<std::uint64_t>(kCheckChunk / 4, count);
        std::vector<float> host(chunk);
        for (auto& k : ranks_) {
            k.s->make_current();
            const auto* base = static_cast<const char*>(k.recv.get());
            for (std::uint64_t at : {std::uint64_t{0}, (count - chunk) / 2, count - chunk}) {
                copy_check(k.s->api(),
                           k.s->api().hipMemcpy(host.data(), base + at * sizeof(float), chunk * sizeof(float),
                                                hip::hipMemcpyDeviceToHost),
                           "hipMemcpy(device to host)");
                for (std::uint64_t e = 0; e < chunk; ++e)
                    if (host[e] != expected_sum(n_, at + e)) ++z.wrong;
                z.checked += chunk;
            }
        }
    }

    const RcclApi& rccl_;
    std::vector<Rank>& ranks_;
    int n_;
    Comms comms_;
};

std::vector<CheckResult> run_allreduce(CheckContext& ctx) {
    RcclApi rccl = RcclApi::load();
    if (!rccl.ok()) {
        CheckResult r = skip(kRcclMissingAdvice);
        r.details.push_back("tried (" + std::to_string(rccl.tried.size()) + "):");
        for (const auto& t : rccl.tried) r.details.push_back("  " + t);
        return {r};
    }
    std::vector<Member> members = open_gpus(ctx);
    std::vector<Rank> ranks;
    std::vector<int> devlist;
    const GpuSpec* spec = nullptr;
    for (Member& m : members) {
        if (!m.session) {
            CheckResult r;
            r.verdict = Verdict::Error;
            r.summary = "could not open GPU " + std::to_string(m.index) + ": " + m.error;
            if (!m.advice.empty()) r.details.push_back(m.advice);
            return {r};
        }
        ranks.push_back(Rank{m.session.get()});
        devlist.push_back(m.session->ordinal());
        if (!spec) spec = m.spec;
    }
    const int n = static_cast<int>(ranks.size());
    if (n < 2) return {skip("all-reduce needs at least 2 GPUs, " + std::to_string(n) + " could be opened")};

    std::uint64_t free_min = UINT64_MAX;
    for (auto& k : ranks)
        free_min = std::min<std::uint64_t>(free_min, (k.s->make_current(), k.s->mem_info().free_bytes));
    const std::vector<std::uint64_t> sizes = allreduce::sizes(ctx.options.tier, free_min * 4 / 10);
    if (sizes.empty()) return {skip("not enough free GPU memory for a 1 MiB all-reduce")};

    Bench bench(rccl, ranks, devlist);
    try {
        bench.prepare(ctx, sizes.back());
    } catch (const Interrupted&) {
        return {skip("interrupted while the buffers were filled, before any all-reduce ran; no verdict")};
    }
    AllReduceRun run;
    run.ranks = n;
    run.all_nvlink = false;  // no NVLink floor applies; the reason is said instead
    run.unjudged_reason = unjudged_reason(spec);
    run.library = RcclLib::kName;
    run.max_bytes = sizes.back();
    // RCCL reads NCCL_ALGO too; it has no NVLS, so the default label is its own.
    const char* algo = std::getenv("NCCL_ALGO");
    run.algorithm = algo && *algo ? algorithm_label(algo) : "RCCL default (ring/tree chosen by RCCL)";
    run.nccl_path = rccl.path;
    run.nccl_version = rccl.version_text();
    try {
        for (std::uint64_t bytes : sizes) {
            ctx.throw_if_stopped();
            if (ctx.progress) ctx.progress->update("all-reduce " + size_text(bytes));
            run.sizes.push_back(bench.measure(ctx, bytes, run.sizes.empty()));
        }
    } catch (const Interrupted&) {
        run.interrupted = true;
    }
    return {judge_allreduce(run, spec)};
}

}  // namespace

std::optional<std::string> allreduce_requirement(const CheckContext& ctx) {
    if (auto why = kernel_requirement()) return why;
    const Fact<int> count = amd_devices().device_count();
    int n = count ? *count : 0;
    if (!ctx.options.gpus.empty()) n = static_cast<int>(ctx.options.gpus.size());
    if (n < 2) return "all-reduce needs at least 2 GPUs, this run has " + std::to_string(n);
    return std::nullopt;
}

std::vector<CheckResult> allreduce(CheckContext& ctx) { return run_allreduce(ctx); }

}  // namespace gpuvet::amd_measure
