#include "checks/gpu_fp_peak.hpp"

#include <bit>
#include <cmath>
#include <cstring>

#include "checks/amd_checks.hpp"
#include "checks/amd_measurement.hpp"
#include "checks/gpu_fp_peak_judge.hpp"
#include "checks/run_facts.hpp"
#include "gpu/kernel_reference.hpp"
#include "specs/gpu_spec.hpp"

namespace gpuvet {

namespace {

using namespace measure;
namespace ref = kernel_ref;

struct Dtype {
    const char* kernel;
    const char* key;
    const char* label;
    int lanes;
    std::size_t out_bytes;
    std::optional<double> GpuSpec::*spec;
};
const Dtype kTypes[] = {{"fma_f64", "fp64_tflops", "FP64 FMA", 1, 8, &GpuSpec::fp64_tflops},
                        {"fma_f32", "fp32_tflops", "FP32 FMA", 1, 4, &GpuSpec::fp32_tflops},
                        {"fma_f16x2", "fp16_tflops", "FP16 FMA (half2)", 2, 4, &GpuSpec::fp16_tflops},
                        {"fma_bf16x2", "bf16_tflops", "BF16 FMA (bf162)", 2, 4, &GpuSpec::bf16_tflops}};

// One FMA-chain launch of a precision, with the constants its reference expects.
void launch_fma(GpuSession& s, const Dtype& d, const kernels::LaunchGeometry& g, const Stream& st,
                const DeviceBuffer& out, std::uint32_t iterations) {
    const std::string_view n = d.kernel;
    if (n == "fma_f64")
        s.launch(d.kernel, g, st,
                 {arg::ptr(out), arg::u32(iterations), arg::f64(0.9375), arg::f64(0.125), arg::f64(1.0)});
    else if (n == "fma_f32")
        s.launch(d.kernel, g, st,
                 {arg::ptr(out), arg::u32(iterations), arg::f32(0.9375f), arg::f32(0.125f), arg::f32(1.0f)});
    else if (n == "fma_f16x2")
        s.launch(d.kernel, g, st,
                 {arg::ptr(out), arg::u32(iterations), arg::b32(kF16A), arg::b32(kF16B), arg::b32(kF16X)});
    else
        s.launch(d.kernel, g, st,
                 {arg::ptr(out), arg::u32(iterations), arg::b32(kBF16A), arg::b32(kBF16B), arg::b32(kBF16X)});
}

void measure_gpu(CheckContext& ctx, GpuSet::Member& m, CheckResult& r) {
    GpuSession& s = *m.session;
    const GpuSpec* sp = ctx.facts->spec_of(m.index);
    const int cc = s.compute_capability();
    const int samples = by_tier(ctx, 3, 5, 11);
    const std::uint32_t iterations = static_cast<std::uint32_t>(by_tier(ctx, 2000, 8000, 16000));
    Stream st = s.stream();
    std::vector<FmaRate> rates;
    for (const Dtype& d : kTypes) {
        FmaRate rate{d.key, d.label, d.spec, std::nullopt, "", 0, 0};
        const kernels::KernelInfo* k = kernels::find_kernel(d.kernel);
        if (cc < k->min_cc) {
            rate.absent_reason = "needs compute capability 8.0 (this GPU: " + fixed(cc / 10.0, 1) + ")";
            rates.push_back(rate);
            continue;
        }
        kernels::LaunchGeometry g = s.geometry(d.kernel);
        DeviceBuffer out = s.alloc(g.threads() * d.out_bytes);
        auto launch = [&] { launch_fma(s, d, g, st, out, iterations); };
        launch();  // warm-up (JIT, clocks up)
        std::vector<double> tflops;
        for (int i = 0; i < samples; ++i) {
            ctx.throw_if_stopped();  // one launch per poll
            double ms = s.time_ms(st, launch);
            tflops.push_back(ref::fma_flops(g.threads(), iterations, d.lanes) / (ms * 1e-3) / 1e12);
        }
        st.synchronize();
        std::vector<unsigned char> raw(g.threads() * d.out_bytes);
        s.download(raw.data(), out.ptr(), raw.size());
        rate.wrong = wrong_fma_results(d.kernel, d.out_bytes, raw, iterations);
        rate.threads = g.threads();
        rate.tflops = median(tflops).value();
        rates.push_back(rate);
    }
    judge_fp_peak(rates, sp, m.index, r);
    add_clocks(r, m.index);
}

}  // namespace

std::vector<CheckResult> GpuFpPeakCheck::run(CheckContext& ctx) {
    if (amd_measure::run_is_amd(ctx)) return amd_measure::fp_peak(ctx, key(), title());
    return measure::for_each_gpu(ctx, key(), title(),
                                 [&](GpuSet::Member& m, CheckResult& r) { measure_gpu(ctx, m, r); });
}

}  // namespace gpuvet
