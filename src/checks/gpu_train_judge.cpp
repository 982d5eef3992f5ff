#include "checks/gpu_train_judge.hpp"

#include <cmath>

#include "checks/gpu_measurement.hpp"

namespace gpuvet {

namespace {

const char* const kRuleText =
    "Tolerance rule: PASS at >= 0.90 x the same GPU's baseline, WARN below, FAIL below 0.75. The software differs "
    "from the baseline's and moves the figure by itself (H100 SXM ResNet-50: +6.7% from NGC 22.09 to 24.03; -4% "
    "from 24.03 to 24.09 on one GH200), and 0.90 is where the published fleet data flags a node "
    "(docs/train.md, dl-baselines.md section 4).";

std::string key_of(const std::string& unit) {
    if (unit == "images/s") return "images_per_s";
    if (unit == "sequences/s") return "sequences_per_s";
    return "tokens_per_s";
}

std::string num(double v) { return measure::fixed(v, v < 100 ? 1 : 0); }

std::string stack_of(const TrainFigures& f) {
    return "PyTorch " + f.torch + (f.cuda.empty() ? "" : ", CUDA " + f.cuda) +
           (f.hip.empty() ? "" : ", ROCm " + f.hip) + (f.cudnn.empty() ? "" : ", cuDNN " + f.cudnn) + ", Python " +
           f.python;
}

std::string run_text(const TrainFigures& f, const TrainRunFigure& r) {
    return "This run: " + stack_of(f) + "; " + f.model + " " + f.precision + ", batch " + std::to_string(r.batch) +
           " per GPU, " + std::to_string(f.warmup) + " warm-up steps excluded, " + std::to_string(f.steps) +
           " timed synchronized steps, synthetic data on the device.";
}

const TrainBaseline* nearest(const TrainFigures& f, const TrainGpu& g, const TrainBaselines& table, int gpus,
                             const SkuTflops& tflops_of) {
    const TrainBaseline* best = nullptr;
    double best_d = INFINITY;
    for (const TrainBaseline* b : table.candidates(f.model, f.precision, train_method(f.model), gpus)) {
        auto t = tflops_of(*b->gpu);
        double d = (t && g.fp16_tensor_tflops) ? std::fabs(std::log(*t / *g.fp16_tensor_tflops)) : 1e9;
        if (!best || d < best_d) best = b, best_d = d;
    }
    return best;
}

// The per-GPU result: one GPU's figure against its baseline.
CheckResult judge_gpu(const TrainFigures& f, const TrainGpu& g, double measured, int world, const TrainBaselines& table,
                      const SkuTflops& tflops_of) {
    CheckResult r;
    r.gpu = g.index;
    const TrainRunFigure& run = f.single;
    Measurement m = Measurement::number(key_of(f.unit), f.model + " training", measured, f.unit).on_gpu(g.index);
    const std::string method = train_method(f.model);
    const TrainBaseline* b = g.sku ? table.find(*g.sku, f.model, f.precision, method, world) : nullptr;
    if (!b && world > 1 && g.sku) b = table.find(*g.sku, f.model, f.precision, method, 1);
    const std::string what =
        num(measured) + " " + f.unit + (world > 1 ? " per GPU with " + std::to_string(world) + " GPUs" : "");
    r.details.push_back(run_text(f, run));
    if (!b) {
        r.verdict = Verdict::Skip;
        r.summary = "no baseline for this GPU (" + (g.sku ? *g.sku : g.name) + ", " + f.model + " " + f.precision +
                    "): " + what;
        if (const TrainBaseline* n = nearest(f, g, table, 1, tflops_of))
            r.summary += "; for context, the nearest GPU with one: " + n->gpu_name + " " + num(n->per_gpu()) + " " +
                         n->unit + " (" + n->stack + ")";
        r.measurements.push_back(std::move(m));
        return r;
    }
    Reference ref;
    ref.spec = b->per_gpu();
    ref.warn_below = kTrainPassRatio * b->per_gpu();
    ref.fail_below = kTrainFailRatio * b->per_gpu();
    ref.source = b->gpu_name + ", " + b->stack + ", batch " + (b->batch ? std::to_string(*b->batch) : "not stated") +
                 ", " + std::to_string(b->gpus) + " GPU(s): " + b->source;
    m.against(ref);
    double ratio = measured / b->per_gpu();
    r.verdict = train_ratio_verdict(ratio);
    r.summary = what + " = " + measure::fixed(ratio, 2) + " x the baseline " + num(b->per_gpu()) + " " + b->unit +
                " (" + b->gpu_name + ", " + b->stack +
                (b->gpus != world ? ", " + std::to_string(b->gpus) + " GPU" : "") + ")";
    r.measurements.push_back(std::move(m));
    r.measurements.push_back(Measurement::number("baseline_ratio", "Measured / baseline", ratio, "").on_gpu(g.index));
    r.details.push_back("Baseline: " + b->gpu_name + ", " + b->stack + " (" + b->stack_date + "); " + b->method_text +
                        "; source: " + b->source + (b->note.empty() ? "" : "; " + b->note));
    r.details.push_back(kRuleText);
    return r;
}

void add_extras(CheckResult& r, const TrainFigures& f, const TrainGpu& g, double measured) {
    if (!f.single.oom_batches.empty()) {
        std::string tried;
        for (int b : f.single.oom_batches) tried += (tried.empty() ? "" : ", ") + std::to_string(b);
        r.findings.emplace_back(Verdict::Warn, "out of memory at batch " + tried + ": retried and measured at batch " +
                                                   std::to_string(f.single.batch) + ", smaller than the baseline's");
        if (r.verdict != Verdict::Skip) r.verdict = worst(r.verdict, Verdict::Warn);
    }
    if (f.channels_last)
        r.measurements.push_back(Measurement::number("channels_last_" + key_of(f.unit), "channels-last (second figure)",
                                                     f.channels_last->throughput, f.unit)
                                     .on_gpu(g.index));
    if (f.flops_per_unit && g.bf16_tensor_tflops && *g.bf16_tensor_tflops > 0) {
        double mfu = 100 * measured * *f.flops_per_unit / (*g.bf16_tensor_tflops * 1e12);
        r.measurements.push_back(
            Measurement::number("mfu_percent", "MFU vs dense BF16 peak", mfu, "%").on_gpu(g.index));
        r.details.push_back("MFU: " + measure::fixed(mfu, 1) + "% of the dense BF16 peak " +
                            measure::fixed(*g.bf16_tensor_tflops, 0) +
                            " TFLOPS (6N + 12LHQT FLOPs per token, nanoGPT's estimate)");
    } else if (f.flops_per_unit) {
        r.measurements.push_back(Measurement::absent("mfu_percent", "MFU vs dense BF16 peak", "%",
                                                     "no dense BF16 figure for this GPU in the spec database"));
    }
}

CheckResult judge_scaling(const TrainFigures& f) {
    CheckResult r;
    double sum = 0;
    for (double v : f.ddp) sum += v;
    const int n = int(f.ddp.size());
    double eff = sum / (n * f.single.throughput);
    Reference ref;
    ref.warn_below = 100 * kTrainPassRatio;
    ref.fail_below = 100 * kTrainFailRatio;
    ref.source =
        "dl-baselines.md section 4c: require >= 90% per-GPU scaling (Lambda reaches 98-99% on good H100/H200 nodes)";
    r.measurements.push_back(Measurement::number(key_of(f.unit) + "_total", "All GPUs together", sum, f.unit));
    r.measurements.push_back(
        Measurement::number("scaling_efficiency_percent", "Scaling efficiency vs one GPU", 100 * eff, "%")
            .against(ref));
    r.verdict = train_ratio_verdict(eff);
    r.summary = std::to_string(n) + " GPUs over NCCL (DDP): " + num(sum) + " " + f.unit + " = " +
                measure::fixed(100 * eff, 1) + "% of " + std::to_string(n) + " x one GPU's " + num(f.single.throughput);
    return r;
}

}  // namespace

std::string train_method(const std::string& model) {
    if (model == "resnet50") return "lambda-dle-synthetic-nchw";
    if (model == "bert-large" || model == "bert-base") return "lambda-squad-384";
    return "none";  // the GPT step reproduces no published table: MFU is its yardstick
}

Verdict train_ratio_verdict(double ratio) {
    if (!(ratio >= kTrainFailRatio)) return Verdict::Fail;
    return ratio >= kTrainPassRatio ? Verdict::Pass : Verdict::Warn;
}

std::vector<CheckResult> judge_train(const TrainFigures& f, const std::vector<TrainGpu>& gpus,
                                     const TrainBaselines& table, const SkuTflops& tflops_of) {
    if (f.device == "cpu" || gpus.empty()) {
        CheckResult r;
        r.verdict = Verdict::Skip;
        r.summary = "no baseline: CPU run (test shapes, " + stack_of(f) + "): " + num(f.single.throughput) + " " +
                    f.unit + "; the baselines are GPU figures";
        r.measurements.push_back(
            Measurement::number(key_of(f.unit), f.model + " training (CPU)", f.single.throughput, f.unit));
        r.details.push_back(run_text(f, f.single));
        return {r};
    }
    std::vector<CheckResult> out;
    const int world = f.ddp.size() > 1 ? int(f.ddp.size()) : 1;
    for (std::size_t i = 0; i < gpus.size(); ++i) {
        double measured = world > 1 && i < f.ddp.size() ? f.ddp[i] : f.single.throughput;
        if (world == 1 && i > 0) break;  // one figure: the first GPU's
        CheckResult r = judge_gpu(f, gpus[i], measured, world, table, tflops_of);
        add_extras(r, f, gpus[i], measured);
        out.push_back(std::move(r));
    }
    if (world > 1) out.push_back(judge_scaling(f));
    return out;
}

}  // namespace gpuvet
