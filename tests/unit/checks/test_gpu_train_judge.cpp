// The training baselines (data/train_baselines.toml) and gpu.train's judge on constructed figures.
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "checks/gpu_train_judge.hpp"
#include "core/error.hpp"
#include "specs/spec_db.hpp"
#include "train/baselines.hpp"

using namespace gpuvet;

namespace {

const char* const kRow = R"([[baseline]]
gpu = "h100-sxm5-80gb"
gpu_name = "H100 SXM5"
model = "resnet50"
precision = "amp-fp16"
batch = 1280
gpus = 1
value = 2616
unit = "images/s"
stack = "NGC 22.09"
stack_date = "2022-09"
method = "lambda-dle-synthetic-nchw"
source = "test"
)";

std::string with(const std::string& extra) { return std::string(kRow) + extra; }

TrainFigures resnet(double rate, int batch = 1280) {
    TrainFigures f;
    f.model = "resnet50";
    f.device = "cuda";
    f.unit = "images/s";
    f.precision = "amp-fp16";
    f.warmup = 20;
    f.steps = 100;
    f.torch = "2.5.1";
    f.single.throughput = rate;
    f.single.elapsed_s = 50;
    f.single.batch = batch;
    return f;
}

TrainGpu gpu(int index, std::optional<std::string> sku, double fp16 = 989) {
    TrainGpu g;
    g.index = index;
    g.name = sku.value_or("unknown GPU");
    g.sku = std::move(sku);
    g.fp16_tensor_tflops = fp16;
    return g;
}

std::optional<double> tflops(const std::string& sku) {
    static const SpecDb db = SpecDb::embedded();
    const GpuSpec* s = db.by_key(sku);
    return s ? s->fp16_tensor_tflops : std::nullopt;
}

}  // namespace

TEST(TrainBaselines, EmbeddedTableHasTheResearchRowsAndValidSkus) {
    const auto& t = TrainBaselines::embedded();
    EXPECT_GE(t.all().size(), 150u);
    const SpecDb db = SpecDb::embedded();
    for (const auto& b : t.all())
        if (b.gpu) {
            EXPECT_NE(db.by_key(*b.gpu), nullptr) << *b.gpu << " is not a spec key";
        }
    // dl-baselines.md section 1a: H100 SXM5 1 GPU AMP 2,616 (22.09) and 2,791 (24.03 fleet mean).
    const TrainBaseline* h100 = t.find("h100-sxm5-80gb", "resnet50", "amp-fp16", "lambda-dle-synthetic-nchw", 1);
    ASSERT_NE(h100, nullptr);
    EXPECT_EQ(h100->value, 2791);  // the newest stack of the two
    EXPECT_EQ(h100->stack, "NGC 24.03");
    EXPECT_EQ(h100->batch, 1280);
    const TrainBaseline* bert = t.find("h200-sxm-141gb", "bert-large", "amp-fp16", "lambda-squad-384", 1);
    ASSERT_NE(bert, nullptr);
    EXPECT_EQ(bert->value, 350);
}

TEST(TrainBaselines, ExcludedRowsAndOtherMethodsAreNeverJudgedAgainst) {
    const auto& t = TrainBaselines::embedded();
    // The 8x A100 40GB row is left out of Lambda's own CSV (68% scaling, suspect).
    EXPECT_EQ(t.find("a100-sxm4-40gb", "resnet50", "amp-fp16", "lambda-dle-synthetic-nchw", 8), nullptr);
    // No training data for L4 or T4 (dl-baselines.md section 5).
    EXPECT_EQ(t.find("l4", "resnet50", "amp-fp16", "lambda-dle-synthetic-nchw", 1), nullptr);
    // The DLE README's NHWC real-data figure is context, not this benchmark's method.
    EXPECT_EQ(t.find("a100-sxm4-80gb", "resnet50", "amp-fp16", "dle-readme-real-nhwc", 1)->value, 2470);
    EXPECT_EQ(t.find("a100-sxm4-80gb", "resnet50", "amp-fp16", "lambda-dle-synthetic-nchw", 1)->value, 1582);
    std::set<std::string> gpus;
    for (auto* b : t.candidates("resnet50", "amp-fp16", "lambda-dle-synthetic-nchw", 1))
        EXPECT_TRUE(gpus.insert(*b->gpu).second);
}

TEST(TrainBaselines, ParseRejectsBadRowsNamingTheField) {
    EXPECT_NO_THROW(TrainBaselines::parse(kRow, "t.toml"));
    auto fails = [](const std::string& text, const std::string& word) {
        try {
            TrainBaselines::parse(text, "t.toml");
            ADD_FAILURE() << "accepted: " << text;
        } catch (const Error& e) {
            EXPECT_EQ(e.kind(), ErrorKind::Input);
            EXPECT_NE(std::string(e.what()).find(word), std::string::npos) << e.what();
        }
    };
    fails("x = 1", "no [[baseline]]");
    fails(std::string(kRow).replace(std::string(kRow).find("value = 2616"), 12, "value = -1"), "'value'");
    fails(std::string(kRow).replace(std::string(kRow).find("gpus = 1"), 8, "gpus = 0"), "'gpus'");
    fails(std::string(kRow).replace(std::string(kRow).find("unit = \"images/s\""), 17, "unit = 3"), "'unit'");
    fails("[[baseline]]\nmodel = \"x\"\n", "gpu_name");
    fails("[[baseline", "t.toml:1");
    EXPECT_EQ(TrainBaselines::parse(with("excluded = \"suspect\"\n"), "t.toml")
                  .find("h100-sxm5-80gb", "resnet50", "amp-fp16", "lambda-dle-synthetic-nchw", 1),
              nullptr);
}

