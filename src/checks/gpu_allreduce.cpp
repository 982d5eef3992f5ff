#include "checks/gpu_allreduce.hpp"

#include <algorithm>
#include <cstdlib>

#include "checks/amd_checks.hpp"
#include "checks/amd_measurement.hpp"
#include "checks/gpu_allreduce_judge.hpp"
#include "checks/run_facts.hpp"
#include "core/context.hpp"
#include "core/error.hpp"
#include "gpu/allreduce_plan.hpp"
#include "checks/gpu_gemm.hpp"
#include "gpu/device/derived_facts.hpp"
#include "gpu/device_fill.hpp"
#include "gpu/inventory.hpp"
#include "checks/gpu_requirements.hpp"
#include "gpu/session.hpp"
#include "gpu/bindings/nccl_api.hpp"
#include "specs/gpu_spec.hpp"

namespace gpuvet {

namespace {

using namespace allreduce;

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

// The GPUs of the all-reduce, each with its session; or why there is none.
struct OpenedRanks {
    std::vector<Rank> ranks;
    std::vector<int> devlist;
    bool all_nvlink = true;
    const GpuSpec* spec = nullptr;  // the first GPU's SKU
    std::optional<CheckResult> refused;
};

OpenedRanks open_ranks(CheckContext& ctx, GpuSet& set) {
    OpenedRanks o;
    for (auto& m : set.members()) {
        if (!m.session) {
            CheckResult r;
            r.verdict = Verdict::Error;
            r.summary = "could not open GPU " + std::to_string(m.index) + ": " + m.error;
            o.refused = r;
            return o;
        }
        o.ranks.push_back(Rank{m.session.get()});
        o.devlist.push_back(m.session->ordinal());
        if (!o.spec) o.spec = (m.info ? ctx.facts->spec_of(m.info->index) : nullptr);
        o.all_nvlink = o.all_nvlink && m.info && active_nvlinks(*m.info) > 0;
    }
    return o;
}

CheckResult skip(std::string why) {
    CheckResult r;
    r.verdict = Verdict::Skip;
    r.summary = std::move(why);
    return r;
}

// The communicators and buffers of every rank, and the timed, verified all-reduce of one size.
class AllReduceBench {
public:
    AllReduceBench(const NcclApi& nccl, std::vector<Rank>& ranks, std::vector<int>& devlist)
        : nccl_(nccl),
          ranks_(ranks),
          n_(static_cast<int>(ranks.size())),
          comms_{nccl, std::vector<nccl::ncclComm_t>(ranks.size(), nullptr)} {
        nccl_check(nccl_, nccl_.ncclCommInitAll(comms_.c.data(), n_, devlist.data()), "ncclCommInitAll");
    }

    // Buffers of `max_bytes` on every rank, the send buffers filled with the rank's pattern.
    void prepare(std::uint64_t max_bytes, const std::atomic<bool>* stop) {
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
            fill_repeating(*k.s, k.send.ptr(), max_bytes, tile.data(), tile.size() * sizeof(float), stop);
        }
    }

    // Warm-up (5 passes before the first size, 2 before the others), then timed passes.
    SizeOutcome measure(CheckContext& ctx, std::uint64_t bytes, bool first) {
        for (int w = 0; w < (first ? 5 : 2); ++w) polled_pass(ctx, bytes);
        const int iters = bytes <= (64ull << 20) ? 20 : 5;
        for (auto& k : ranks_) k.start.record(k.stream);
        for (int it = 0; it < iters; ++it) polled_pass(ctx, bytes);
        for (auto& k : ranks_) k.end.record(k.stream);
        double ms = 0;
        for (auto& k : ranks_) ms = std::max(ms, elapsed_ms(k.s->api(), k.start, k.end));
        for (auto& k : ranks_) k.stream.synchronize();
        check_async_errors();
        SizeOutcome z;
        z.bytes = bytes;
        // A zero reading is a timer that did not work, not an infinite rate: no figure, no verdict.
        if (!(ms > 0))
            throw runtime_error("the GPU event timer measured no time for " + std::to_string(iters) +
                                    " all-reduce passes of " + size_text(bytes),
                                "run again; if it repeats, the driver's CUDA events do not time this GPU's work");
        z.algbw_gbps = double(bytes) / (ms / iters * 1e-3) / 1e9;
        z.busbw_gbps = bus_bandwidth(z.algbw_gbps, n_);
        verify(z);
        return z;
    }

private:
    void one_pass(std::uint64_t bytes) {
        nccl_check(nccl_, nccl_.ncclGroupStart(), "ncclGroupStart");
        for (int i = 0; i < n_; ++i)
            nccl_check(nccl_,
                       nccl_.ncclAllReduce(reinterpret_cast<const void*>(ranks_[i].send.ptr()),
                                           reinterpret_cast<void*>(ranks_[i].recv.ptr()), bytes / sizeof(float),
                                           nccl::ncclFloat32, nccl::ncclSum, comms_.c[i], ranks_[i].stream.get()),
                       "ncclAllReduce");
        nccl_check(nccl_, nccl_.ncclGroupEnd(), "ncclGroupEnd");
    }
    // A stop is polled before every pass; a pass in flight is waited for, never judged.
    void polled_pass(CheckContext& ctx, std::uint64_t bytes) {
        if (ctx.stop_requested()) {
            for (auto& k : ranks_) k.stream.synchronize();
            throw Interrupted{};
        }
        one_pass(bytes);
    }
    void check_async_errors() {
        if (!nccl_.ncclCommGetAsyncError) return;
        for (auto* c : comms_.c) {
            nccl::ncclResult_t async = nccl::ncclSuccess;
            nccl_.ncclCommGetAsyncError(c, &async);
            nccl_check(nccl_, async, "ncclCommGetAsyncError");
        }
    }
    // The start, middle and end of every rank's result against the exact sums.
    void verify(SizeOutcome& z) {
        const std::uint64_t count = z.bytes / sizeof(float), chunk = std::min<std::uint64_t>(kCheckChunk / 4, count);
        std::vector<float> host(chunk);
        for (auto& k : ranks_) {
            k.s->make_current();
            for (std::uint64_t at : {std::uint64_t{0}, (count - chunk) / 2, count - chunk}) {
                k.s->download(host.data(), k.recv.ptr() + at * sizeof(float), chunk * sizeof(float));
                for (std::uint64_t e = 0; e < chunk; ++e)
                    if (host[e] != expected_sum(n_, at + e)) ++z.wrong;
                z.checked += chunk;
            }
        }
    }

