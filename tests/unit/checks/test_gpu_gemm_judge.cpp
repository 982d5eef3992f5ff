// gpu.gemm's judge on constructed sweeps: rates against the datasheet, wrong outputs, stops.
#include <gtest/gtest.h>

#include "support/check_helpers.hpp"
#include "checks/gpu_gemm_judge.hpp"
#include "specs/gpu_spec.hpp"

using namespace gpuvet;
using namespace gpuvet::gemm;

namespace {

const PrecisionInfo& info(Precision p) {
    for (const auto& x : precisions())
        if (x.precision == p) return x;
    throw std::logic_error("no such precision");
}

GpuSpec h100() {
    GpuSpec s;
    s.key = "h100-sxm5-80gb";
    s.name = "H100 SXM5 80GB";
    s.bf16_tensor_tflops = 989.5;
    s.int8_tensor_tops = 1979;
    return s;
}

// A sweep of two shapes whose best reaches `best_rate`, 48 outputs checked per shape.
PrecisionRun sweep(double best_rate, std::size_t wrong = 0) {
    PrecisionRun run;
    ShapeResult big{Shape{8192, 8192, 8192}, best_rate, 1.1};
    big.checked = 48;
    for (std::size_t i = 0; i < wrong; ++i) big.mismatches.push_back({i, 2 * i, 1.5, 2.0, 0.01});
    ShapeResult small{Shape{4096, 4096, 4096}, best_rate / 2, 0.3};
    small.checked = 48;
    run.shapes = {big, small};
    return run;
}

GpuGemmRun one(Precision p, PrecisionRun run, int cc = 90) {
    return GpuGemmRun{3, cc, "/lib/libcublasLt.so.12, cuBLASLt 12.8", {{&info(p), std::move(run)}}};
}

}  // namespace

TEST(GemmVerdict, HealthyRateAgainstTheDatasheetPasses) {
    GpuSpec spec = h100();
    CheckResult r = judge_gemm(one(Precision::bf16, sweep(800)), &spec);
    EXPECT_EQ(r.verdict, Verdict::Pass) << r.summary;
    EXPECT_EQ(r.gpu, 3);
    const Measurement* m = find(r, "bf16_tflops");
    ASSERT_TRUE(m && m->value);
    EXPECT_DOUBLE_EQ(*m->value, 800);
    ASSERT_TRUE(m->reference && m->reference->fail_below);
    EXPECT_NEAR(*m->reference->fail_below, 989.5 * 0.55, 1e-9);
    EXPECT_EQ(find(r, "bf16_best_shape")->text, "8192x8192x8192");
    EXPECT_NE(r.summary.find("bf16 800 TFLOPS (81% of 990)"), std::string::npos) << r.summary;
    EXPECT_TRUE(r.findings.empty());
}

TEST(GemmVerdict, RateBelowTheFloorFailsAndBetweenFloorAndWarnWarns) {
    GpuSpec spec = h100();
    EXPECT_EQ(judge_gemm(one(Precision::bf16, sweep(450)), &spec).verdict, Verdict::Fail);  // 45% < 55%
    EXPECT_EQ(judge_gemm(one(Precision::bf16, sweep(650)), &spec).verdict, Verdict::Warn);  // 66% < 70%
}

TEST(GemmVerdict, WrongElementsFailWhateverTheRateAndAreFindings) {
    GpuSpec spec = h100();
    CheckResult r = judge_gemm(one(Precision::bf16, sweep(900, 5)), &spec);
    EXPECT_EQ(r.verdict, Verdict::Fail);
    EXPECT_NE(r.summary.find("WRONG (bf16 5/96"), std::string::npos) << r.summary;
    ASSERT_EQ(r.findings.size(), 3u);  // the first three of the shape are named
    EXPECT_EQ(r.findings[1].verdict, Verdict::Fail);
    EXPECT_EQ(r.findings[1].measurement, "bf16_tflops");
    EXPECT_EQ(r.findings[1].text, "bf16 8192x8192x8192: wrong D(1,2) = 1.5000, expected 2.0000 +/- 0.0100");
    for (const auto& d : r.details) EXPECT_EQ(d.find("wrong D("), std::string::npos) << d;
    EXPECT_NE(r.details[0].find("43/48 sampled outputs correct"), std::string::npos) << r.details[0];
}

TEST(GemmVerdict, WithoutASpecTheRateIsReportedWithoutAVerdict) {
    CheckResult r = judge_gemm(one(Precision::bf16, sweep(10)), nullptr);
    EXPECT_EQ(r.verdict, Verdict::Pass);
    EXPECT_FALSE(find(r, "bf16_tflops")->reference);
    EXPECT_NE(r.summary.find("no datasheet figure"), std::string::npos) << r.summary;
}

TEST(GemmVerdict, TooLowComputeCapabilityIsAbsentWithTheReason) {
    GpuGemmRun g{0, 80, "lib", {{&info(Precision::fp8), std::nullopt}}};
    CheckResult r = judge_gemm(g, nullptr);
    const Measurement* m = find(r, "fp8_tflops");
    ASSERT_TRUE(m);
    EXPECT_FALSE(m->present());
    EXPECT_EQ(m->absent_reason, "needs compute capability 8.9, this GPU has 8.0");
    EXPECT_EQ(r.verdict, Verdict::Skip);
    EXPECT_EQ(r.summary, "no precision could be measured");
}

TEST(GemmVerdict, AnInterruptedSweepIsNotJudgedOnItsBestSoFar) {
    GpuSpec spec = h100();
    PrecisionRun cut = sweep(100);  // far below the floor, but the sweep was cut short
    cut.interrupted = true;
    GpuGemmRun g = one(Precision::bf16, cut);
    g.precisions.push_back({&info(Precision::int8), sweep(1500)});
    CheckResult r = judge_gemm(g, &spec);
    EXPECT_EQ(r.verdict, Verdict::Pass) << r.summary;
    EXPECT_EQ(find(r, "bf16_tflops")->absent_reason, kInterrupted);
    EXPECT_TRUE(find(r, "int8_tops")->value);
    EXPECT_NE(r.summary.find("interrupted before 1 precision(s)"), std::string::npos) << r.summary;
    cut.shapes.clear();
    EXPECT_EQ(judge_gemm(one(Precision::bf16, cut), &spec).verdict, Verdict::Skip);
}

TEST(GemmVerdict, OnAmdGpusTheLibraryIsHipblasltAndAPrecisionNotRunSaysWhy) {
    GpuSpec spec = h100();
    GpuGemmRun g{1, 0, "/opt/rocm/lib/libhipblaslt.so.0, hipBLASLt 0.12.1", {}, "hipBLASLt"};
    g.precisions.push_back({&info(Precision::bf16), sweep(800)});
    g.precisions.push_back({&info(Precision::fp8), std::nullopt, "FNUZ encoding: not measured on AMD GPUs"});
    CheckResult r = judge_gemm(g, &spec);
    EXPECT_EQ(r.verdict, Verdict::Pass) << r.summary;
    const Measurement* lib = find(r, "hipblaslt");
    ASSERT_TRUE(lib);
    EXPECT_EQ(lib->text, "/opt/rocm/lib/libhipblaslt.so.0, hipBLASLt 0.12.1");
    EXPECT_EQ(find(r, "cublaslt"), nullptr);
    const Measurement* fp8 = find(r, "fp8_tflops");
    ASSERT_TRUE(fp8);
    EXPECT_FALSE(fp8->value);
    EXPECT_EQ(fp8->absent_reason, "FNUZ encoding: not measured on AMD GPUs");  // not the compute-capability one
}
