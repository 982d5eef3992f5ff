#include "checks/gpu_memory_bandwidth.hpp"

#include <algorithm>
#include <bit>
#include <cmath>

#include "checks/amd_checks.hpp"
#include "checks/amd_measurement.hpp"
#include "checks/gpu_memory_bandwidth_judge.hpp"
#include "checks/run_facts.hpp"
#include "core/error.hpp"
#include "gpu/kernel_reference.hpp"
#include "specs/gpu_spec.hpp"

namespace gpuvet {

namespace measure {
std::uint64_t stream_buffer_bytes(std::uint64_t l2, std::uint64_t free_bytes) {
    std::uint64_t want = std::max<std::uint64_t>(32 * l2, 1ull << 30);
    std::uint64_t cap = free_bytes / 10 * 9 / 3;
    return std::min(want, cap) / 16 * 16;
}
}  // namespace measure

namespace {

using namespace measure;

constexpr std::uint32_t kFill = 0x3F800000u;   // 1.0f: b of triad, source of copy
constexpr std::uint32_t kFill2 = 0x40000000u;  // 2.0f: c of triad
constexpr float kScale = 3.0f;                 // a = 3 * 2 + 1 = 7
constexpr std::uint32_t kWriteValue = 0xA5C3F00Du;

struct Op {
    const char* name;
    const char* key;
    const char* label;
    std::uint64_t bytes_per_vec;  // bytes read + written per 16-byte vector
};
const Op kOps[] = {{"copy", "copy_gbps", "Copy (read + write)", 32},
                   {"read", "read_gbps", "Read", 16},
                   {"write", "write_gbps", "Write", 16},
                   {"triad", "triad_gbps", "Triad (2 reads + write)", 48}};

// The three STREAM buffers of one GPU and what the kernels need beside them.
struct StreamBuffers {
    GpuSession& s;
    std::uint64_t n_vec;
    DeviceBuffer a, b, c, counter;
    kernels::LaunchGeometry gread;
    DeviceBuffer partial;  // one read sum per thread of stream_read
    Stream st;

    StreamBuffers(GpuSession& session, std::uint64_t bytes)
        : s(session),
          n_vec(bytes / 16),
          a(s.alloc(bytes)),
          b(s.alloc(bytes)),
          c(s.alloc(bytes)),
          counter(s.alloc(sizeof(std::uint64_t))),
          gread(s.geometry("stream_read")),
          partial(s.alloc(gread.threads() * sizeof(std::uint32_t))),
          st(s.stream()) {}

