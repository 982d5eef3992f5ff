// gpu.h2d_d2h on AMD GPUs: pinned host<->GPU copies through hipMemcpyAsync (no kernel), each GPU
// alone and then all at once, the data verified, judged by judge_host_copies (gpu_h2d_d2h_judge.hpp)
// against the PCIe link AMD SMI reports while the copies run.
#include <algorithm>
#include <barrier>
#include <chrono>
#include <cstring>
#include <map>
#include <thread>

#include "checks/amd_checks.hpp"
#include "checks/amd_measurement.hpp"
#include "checks/gpu_h2d_d2h_judge.hpp"
#include "checks/gpu_measurement.hpp"
#include "core/context.hpp"

namespace gpuvet::amd_measure {

namespace {

PcieLinkReading read_link(int index) {
    PcieLinkReading l;
    const DeviceBackend& backend = amd_devices();
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

// One GPU's pinned buffers, device buffers, two streams and the events that time them.
struct Rig {
    HipSession& s;
    const HipApi& api;
    std::size_t bytes;
    const CheckContext& ctx;
    HipPinned src, dst;
    HipBuffer da, db;
    HipStream a, b;
    HipEvent e0, eb, e1;

    Rig(HipSession& session, std::size_t n, std::uint64_t seed, const CheckContext& c)
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
        if (!api.hipMemcpyAsync || !api.hipStreamWaitEvent)
            throw Error(ErrorKind::Driver, "libamdhip64 at " + api.path + " lacks the asynchronous copy calls",
                        "update ROCm: gpuvet's copy measurements need hipMemcpyAsync and hipStreamWaitEvent");
        fill_pattern(src.data(), n, seed);
    }
    ~Rig() {
        try {
            a.synchronize();
            b.synchronize();
        } catch (const Error&) {}
    }
    Rig(const Rig&) = delete;
    Rig& operator=(const Rig&) = delete;
    void h2d(const HipBuffer& d, const HipStream& st) const {
        ctx.throw_if_stopped();
        hip_check(api, api.hipMemcpyAsync(d.get(), src.data(), bytes, hip::hipMemcpyHostToDevice, st.get()),
                  "hipMemcpyAsync(host to device)");
    }
    void d2h(const HipBuffer& d, const HipStream& st) const {
        ctx.throw_if_stopped();
        hip_check(api, api.hipMemcpyAsync(dst.data(), d.get(), bytes, hip::hipMemcpyDeviceToHost, st.get()),
                  "hipMemcpyAsync(device to host)");
    }
    void wait(const HipStream& st, const HipEvent& e) const {
        hip_check(api, api.hipStreamWaitEvent(st.get(), e.get(), 0), "hipStreamWaitEvent");
    }
};

HostCopyRates run_rig(Rig& r, int samples, int iters, const std::function<void()>& sync, PcieLinkReading* link,
                      int index) {
    HostCopyRates out;
    const double per_sample = double(r.bytes) * iters;
    auto median_ms = [&](const std::function<void()>& work) {
        std::vector<double> ms;
        for (int i = 0; i < samples; ++i) {
            r.ctx.throw_if_stopped();
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
    out.wrong_words += count_wrong(r.dst.data(), r.src.data(), r.bytes);

    std::memset(r.dst.data(), 0, r.bytes);
    sync();
    std::vector<double> ms;
    for (int i = 0; i < samples; ++i) {
        r.ctx.throw_if_stopped();
        r.e0.record(r.a);
        r.wait(r.b, r.e0);
        for (int k = 0; k < iters; ++k) {
            r.h2d(r.db, r.a);
            r.d2h(r.da, r.b);
        }
        r.eb.record(r.b);
        r.wait(r.a, r.eb);
        r.e1.record(r.a);
        ms.push_back(r.e0.ms_until(r.e1));
    }
    out.bidir_gbps = gbps(2 * per_sample, median(ms).value());
    out.wrong_words += count_wrong(r.dst.data(), r.src.data(), r.bytes);
    std::memset(r.dst.data(), 0, r.bytes);
    r.d2h(r.db, r.a);
    r.a.synchronize();
    out.wrong_words += count_wrong(r.dst.data(), r.src.data(), r.bytes);
    sync();
    return out;
}

struct GpuCopies {
    HostCopyMeasured measured;
    bool interrupted = false;
    std::string error, advice;
};

std::uint64_t seed_of(int index) { return 0xC0FFEE0000000000ull + std::uint64_t(index) * 0x1000193ull; }

void link_facts(const DeviceFacts& f, HostCopyMeasured& m) {
    if (f.pcie_gen_max_gpu) m.max_gen = *f.pcie_gen_max_gpu;
}

CheckResult plain(std::string_view key, std::string_view title, int gpu) {
    CheckResult r;
    r.key = std::string(key);
    r.title = std::string(title);
    r.gpu = gpu;
    return r;
}

}  // namespace

namespace {

struct CopyPlan {
    std::size_t bytes;
    int samples, iters;
};

// Each GPU alone, one after the other.
std::map<int, GpuCopies> copies_alone(std::vector<Member>& gpus, const CopyPlan& plan, CheckContext& ctx) {
    std::map<int, GpuCopies> per;
    for (Member& m : gpus) {
        if (!m.session || ctx.stop_requested()) continue;
        if (ctx.progress) ctx.progress->update("GPU " + std::to_string(m.index) + " alone");
        GpuCopies& p = per[m.index];
        p.measured.gpu = m.index;
        p.measured.link_reader = "AMD SMI";
        link_facts(m.facts, p.measured);
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
    return per;
}

// All the GPUs measured alone, at once: one thread per GPU, their phases lined up.
void copies_all_at_once(std::vector<Member>& gpus, std::map<int, GpuCopies>& per, std::ptrdiff_t n_ok,
                        const CopyPlan& plan, CheckContext& ctx) {
    if (ctx.progress) ctx.progress->update("all " + std::to_string(n_ok) + " GPUs at once");
    std::barrier<> phase(n_ok);
    std::vector<std::thread> threads;
    for (Member& m : gpus) {
        auto it = per.find(m.index);
        if (it == per.end() || !it->second.error.empty() || it->second.interrupted) continue;
        threads.emplace_back([&, it, mp = &m] {
            try {
                mp->session->make_current();
                Rig rig(*mp->session, plan.bytes, seed_of(mp->index) ^ 0xFFull, ctx);
                it->second.measured.all = run_rig(
                    rig, plan.samples, plan.iters, [&] { phase.arrive_and_wait(); }, nullptr, mp->index);
            } catch (const Interrupted&) {
                phase.arrive_and_drop();
            } catch (const Error& e) {
                phase.arrive_and_drop();
                it->second.error = std::string("with all GPUs copying: ") + e.what();
                it->second.advice = e.advice();
            }
        });
    }
    for (auto& t : threads) t.join();
}

// One result per GPU: its error, an interruption, or the judge's verdict against the group.
CheckResult copies_result(const Member& m, const std::map<int, GpuCopies>& per, const HostCopyGroup& group,
                          std::string_view key, std::string_view title) {
    auto it = per.find(m.index);
    CheckResult r = plain(key, title, m.index);
    if (!m.session || (it != per.end() && !it->second.interrupted && !it->second.error.empty())) {
        r.verdict = Verdict::Error;
        r.summary = m.session ? it->second.error : m.error;
        const std::string& advice = m.session ? it->second.advice : m.advice;
        if (!advice.empty()) r.details.push_back(advice);
    } else if (it == per.end() || it->second.interrupted) {
        r.summary =
            it == per.end() ? kNotRunInterrupted : "interrupted before this GPU's copies were measured; no verdict";
    } else {
        r = judge_host_copies(it->second.measured, group);
        r.key = std::string(key);
        r.title = std::string(title);
    }
    return r;
}

}  // namespace

std::vector<CheckResult> host_copies(CheckContext& ctx, std::string_view key, std::string_view title) {
    const CopyPlan plan{std::size_t(measure::by_tier(ctx, 32, 256, 1024)) << 20, measure::by_tier(ctx, 3, 5, 9),
                        measure::by_tier(ctx, 2, 4, 4)};
    std::vector<Member> gpus = open_gpus(ctx);
    std::map<int, GpuCopies> per = copies_alone(gpus, plan, ctx);
    std::ptrdiff_t n_ok = 0;
    for (auto& [i, p] : per) n_ok += p.error.empty() && !p.interrupted;
    if (n_ok >= 2 && !ctx.stop_requested()) copies_all_at_once(gpus, per, n_ok, plan, ctx);

    HostCopyGroup group;
    group.gpus_measured = int(n_ok);
    group.buffer_bytes = plan.bytes;
    std::vector<HostCopyMeasured> ok;
    for (const auto& [i, p] : per)
        if (p.error.empty()) ok.push_back(p.measured);
    group.shared = gpus_sharing_uplink(ok);
    group.shared_path = shared_path(group.shared, {});

    std::vector<CheckResult> out;
    for (const Member& m : gpus) out.push_back(copies_result(m, per, group, key, title));
    if (out.empty()) {
        CheckResult r = plain(key, title, -1);
        r.verdict = Verdict::Skip;
        r.summary = ctx.stop_requested() ? "interrupted before any GPU was measured" : "no GPU selected";
        out.push_back(r);
    }
    return out;
}

}  // namespace gpuvet::amd_measure
