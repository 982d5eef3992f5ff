#include "checks/gpu_fp_peak.hpp"

#include <bit>
#include <cmath>
#include <cstring>

#include "checks/run_facts.hpp"
#include "gpu/kernel_reference.hpp"
#include "specs/gpu_spec.hpp"

namespace gpuvet {

namespace {

using namespace measure;
namespace ref = kernel_ref;

// Inputs exact in every format (docs/kernels.md): a = 0.9375, b = 0.125, x0 = 1.
constexpr std::uint32_t kF16A = 0x3B803B80u, kF16B = 0x30003000u, kF16X = 0x3C003C00u;
constexpr std::uint32_t kBF16A = 0x3F703F70u, kBF16B = 0x3E003E00u, kBF16X = 0x3F803F80u;

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

// How many thread results differ from the reference.
std::uint64_t wrong_results(const Dtype& d, const std::vector<unsigned char>& raw, std::uint32_t it) {
    // Every thread stores the same value: the reference is computed once.
    std::string_view k = d.kernel;
    std::uint64_t n = raw.size() / d.out_bytes, bad = 0;
    const double w64 = k == "fma_f64" ? ref::fma_f64_result(it, 0.9375, 0.125, 1.0) : 0;
    const float w32 = k == "fma_f32" ? ref::fma_f32_result(it, 0.9375f, 0.125f, 1.0f) : 0;
    const std::uint32_t w16 = k == "fma_f16x2"    ? ref::fma_f16x2_result(it, kF16A, kF16B, kF16X)
                              : k == "fma_bf16x2" ? ref::fma_bf16x2_result(it, kBF16A, kBF16B, kBF16X)
                                                  : 0;
    for (std::uint64_t i = 0; i < n; ++i) {
        const unsigned char* p = raw.data() + i * d.out_bytes;
        if (k == "fma_f64") {
            double v;
            std::memcpy(&v, p, 8);
            bad += !(v == w64 || (std::isnan(v) && std::isnan(w64)));
        } else if (k == "fma_f32") {
            float v;
            std::memcpy(&v, p, 4);
            bad += !(v == w32 || (std::isnan(v) && std::isnan(w32)));
        } else {
            std::uint32_t v;
            std::memcpy(&v, p, 4);
            bad += v != w16;
        }
    }
    return bad;
}

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
    std::vector<Finding> findings;
    std::vector<std::string> parts;
    for (const Dtype& d : kTypes) {
        const kernels::KernelInfo* k = kernels::find_kernel(d.kernel);
        if (cc < k->min_cc) {
            r.measurements.push_back(
                Measurement::absent(d.key, d.label, "TFLOPS",
                                    "needs compute capability 8.0 (this GPU: " + fixed(cc / 10.0, 1) + ")")
                    .on_gpu(m.index));
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
        std::uint64_t wrong = wrong_results(d, raw, iterations);
        double v = median(tflops).value();
        Measurement meas = Measurement::number(d.key, d.label, v, "TFLOPS").on_gpu(m.index);
        if (sp && (sp->*d.spec)) {
            double spec = *(sp->*d.spec);
            meas.against(
                of_spec(spec, kFmaExpected, kFmaWarn, kFmaFail, datasheet_source(*sp) + "; floors: docs/checks.md"));
            grade_into(r, meas);
            parts.push_back(std::string(d.key).substr(0, 4) + " " + fixed(v, 1) + " (" + fixed(100 * v / spec, 0) +
                            "%)");
        } else {
            parts.push_back(std::string(d.key).substr(0, 4) + " " + fixed(v, 1) + " (no spec)");
        }
        r.measurements.push_back(meas);
        if (wrong)
            findings.push_back(Finding{Verdict::Fail,
                                       std::string(d.label) + ": " + std::to_string(wrong) + " of " +
                                           std::to_string(g.threads()) + " threads computed a wrong result",
                                       d.key});
    }
    add_clocks(r, m.index);
    std::string figures;
    for (auto& p : parts) figures += (figures.empty() ? "" : ", ") + p;
    figures += " TFLOPS";
    if (!findings.empty()) {
        r.verdict = Verdict::Fail;
        r.summary = "wrong FMA results: " + findings.front().text;
        r.findings = findings;
        r.details.push_back(figures);
        return;
    }
    r.summary = r.verdict == Verdict::Pass
                    ? figures + "."
                    : "FMA throughput below " + fixed(100 * (r.verdict == Verdict::Fail ? kFmaFail : kFmaWarn), 0) +
                          "% of spec: " + figures + ".";
}

}  // namespace

std::vector<CheckResult> GpuFpPeakCheck::run(CheckContext& ctx) {
    return measure::for_each_gpu(ctx, key(), title(),
                                 [&](GpuSet::Member& m, CheckResult& r) { measure_gpu(ctx, m, r); });
}

}  // namespace gpuvet