    void launch(std::string_view op) {
        if (op == "copy")
            s.launch("stream_copy", s.geometry("stream_copy"), st, {arg::ptr(a), arg::ptr(b), arg::u64(n_vec)});
        else if (op == "read") s.launch("stream_read", gread, st, {arg::ptr(b), arg::u64(n_vec), arg::ptr(partial)});
        else if (op == "write")
            s.launch("stream_write", s.geometry("stream_write"), st,
                     {arg::ptr(a), arg::u64(n_vec), arg::u32(kWriteValue)});
        else
            s.launch("stream_triad", s.geometry("stream_triad"), st,
                     {arg::ptr(a), arg::ptr(b), arg::ptr(c), arg::f32(kScale), arg::u64(n_vec)});
    }
    // Inputs: never zeros (REFERENCES.md), and known so the outputs can be verified.
    void fill_inputs() {
        s.launch("stream_write", s.geometry("stream_write"), st, {arg::ptr(b), arg::u64(n_vec), arg::u32(kFill)});
        s.launch("stream_write", s.geometry("stream_write"), st, {arg::ptr(c), arg::u64(n_vec), arg::u32(kFill2)});
    }
    // Words of `buf` that differ from `expected`, counted on the device.
    std::uint64_t count_wrong(const DeviceBuffer& buf, std::uint32_t expected) {
        s.zero(counter, &st);
        s.launch("stream_verify", s.geometry("stream_verify"), st,
                 {arg::ptr(buf), arg::u64(n_vec), arg::u32(expected), arg::ptr(counter)});
        st.synchronize();
        std::uint64_t bad = 0;
        s.download(&bad, counter.ptr(), sizeof bad);
        return bad;
    }
    // Read's per-thread sums that differ from what the thread's share of b adds up to.
    std::uint64_t wrong_read_sums() {
        st.synchronize();
        std::vector<std::uint32_t> got(gread.threads());
        s.download(got.data(), partial.ptr(), got.size() * 4);
        const std::uint64_t T = gread.threads();
        std::uint64_t wrong = 0;
        for (std::uint64_t g = 0; g < T; ++g) {
            std::uint64_t owned = n_vec > g ? (n_vec - 1 - g) / T + 1 : 0;
            if (got[g] != static_cast<std::uint32_t>(owned * 4 * kFill)) ++wrong;
        }
        return wrong;
    }
    // Verifies what the last launch of `op` left.
    std::uint64_t wrong_after(std::string_view op) {
        if (op == "copy") return count_wrong(a, kFill);
        if (op == "write") return count_wrong(a, kWriteValue);
        if (op == "triad")
            return count_wrong(a, std::bit_cast<std::uint32_t>(kernel_ref::triad_value(kScale, 1.0f, 2.0f)));
        return wrong_read_sums();
    }
};

// The median rate of `op` over `samples` timed runs of `iters` launches, after one warm-up.
double median_gbps(CheckContext& ctx, StreamBuffers& k, const Op& op, int samples, int iters) {
    k.launch(op.name);  // warm-up
    std::vector<double> gbps;
    for (int i = 0; i < samples; ++i) {
        ctx.throw_if_stopped();  // a sample is a few launches: the stop is seen within a second
        double ms = k.s.time_ms(k.st, [&] {
            for (int n = 0; n < iters; ++n) k.launch(op.name);
        });
        gbps.push_back(double(op.bytes_per_vec) * double(k.n_vec) * iters / (ms * 1e-3) / 1e9);
    }
    return median(gbps).value();
}

// Fills `out` operation by operation, so what was measured before a stop is kept.
void measure_stream(CheckContext& ctx, GpuSession& s, StreamRun& out) {
    const std::uint64_t bytes = stream_buffer_bytes(s.l2_cache_bytes(), s.mem_info().free_bytes);
    if (bytes < (64ull << 20))
        throw runtime_error("only " + std::to_string(s.mem_info().free_bytes >> 20) +
                                " MiB of GPU memory free: too little for a bandwidth measurement",
                            "stop the processes using the GPU (nvidia-smi) and run again");
    out.buffer_bytes = bytes;
    out.l2_cache_bytes = s.l2_cache_bytes();
    StreamBuffers k(s, bytes);
    const int samples = by_tier(ctx, 3, 7, 15);
    const int iters = by_tier(ctx, 2, 5, 10);
    k.fill_inputs();
    for (const Op& op : kOps) {
        double gbps = median_gbps(ctx, k, op, samples, iters);
        out.ops.push_back({op.name, op.key, op.label, gbps, k.wrong_after(op.name)});
    }
}

void measure_gpu(CheckContext& ctx, GpuSet::Member& m, CheckResult& r) {
    const GpuSpec* spec = ctx.facts->spec_of(m.index);
    StreamRun run;
    run.gpu = m.index;
    try {
        measure_stream(ctx, *m.session, run);
    } catch (const Interrupted&) {  // the rates measured before the stop stay, unjudged
        r.measurements = stream_rate_measurements(run, spec);
        throw;
    }
    judge_stream(run, spec, r);
    add_clocks(r, m.index);
}

}  // namespace

std::vector<CheckResult> GpuMemoryBandwidthCheck::run(CheckContext& ctx) {
    if (amd_measure::run_is_amd(ctx)) return amd_measure::memory_bandwidth(ctx, key(), title());
    return measure::for_each_gpu(ctx, key(), title(),
                                 [&](GpuSet::Member& m, CheckResult& r) { measure_gpu(ctx, m, r); });
}

}  // namespace gpuvet
