// gpu.memory_bandwidth on AMD GPUs: the STREAM kernels of stream.cl, verified on the device, judged
// by judge_stream (gpu_memory_bandwidth_judge.hpp) against the card's datasheet bandwidth.
#include <bit>
#include <string>

#include "checks/amd_checks.hpp"
#include "checks/amd_measurement.hpp"
#include "checks/gpu_measurement.hpp"
#include "checks/gpu_memory_bandwidth.hpp"
#include "checks/gpu_memory_bandwidth_judge.hpp"
#include "core/context.hpp"
#include "gpu/kernel_reference.hpp"

namespace gpuvet::amd_measure {

namespace {

using measure::StreamRun;

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

struct Buffers {
    HipSession& s;
    std::uint64_t n_vec;
    HipBuffer a, b, c, counter;
    kernels::LaunchGeometry gread;
    HipBuffer partial;
    HipStream st;

    Buffers(HipSession& session, std::uint64_t bytes)
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
        using namespace arg;
        if (op == "copy")
            s.launch("stream_copy", s.geometry("stream_copy"), st, {ptr(a.address()), ptr(b.address()), u64(n_vec)});
        else if (op == "read")
            s.launch("stream_read", gread, st, {ptr(b.address()), u64(n_vec), ptr(partial.address())});
        else if (op == "write")
            s.launch("stream_write", s.geometry("stream_write"), st, {ptr(a.address()), u64(n_vec), u32(kWriteValue)});
        else
            s.launch("stream_triad", s.geometry("stream_triad"), st,
                     {ptr(a.address()), ptr(b.address()), ptr(c.address()), f32(kScale), u64(n_vec)});
    }
    void fill_inputs() {
        s.launch("stream_write", s.geometry("stream_write"), st,
                 {arg::ptr(b.address()), arg::u64(n_vec), arg::u32(kFill)});
        s.launch("stream_write", s.geometry("stream_write"), st,
                 {arg::ptr(c.address()), arg::u64(n_vec), arg::u32(kFill2)});
    }
    std::uint64_t count_wrong(const HipBuffer& buf, std::uint32_t expected) {
        st.synchronize();
        s.zero(counter);
        s.launch("stream_verify", s.geometry("stream_verify"), st,
                 {arg::ptr(buf.address()), arg::u64(n_vec), arg::u32(expected), arg::ptr(counter.address())});
        st.synchronize();
        std::uint64_t bad = 0;
        s.download(&bad, counter, sizeof bad);
        return bad;
    }
    std::uint64_t wrong_read_sums() {
        st.synchronize();
        std::vector<std::uint32_t> got(gread.threads());
        s.download(got.data(), partial, got.size() * 4);
        const std::uint64_t T = gread.threads();
        std::uint64_t wrong = 0;
        for (std::uint64_t g = 0; g < T; ++g) {
            std::uint64_t owned = n_vec > g ? (n_vec - 1 - g) / T + 1 : 0;
            if (got[g] != static_cast<std::uint32_t>(owned * 4 * kFill)) ++wrong;
        }
        return wrong;
    }
    std::uint64_t wrong_after(std::string_view op) {
        if (op == "copy") return count_wrong(a, kFill);
        if (op == "write") return count_wrong(a, kWriteValue);
        if (op == "triad")
            return count_wrong(a, std::bit_cast<std::uint32_t>(kernel_ref::triad_value(kScale, 1.0f, 2.0f)));
        return wrong_read_sums();
    }
};

double median_gbps(CheckContext& ctx, Buffers& k, const Op& op, int samples, int iters) {
    k.launch(op.name);  // warm-up
    std::vector<double> gbps;
    for (int i = 0; i < samples; ++i) {
        ctx.throw_if_stopped();
        double ms = k.s.time_ms(k.st, [&] {
            for (int n = 0; n < iters; ++n) k.launch(op.name);
        });
        gbps.push_back(double(op.bytes_per_vec) * double(k.n_vec) * iters / (ms * 1e-3) / 1e9);
    }
    return median(gbps).value();
}

// The buffers must dwarf every cache: HIP reports the L2; the rule's 1 GiB floor keeps the
// three buffers far above the Infinity Cache too (256 MiB on an MI300X).
void measure_stream(CheckContext& ctx, Member& m, StreamRun& out) {
    HipSession& s = *m.session;
    int l2 = 0;
    if (s.api().hipDeviceGetAttribute)
        hip_check(s.api(), s.api().hipDeviceGetAttribute(&l2, hip::hipDeviceAttributeL2CacheSize, s.ordinal()),
                  "hipDeviceGetAttribute(L2CacheSize)");
    const auto mem = s.mem_info();
    const std::uint64_t bytes = measure::stream_buffer_bytes(std::uint64_t(std::max(l2, 0)), mem.free_bytes);
    if (bytes < (64ull << 20))
        throw runtime_error("only " + std::to_string(mem.free_bytes >> 20) +
                                " MiB of GPU memory free: too little for a bandwidth measurement",
                            "stop the processes using the GPU (amd-smi process) and run again");
    out.buffer_bytes = bytes;
    out.l2_cache_bytes = std::uint64_t(std::max(l2, 0));
    Buffers k(s, bytes);
    const int samples = measure::by_tier(ctx, 3, 7, 15);
    const int iters = measure::by_tier(ctx, 2, 5, 10);
    k.fill_inputs();
    for (const Op& op : kOps) {
        double gbps = median_gbps(ctx, k, op, samples, iters);
        out.ops.push_back({op.name, op.key, op.label, gbps, k.wrong_after(op.name)});
    }
}

}  // namespace

std::vector<CheckResult> memory_bandwidth(CheckContext& ctx, std::string_view key, std::string_view title) {
    return for_each_gpu(ctx, key, title, [&](Member& m, CheckResult& r) {
        StreamRun run;
        run.gpu = m.index;
        try {
            measure_stream(ctx, m, run);
        } catch (const Interrupted&) {
            r.measurements = measure::stream_rate_measurements(run, m.spec);
            throw;
        }
        measure::judge_stream(run, m.spec, r);
        add_clocks(r, m.index);
    });
}

}  // namespace gpuvet::amd_measure
