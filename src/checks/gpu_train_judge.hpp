// gpu.train's judge: the benchmark's figures against the public baselines of the same GPU.
// PASS at >= 0.90 of the baseline, WARN below, FAIL below 0.75 (docs/train.md); no baseline for a
// GPU (or a CPU test run) is said plainly, with the nearest GPU's figure for context, never PASS.
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/result.hpp"
#include "train/baselines.hpp"

namespace gpuvet {

inline constexpr double kTrainPassRatio = 0.90;
inline constexpr double kTrainFailRatio = 0.75;

struct TrainRunFigure {
    double throughput = 0;  // in TrainFigures::unit, the whole run (one device)
    double elapsed_s = 0;
    int batch = 0;
    std::vector<int> oom_batches;  // batches that ran out of memory before `batch` fit
};

// What the script measured (src/train/train_bench.py's result), in plain values.
struct TrainFigures {
    std::string model, device, unit, precision;  // "resnet50", "cuda" | "cpu", "images/s", "amp-fp16"
    int warmup = 0, steps = 0;
    std::string torch, cuda, cudnn, python;  // the stack that ran
    std::string hip;                         // a ROCm build's torch.version.hip (then cudnn is empty)
    TrainRunFigure single;                   // one device alone
    std::optional<TrainRunFigure> channels_last;
    std::vector<double> ddp;               // per rank (= per selected GPU, in order), DDP over NCCL
    std::optional<double> flops_per_unit;  // GPT: FLOPs per token
};

struct TrainGpu {
    int index = 0;
    std::string name;                          // what the report calls it
    std::optional<std::string> sku;            // spec key
    std::optional<double> bf16_tensor_tflops;  // dense, for MFU
    std::optional<double> fp16_tensor_tflops;  // dense, to find the nearest GPU with a baseline
};

// The method the benchmark reproduces for `model`, as data/train_baselines.toml names it.
std::string train_method(const std::string& model);
// The ratio rule on its own: PASS, WARN or FAIL for measured / baseline.
Verdict train_ratio_verdict(double ratio);

// `tflops_of(sku)`: a SKU's dense FP16 tensor figure (to pick the nearest GPU with a baseline).
using SkuTflops = std::function<std::optional<double>(const std::string& sku)>;
// One result per GPU (gpus in the order the script's devices were given); and, with more than one
// GPU, a last result without a GPU index: the scaling efficiency against one GPU.
std::vector<CheckResult> judge_train(const TrainFigures& f, const std::vector<TrainGpu>& gpus,
                                     const TrainBaselines& table, const SkuTflops& tflops_of);

}  // namespace gpuvet