    const NcclApi& nccl_;
    std::vector<Rank>& ranks_;
    int n_;
    Comms comms_;
};

// Every size in turn; a stop ends the sweep, and the sizes measured before it are kept.
void sweep(CheckContext& ctx, AllReduceBench& bench, const std::vector<std::uint64_t>& sizes, AllReduceRun& run) {
    try {
        for (std::uint64_t bytes : sizes) {
            ctx.throw_if_stopped();
            if (ctx.progress) ctx.progress->update("all-reduce " + size_text(bytes));
            run.sizes.push_back(bench.measure(ctx, bytes, run.sizes.empty()));
        }
    } catch (const Interrupted&) {
        run.interrupted = true;
    }
}

}  // namespace

std::optional<std::string> GpuAllReduceCheck::unmet_requirement(const CheckContext& ctx) const {
    if (amd_measure::run_is_amd(ctx)) return amd_measure::allreduce_requirement(ctx);
    if (auto why = gpu_requirement(ctx, GpuNeed::Cuda)) return why;
    std::size_t n = ctx.facts->selected_gpus().size();
    if (n < 2) return "all-reduce needs at least 2 GPUs, this run has " + std::to_string(n);
    return std::nullopt;
}

std::vector<CheckResult> GpuAllReduceCheck::run(CheckContext& ctx) {
    if (amd_measure::run_is_amd(ctx)) return amd_measure::allreduce(ctx);
    NcclApi nccl = NcclApi::load();
    if (!nccl.ok()) {
        CheckResult r = skip(kNcclMissingAdvice);
        r.details.push_back("tried (" + std::to_string(nccl.tried.size()) + "):");
        for (const auto& t : nccl.tried) r.details.push_back("  " + t);
        return {r};
    }
    GpuSet set = GpuSet::open(ctx.facts->selected_gpus());
    OpenedRanks o = open_ranks(ctx, set);
    if (o.refused) return {*o.refused};
    const int n = static_cast<int>(o.ranks.size());
    if (n < 2) return {skip("all-reduce needs at least 2 GPUs, " + std::to_string(n) + " could be opened")};

    std::uint64_t free_min = UINT64_MAX;
    for (auto& k : o.ranks)
        free_min = std::min<std::uint64_t>(free_min, (k.s->make_current(), k.s->mem_info().free_bytes));
    const std::vector<std::uint64_t> sizes = allreduce::sizes(ctx.options.tier, free_min * 4 / 10);
    if (sizes.empty()) return {skip("not enough free GPU memory for a 1 MiB all-reduce")};

    AllReduceBench bench(nccl, o.ranks, o.devlist);
    try {
        bench.prepare(sizes.back(), ctx.stop);
    } catch (const Interrupted&) {
        return {skip("interrupted while the buffers were filled, before any all-reduce ran; no verdict")};
    }
    AllReduceRun run;
    run.ranks = n;
    run.all_nvlink = o.all_nvlink;
    run.max_bytes = sizes.back();
    run.algorithm = algorithm_label(std::getenv("NCCL_ALGO"));
    run.nccl_path = nccl.path;
    run.nccl_version = nccl.version_text();
    sweep(ctx, bench, sizes, run);
    return {judge_allreduce(run, o.spec)};
}

}  // namespace gpuvet
