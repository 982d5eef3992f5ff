// The judge of gpu.fp_peak (CUDA and HIP measurements alike) on constructed rates, and the count of
// wrong FMA results against the CPU reference.
#include <gtest/gtest.h>

#include <cstring>

#include "support/check_helpers.hpp"
#include "checks/gpu_fp_peak.hpp"
#include "checks/gpu_fp_peak_judge.hpp"
#include "gpu/kernel_reference.hpp"
#include "specs/gpu_spec.hpp"

using namespace gpuvet;
using namespace gpuvet::measure;

namespace {

GpuSpec mi300x() {
    GpuSpec s;
    s.key = "mi300x";
    s.name = "Instinct MI300X";
    s.fp64_tflops = 81.7;
    s.fp32_tflops = 163.4;
    return s;
}

std::vector<FmaRate> rates(double fp64, double fp32, std::uint64_t wrong32 = 0) {
    return {{"fp64_tflops", "FP64 FMA", &GpuSpec::fp64_tflops, fp64, "", 0, 2048},
            {"fp32_tflops", "FP32 FMA", &GpuSpec::fp32_tflops, fp32, "", wrong32, 2048},
            {"fp16_tflops", "FP16 FMA (packed)", &GpuSpec::fp16_tflops, 150.0, "", 0, 2048},
            {"bf16_tflops", "BF16 FMA (packed)", &GpuSpec::bf16_tflops, std::nullopt, "no BF16 FMA here", 0, 0}};
}

}  // namespace

TEST(FpPeakVerdict, RatesAgainstTheDatasheetPassWarnAndFail) {
    GpuSpec spec = mi300x();
    CheckResult ok;
    ok.verdict = Verdict::Pass;
    judge_fp_peak(rates(75, 150), &spec, 3, ok);
    EXPECT_EQ(ok.verdict, Verdict::Pass) << ok.summary;
    EXPECT_EQ(ok.summary, "fp64 75.0 (92%), fp32 150.0 (92%), fp16 150.0 (no spec) TFLOPS.");
    EXPECT_NEAR(*find(ok, "fp32_tflops")->reference->fail_below, 163.4 * kFmaFail, 1e-9);
    EXPECT_FALSE(find(ok, "fp16_tflops")->reference);  // no datasheet figure: shown, not judged
    const Measurement* bf16 = find(ok, "bf16_tflops");
    EXPECT_FALSE(bf16->value);
    EXPECT_EQ(bf16->absent_reason, "no BF16 FMA here");
    EXPECT_EQ(bf16->gpu, 3);

    CheckResult warn;
    warn.verdict = Verdict::Pass;
    judge_fp_peak(rates(62, 150), &spec, 3, warn);  // 76% of FP64: below 80%
    EXPECT_EQ(warn.verdict, Verdict::Warn);
    EXPECT_EQ(warn.summary.rfind("FMA throughput below 80% of spec: fp64 62.0 (76%)", 0), 0u) << warn.summary;

    CheckResult fail;
    fail.verdict = Verdict::Pass;
    judge_fp_peak(rates(75, 100), &spec, 3, fail);  // 61% of FP32
    EXPECT_EQ(fail.verdict, Verdict::Fail);
    EXPECT_EQ(fail.summary.rfind("FMA throughput below 70% of spec", 0), 0u) << fail.summary;
}

TEST(FpPeakVerdict, WrongResultsFailWhateverTheRate) {
    GpuSpec spec = mi300x();
    CheckResult r;
    r.verdict = Verdict::Pass;
    judge_fp_peak(rates(80, 160, 7), &spec, 0, r);
    EXPECT_EQ(r.verdict, Verdict::Fail);
    EXPECT_EQ(r.summary, "wrong FMA results: FP32 FMA: 7 of 2048 threads computed a wrong result");
    ASSERT_EQ(r.findings.size(), 1u);
    EXPECT_EQ(r.findings[0].measurement, "fp32_tflops");
}

TEST(FpPeakVerdict, WrongFmaResultsCountsEveryThreadThatDiffers) {
    const std::uint32_t it = 50;
    const float want = kernel_ref::fma_f32_result(it, 0.9375f, 0.125f, 1.0f);
    std::vector<unsigned char> raw(4 * 16);
    for (int t = 0; t < 16; ++t) std::memcpy(raw.data() + 4 * t, &want, 4);
    EXPECT_EQ(wrong_fma_results("fma_f32", 4, raw, it), 0u);
    const float off = want + 1;
    std::memcpy(raw.data() + 4 * 5, &off, 4);
    std::memcpy(raw.data() + 4 * 15, &off, 4);
    EXPECT_EQ(wrong_fma_results("fma_f32", 4, raw, it), 2u);

    const std::uint32_t h = kernel_ref::fma_f16x2_result(it, kF16A, kF16B, kF16X);
    std::vector<unsigned char> packed(4 * 3);
    for (int t = 0; t < 3; ++t) std::memcpy(packed.data() + 4 * t, &h, 4);
    EXPECT_EQ(wrong_fma_results("fma_f16x2", 4, packed, it), 0u);
    packed[0] ^= 1;
    EXPECT_EQ(wrong_fma_results("fma_f16x2", 4, packed, it), 1u);
}
