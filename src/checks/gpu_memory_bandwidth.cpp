#include "checks/gpu_memory_bandwidth.hpp"

#include <algorithm>
#include <bit>
#include <cmath>

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

// Words of buf that differ from `expected`, counted on the device.
std::uint64_t verify(GpuSession& s, const Stream& st, const DeviceBuffer& buf, std::uint64_t n_vec,
                     std::uint32_t expected, const DeviceBuffer& counter) {
    s.zero(counter, &st);
    s.launch("stream_verify", s.geometry("stream_verify"), st,
             {arg::ptr(buf), arg::u64(n_vec), arg::u32(expected), arg::ptr(counter)});
    st.synchronize();
    std::uint64_t bad = 0;
    s.download(&bad, counter.ptr(), sizeof bad);
    return bad;
}

void measure_gpu(CheckContext& ctx, GpuSet::Member& m, CheckResult& r) {
    GpuSession& s = *m.session;
    const std::uint64_t bytes = stream_buffer_bytes(s.l2_cache_bytes(), s.mem_info().free_bytes);
    if (bytes < (64ull << 20))
        throw runtime_error("only " + std::to_string(s.mem_info().free_bytes >> 20) +
                                " MiB of GPU memory free: too little for a bandwidth measurement",
                            "stop the processes using the GPU (nvidia-smi) and run again");
    const std::uint64_t n_vec = bytes / 16;
    DeviceBuffer a = s.alloc(bytes), b = s.alloc(bytes), c = s.alloc(bytes);
    DeviceBuffer counter = s.alloc(sizeof(std::uint64_t));
    const kernels::LaunchGeometry gread = s.geometry("stream_read");
    DeviceBuffer partial = s.alloc(gread.threads() * sizeof(std::uint32_t));
    Stream st = s.stream();
    const int samples = by_tier(ctx, 3, 7, 15);
    const int iters = by_tier(ctx, 2, 5, 10);

    auto launch = [&](const char* op) {
        std::string_view n = op;
        if (n == "copy") s.launch("stream_copy", s.geometry("stream_copy"), st, {arg::ptr(a), arg::ptr(b), arg::u64(n_vec)});
        else if (n == "read") s.launch("stream_read", gread, st, {arg::ptr(b), arg::u64(n_vec), arg::ptr(partial)});
        else if (n == "write") s.launch("stream_write", s.geometry("stream_write"), st, {arg::ptr(a), arg::u64(n_vec), arg::u32(kWriteValue)});
        else s.launch("stream_triad", s.geometry("stream_triad"), st,
                      {arg::ptr(a), arg::ptr(b), arg::ptr(c), arg::f32(kScale), arg::u64(n_vec)});
    };
    // Inputs: never zeros (REFERENCES.md), and known so the outputs can be verified.
    s.launch("stream_write", s.geometry("stream_write"), st, {arg::ptr(b), arg::u64(n_vec), arg::u32(kFill)});
    s.launch("stream_write", s.geometry("stream_write"), st, {arg::ptr(c), arg::u64(n_vec), arg::u32(kFill2)});

    const double spec = [&] {
        const GpuSpec* sp = ctx.facts->spec_of(m.index);
        return sp && sp->memory_bandwidth_gbps ? *sp->memory_bandwidth_gbps : 0.0;
    }();
    const GpuSpec* sp = ctx.facts->spec_of(m.index);
    std::vector<Finding> bad;
    double worst_graded = -1;
    for (const Op& op : kOps) {
        launch(op.name);  // warm-up
        std::vector<double> gbps;
        for (int i = 0; i < samples; ++i) {
            ctx.throw_if_stopped();  // a sample is a few launches: the stop is seen within a second
            double ms = s.time_ms(st, [&] {
                for (int k = 0; k < iters; ++k) launch(op.name);
            });
            gbps.push_back(double(op.bytes_per_vec) * double(n_vec) * iters / (ms * 1e-3) / 1e9);
        }
        double v = median(gbps).value();
        // Verify what the last launch left.
        std::string_view n = op.name;
        std::uint64_t wrong = 0;
        if (n == "copy") wrong = verify(s, st, a, n_vec, kFill, counter);
        else if (n == "write") wrong = verify(s, st, a, n_vec, kWriteValue, counter);
        else if (n == "triad")
            wrong = verify(s, st, a, n_vec, std::bit_cast<std::uint32_t>(kernel_ref::triad_value(kScale, 1.0f, 2.0f)), counter);
        else {
            st.synchronize();
            std::vector<std::uint32_t> got(gread.threads());
            s.download(got.data(), partial.ptr(), got.size() * 4);
            const std::uint64_t T = gread.threads();
            for (std::uint64_t g = 0; g < T; ++g) {
                std::uint64_t owned = n_vec > g ? (n_vec - 1 - g) / T + 1 : 0;
                if (got[g] != static_cast<std::uint32_t>(owned * 4 * kFill)) ++wrong;
            }
        }
        Measurement meas = Measurement::number(op.key, op.label, v, "GB/s").on_gpu(m.index);
        // Copy and triad carry the verdict (as STREAM reports them); read and write show % of spec.
        bool graded = n == "copy" || n == "triad";
        if (spec > 0) {
            Reference ref = graded ? of_spec(spec, kMemExpected, kMemWarn, kMemFail,
                                             datasheet_source(*sp) + "; healthy 83-93% of spec (REFERENCES.md)")
                                   : Reference{spec, kMemExpected, {}, {}, {}, {}, {}, datasheet_source(*sp)};
            meas.against(ref);
            if (graded) {
                grade_into(r, meas);
                worst_graded = worst_graded < 0 ? v : std::min(worst_graded, v);
            }
        }
        r.measurements.push_back(meas);
        if (wrong) bad.push_back(Finding{Verdict::Fail, std::string(op.name) + ": " + std::to_string(wrong) + " wrong results", op.key});
    }
    r.measurements.push_back(Measurement::number("buffer_bytes", "Bytes per buffer", double(bytes), "bytes").on_gpu(m.index));
    r.measurements.push_back(Measurement::number("l2_cache_bytes", "L2 cache", double(s.l2_cache_bytes()), "bytes").on_gpu(m.index));
    add_clocks(r, m.index);

    double copy = *r.measurements[0].value, triad = *r.measurements[3].value;
    std::string figures = "copy " + fixed(copy, 0) + " GB/s, triad " + fixed(triad, 0) + " GB/s";
    if (!bad.empty()) {
        r.verdict = Verdict::Fail;
        r.summary = "wrong data in device memory: " + bad.front().text + " (" + figures + ")";
        r.findings = bad;
        r.details.push_back("a fast wrong answer is a failure: check ECC counters (gpuvet inventory) and dmesg for Xid errors");
        return;
    }
    if (spec <= 0) {
        r.verdict = Verdict::Pass;
        r.summary = figures + "; no datasheet bandwidth for this GPU, so no verdict on speed.";
        return;
    }
    std::string pct = fixed(100.0 * worst_graded / spec, 0) + "% of the " + fixed(spec, 0) + " GB/s spec";
    if (r.verdict == Verdict::Pass)
        r.summary = figures + " (" + pct + "; healthy is 83-93%).";
    else
        r.summary = "memory bandwidth " + pct + ", below the " +
                    fixed(100 * (r.verdict == Verdict::Fail ? kMemFail : kMemWarn), 0) + "% floor: " + figures + ".";
}

}  // namespace

std::vector<CheckResult> GpuMemoryBandwidthCheck::run(CheckContext& ctx) {
    return measure::for_each_gpu(ctx, key(), title(), [&](GpuSet::Member& m, CheckResult& r) { measure_gpu(ctx, m, r); });
}

}  // namespace gpuvet
