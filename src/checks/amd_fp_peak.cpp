// gpu.fp_peak on AMD GPUs: the FMA chains of fma.cl per precision, every work-item's result checked
// against the CPU reference, judged by judge_fp_peak (gpu_fp_peak_judge.hpp) against the datasheet.
#include <string>

#include "checks/amd_checks.hpp"
#include "checks/amd_measurement.hpp"
#include "checks/gpu_fp_peak_judge.hpp"
#include "checks/gpu_measurement.hpp"
#include "core/context.hpp"
#include "gpu/kernel_reference.hpp"

namespace gpuvet::amd_measure {

namespace {

using measure::FmaRate;

struct Dtype {
    const char* kernel;  // null: no kernel (see absent)
    const char* key;
    const char* label;
    int lanes;
    std::size_t out_bytes;
    std::optional<double> GpuSpec::*spec;
};
const Dtype kTypes[] = {{"fma_f64", "fp64_tflops", "FP64 FMA", 1, 8, &GpuSpec::fp64_tflops},
                        {"fma_f32", "fp32_tflops", "FP32 FMA", 1, 4, &GpuSpec::fp32_tflops},
                        {"fma_f16x2", "fp16_tflops", "FP16 FMA (packed)", 2, 4, &GpuSpec::fp16_tflops},
                        {nullptr, "bf16_tflops", "BF16 FMA (packed)", 2, 4, &GpuSpec::bf16_tflops}};

void launch_fma(HipSession& s, const Dtype& d, const kernels::LaunchGeometry& g, const HipStream& st,
                const HipBuffer& out, std::uint32_t iterations) {
    using namespace arg;
    const std::string_view n = d.kernel;
    if (n == "fma_f64")
        s.launch(d.kernel, g, st, {ptr(out.address()), u32(iterations), f64(0.9375), f64(0.125), f64(1.0)});
    else if (n == "fma_f32")
        s.launch(d.kernel, g, st, {ptr(out.address()), u32(iterations), f32(0.9375f), f32(0.125f), f32(1.0f)});
    else
        s.launch(d.kernel, g, st,
                 {ptr(out.address()), u32(iterations), b32(measure::kF16A), b32(measure::kF16B), b32(measure::kF16X)});
}

void measure_gpu(CheckContext& ctx, Member& m, CheckResult& r) {
    HipSession& s = *m.session;
    const int samples = measure::by_tier(ctx, 3, 5, 11);
    const std::uint32_t iterations = static_cast<std::uint32_t>(measure::by_tier(ctx, 2000, 8000, 16000));
    HipStream st = s.stream();
    std::vector<FmaRate> rates;
    for (const Dtype& d : kTypes) {
        FmaRate rate{d.key, d.label, d.spec, std::nullopt, "", 0, 0};
        if (!d.kernel) {
            // CDNA 1-3 and RDNA 2-3 have no BF16 FMA in the vector ALU: BF16 runs on the matrix cores.
            rate.absent_reason = "no BF16 FMA in the vector unit of " + s.gfx() + ": BF16 is measured by gpu.gemm";
            rates.push_back(rate);
            continue;
        }
        kernels::LaunchGeometry g = s.geometry(d.kernel);
        HipBuffer out = s.alloc(g.threads() * d.out_bytes);
        auto launch = [&] { launch_fma(s, d, g, st, out, iterations); };
        launch();  // warm-up: clocks up
        std::vector<double> tflops;
        for (int i = 0; i < samples; ++i) {
            ctx.throw_if_stopped();
            double ms = s.time_ms(st, launch);
            tflops.push_back(kernel_ref::fma_flops(g.threads(), iterations, d.lanes) / (ms * 1e-3) / 1e12);
        }
        st.synchronize();
        std::vector<unsigned char> raw(g.threads() * d.out_bytes);
        s.download(raw.data(), out, raw.size());
        rate.wrong = measure::wrong_fma_results(d.kernel, d.out_bytes, raw, iterations);
        rate.threads = g.threads();
        rate.tflops = median(tflops).value();
        rates.push_back(rate);
    }
    measure::judge_fp_peak(rates, m.spec, m.index, r);
    add_clocks(r, m.index);
}

}  // namespace

std::vector<CheckResult> fp_peak(CheckContext& ctx, std::string_view key, std::string_view title) {
    return for_each_gpu(ctx, key, title, [&](Member& m, CheckResult& r) { measure_gpu(ctx, m, r); });
}

}  // namespace gpuvet::amd_measure