TEST(TrainVerdict, RatioRuleIsPassAt90WarnBelowFailBelow75) {
    EXPECT_EQ(train_ratio_verdict(1.10), Verdict::Pass);
    EXPECT_EQ(train_ratio_verdict(0.90), Verdict::Pass);
    EXPECT_EQ(train_ratio_verdict(0.899), Verdict::Warn);
    EXPECT_EQ(train_ratio_verdict(0.75), Verdict::Warn);
    EXPECT_EQ(train_ratio_verdict(0.749), Verdict::Fail);
    EXPECT_EQ(train_ratio_verdict(std::nan("")), Verdict::Fail);
}

TEST(TrainVerdict, SameGpuBaselineGivesTheRatio) {
    const auto& t = TrainBaselines::embedded();
    auto pass = judge_train(resnet(2700), {gpu(0, "h100-sxm5-80gb")}, t, tflops);
    ASSERT_EQ(pass.size(), 1u);
    EXPECT_EQ(pass[0].verdict, Verdict::Pass) << pass[0].summary;
    EXPECT_NE(pass[0].summary.find("0.97 x the baseline 2791"), std::string::npos) << pass[0].summary;
    EXPECT_EQ(judge_train(resnet(2400), {gpu(0, "h100-sxm5-80gb")}, t, tflops)[0].verdict, Verdict::Warn);
    EXPECT_EQ(judge_train(resnet(2000), {gpu(0, "h100-sxm5-80gb")}, t, tflops)[0].verdict, Verdict::Fail);
    bool rule = false, stack = false;
    for (auto& d : pass[0].details) {
        rule = rule || d.find("Tolerance rule") != std::string::npos;
        stack = stack || d.find("NGC 24.03") != std::string::npos;
    }
    EXPECT_TRUE(rule && stack) << "both stacks and the rule are printed";
}

TEST(TrainVerdict, NoBaselineForThisGpuIsSaidWithTheNearestGpu) {
    auto r = judge_train(resnet(900), {gpu(0, "l40s-48gb", 362)}, TrainBaselines::embedded(), tflops);
    ASSERT_EQ(r.size(), 1u);
    EXPECT_EQ(r[0].verdict, Verdict::Skip);
    EXPECT_NE(r[0].summary.find("no baseline for this GPU (l40s-48gb"), std::string::npos) << r[0].summary;
    EXPECT_NE(r[0].summary.find("nearest GPU"), std::string::npos) << r[0].summary;
    ASSERT_FALSE(r[0].measurements.empty());
    EXPECT_EQ(r[0].measurements[0].value, 900);
}

TEST(TrainVerdict, CpuRunIsNeverPass) {
    TrainFigures f = resnet(10);
    f.device = "cpu";
    auto r = judge_train(f, {}, TrainBaselines::embedded(), tflops);
    ASSERT_EQ(r.size(), 1u);
    EXPECT_EQ(r[0].verdict, Verdict::Skip);
    EXPECT_NE(r[0].summary.find("no baseline: CPU run"), std::string::npos);
}

TEST(TrainVerdict, OomRetryWarnsAndScalingIsJudged) {
    TrainFigures f = resnet(2700, 640);
    f.single.oom_batches = {1280};
    f.ddp = {2650, 2640};
    auto r = judge_train(f, {gpu(0, "h100-sxm5-80gb"), gpu(1, "h100-sxm5-80gb")}, TrainBaselines::embedded(), tflops);
    ASSERT_EQ(r.size(), 3u);
    EXPECT_EQ(r[0].verdict, Verdict::Warn);
    EXPECT_NE(r[0].findings.at(0).text.find("retried and measured at batch 640"), std::string::npos);
    EXPECT_EQ(r[1].gpu, 1);
    EXPECT_FALSE(r[2].gpu.has_value());
    EXPECT_EQ(r[2].verdict, Verdict::Pass);  // 5290 / (2 x 2700) = 98%
    f.ddp = {1500, 1500};
    auto bad = judge_train(f, {gpu(0, "h100-sxm5-80gb"), gpu(1, "h100-sxm5-80gb")}, TrainBaselines::embedded(), tflops);
    EXPECT_EQ(bad[2].verdict, Verdict::Fail) << bad[2].summary;  // 56%
}

TEST(TrainVerdict, GptReportsMfuAgainstTheDenseBf16Peak) {
    TrainFigures f = resnet(400000);
    f.model = "gpt";
    f.unit = "tokens/s";
    f.precision = "bf16";
    f.flops_per_unit = 1e9;  // 1 GFLOP per token
    TrainGpu g = gpu(0, "h100-sxm5-80gb");
    g.bf16_tensor_tflops = 1000;
    auto r = judge_train(f, {g}, TrainBaselines::embedded(), tflops);
    bool found = false;
    for (auto& m : r[0].measurements)
        if (m.key == "mfu_percent") {
            found = true;
            EXPECT_NEAR(*m.value, 40.0, 1e-9);
        }
    EXPECT_TRUE(found);
    EXPECT_EQ(r[0].verdict, Verdict::Skip);  // no published table of the same method
}
