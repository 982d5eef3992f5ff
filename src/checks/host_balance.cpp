#include "checks/host_balance.hpp"

#include "checks/run_facts.hpp"

#include <algorithm>

#include "core/context.hpp"
#include "core/strings.hpp"
#include "gpu/identify.hpp"
#include "specs/gpu_spec.hpp"

namespace gpuvet {

namespace {

constexpr double kCpuWarnPerGpu = 4, kCpuFailPerGpu = 2;
constexpr const char* kCpuSource =
    "data loading and augmentation run on the CPU: PyTorch DataLoader pipelines typically use 4-8 workers per "
    "GPU; NVIDIA DGX H100 ships 112 cores for 8 GPUs (14 per GPU); below 2 per GPU the GPUs wait for data";
constexpr double kRamWarnRatio = 1.0, kRamAdviseRatio = 2.0;
constexpr const char* kRamSource =
    "pinned staging buffers, dataset caches and checkpoints of the full model live in host RAM: at least the "
    "total GPU memory, 2x advised (DGX H100: 2 TB RAM for 640 GB of GPU memory, 3.2x)";
// Image training is the data-hungry common case: ResNet-50 reads ~0.3 GB/s per A100 (MLPerf-class
// ~2,500 img/s x ~110 KB ImageNet JPEG), and a GPU with more tensor throughput reads proportionally
// more. Video, audio and uncompressed data read several times more.
constexpr double kStorageGbpsPerA100 = 0.3, kStorageRichFactor = 3;
constexpr double kStorageWarnPerGpu = 1.0;  // when the GPUs' throughput is unknown
constexpr const char* kStorageSource =
    "image training reads ~0.3 GB/s per A100 of tensor throughput (ResNet-50 at ~2,500 img/s x ~110 KB JPEG), "
    "scaled by each GPU's dense BF16 tensor TFLOPS / 312; video, audio and uncompressed data read ~3x more";
constexpr const char* kStorageFlatSource =
    "the GPUs' throughput is unknown, so a flat rule holds: ~1 GB/s per GPU keeps image training fed (ResNet-50 "
    "reads ~0.3 GB/s per A100; video, audio and uncompressed data several times more)";
constexpr const char* kNetSource =
    "multi-node training exchanges gradients over the network: DGX H100 pairs each GPU with a 400 Gbit/s NIC; "
    "for one node, 10 Gbit/s or more keeps dataset and checkpoint transfers short";

}  // namespace

BalanceInputs balance_inputs(const RunFacts& facts, const PriorResults& prior) {
    BalanceInputs in;
    const MachineInfo& machine = facts.machine();
    in.gpus = int(facts.all_gpus().size());
    in.usable_cpus = prior.value("host.cpu", "cpus_usable");
    if (!in.usable_cpus && machine.cpu_threads) in.usable_cpus = *machine.cpu_threads;
    if (machine.memory_total_bytes) in.ram_bytes = double(*machine.memory_total_bytes);
    if (machine.memory_limit_bytes) in.ram_bytes = double(*machine.memory_limit_bytes);
    double gm = 0;
    bool all = in.gpus > 0;
    for (const GpuInfo& g : facts.all_gpus()) {
        if (g.memory_total_bytes) gm += double(*g.memory_total_bytes.value);
        else all = false;
    }
    if (all) in.gpu_memory_bytes = gm;
    in.storage_read_gbps = prior.value("host.storage", "seq_read_gbps");
    auto up = prior.value("host.network", "upload_gbitps"), down = prior.value("host.network", "download_gbitps");
    if (up && down) in.network_gbitps = std::min(*up, *down);
    else if (up || down) in.network_gbitps = up ? up : down;
    return in;
}

namespace {

// Each judge adds its measurement (graded by its Reference) and its advice in plain words.

void judge_cpus(CheckResult& r, const BalanceInputs& in, double gpus) {
    if (!in.usable_cpus) {
        r.measurements.push_back(Measurement::absent("cpus_per_gpu", "CPUs per GPU", "CPUs", "CPU count unknown"));
        return;
    }
    const double per = *in.usable_cpus / gpus;
    Reference ref;
    ref.warn_below = kCpuWarnPerGpu;
    ref.fail_below = kCpuFailPerGpu;
    ref.source = kCpuSource;
    r.measurements.push_back(Measurement::number("cpus_per_gpu", "CPUs per GPU", per, "CPUs").against(ref));
    grade_into(r, r.measurements.back());
    const Verdict v = grade(per, ref);
    if (v == Verdict::Fail)
        r.details.push_back("only " + format_number(per) +
                            " CPUs per GPU: data loading will starve the GPUs; "
                            "ask for a host with at least 4 (better 8) cores per GPU");
    else if (v == Verdict::Warn)
        r.details.push_back(format_number(per) +
                            " CPUs per GPU: enough for pre-tokenized text, tight for image "
                            "or video augmentation (use 4-8 per GPU, or GPU-side decoding such as DALI)");
}

void judge_ram(CheckResult& r, const BalanceInputs& in) {
    if (!in.ram_bytes || !in.gpu_memory_bytes || *in.gpu_memory_bytes <= 0) {
        r.measurements.push_back(Measurement::absent("ram_to_gpu_memory_ratio", "Host RAM / GPU memory", "x",
                                                     in.ram_bytes ? "GPU memory sizes unknown" : "host RAM unknown"));
        return;
    }
    const double ratio = *in.ram_bytes / *in.gpu_memory_bytes;
    Reference ref;
    ref.warn_below = kRamWarnRatio;
    ref.source = kRamSource;
    r.measurements.push_back(
        Measurement::number("ram_to_gpu_memory_ratio", "Host RAM / GPU memory", ratio, "x").against(ref));
    grade_into(r, r.measurements.back());
    if (grade(ratio, ref) != Verdict::Pass)
        r.details.push_back("host RAM (" + format_bytes(*in.ram_bytes) + ") is less than the GPUs' memory (" +
                            format_bytes(*in.gpu_memory_bytes) +
                            "): full checkpoints and pinned buffers will not fit; ask for at least 2x");
    else if (ratio < kRamAdviseRatio)
        r.details.push_back("host RAM is " + format_number(ratio, 2) +
                            "x the GPU memory: enough, 2x leaves room for dataset caching and CPU offload");
}

void judge_storage(CheckResult& r, const BalanceInputs& in, double gpus) {
    if (!in.storage_read_gbps) {
        r.measurements.push_back(Measurement::absent("storage_read_gbps_per_gpu", "Storage read per GPU", "GB/s",
                                                     "host.storage did not measure a read speed"));
        return;
    }
    // What these GPUs read in image training at their tensor throughput; a flat rule per GPU
    // when their throughput is unknown.
    const bool by_class = in.a100_equivalents.has_value();
    const double need = by_class ? kStorageGbpsPerA100 * *in.a100_equivalents : kStorageWarnPerGpu * gpus;
    const double read = *in.storage_read_gbps;
    Reference ref;
    ref.warn_below = need / gpus;
    ref.expected_text = "≥ " + format_number(need) + " GB/s in total for image training";
    ref.source =
        by_class ? std::string(kStorageSource) : "(" + in.a100_equivalents.absent_reason + ") " + kStorageFlatSource;
    r.measurements.push_back(
        Measurement::number("storage_read_gbps_per_gpu", "Storage read per GPU", read / gpus, "GB/s").against(ref));
    grade_into(r, r.measurements.back());
    if (grade(read / gpus, ref) != Verdict::Pass)
        r.details.push_back("the data disk reads " + format_number(read) +
                            " GB/s; image training on these GPUs "
                            "reads about " +
                            format_number(need) + " GB/s: stage data on local NVMe or cache the dataset in RAM");
    else if (read < need * kStorageRichFactor)
        r.details.push_back("the data disk reads " + format_number(read) +
                            " GB/s: enough for image training on "
                            "these GPUs (about " +
                            format_number(need) +
                            " GB/s), tight for video, audio or "
                            "uncompressed data (about " +
                            format_number(need * kStorageRichFactor) + " GB/s)");
}

// Advice only: one node's network need depends on multi-node use gpuvet cannot see.
void judge_network(CheckResult& r, const BalanceInputs& in, double gpus) {
    if (!in.network_gbitps) {
        r.measurements.push_back(Measurement::absent("network_gbitps_per_gpu", "Network per GPU", "Gbit/s",
                                                     "no network measurement (give --net-server)"));
        return;
    }
    Reference ref;
    ref.source = kNetSource;
    r.measurements.push_back(
        Measurement::number("network_gbitps_per_gpu", "Network per GPU", *in.network_gbitps / gpus, "Gbit/s")
            .against(ref));
    if (*in.network_gbitps < 10)
        r.details.push_back(
            "network below 10 Gbit/s: downloading datasets and checkpoints will be slow, "
            "multi-node training impractical");
}

}  // namespace

CheckResult balance_result(const BalanceInputs& in) {
    CheckResult r;
    r.verdict = Verdict::Pass;
    const double g = std::max(1, in.gpus);
    r.measurements.push_back(Measurement::number("gpus", "GPUs", in.gpus, "count"));
    judge_cpus(r, in, g);
    judge_ram(r, in);
    judge_storage(r, in, g);
    judge_network(r, in, g);
    r.summary = r.verdict == Verdict::Pass
                    ? "The host is sized for its " + std::to_string(in.gpus) + " GPU(s)."
                    : "The host may starve its " + std::to_string(in.gpus) + " GPU(s): see below.";
    return r;
}

std::optional<std::string> HostBalanceCheck::unmet_requirement(const CheckContext& ctx) const {
    if (!ctx.facts || ctx.facts->all_gpus().empty())
        return std::string("no GPUs found: nothing to balance the host against");
    return std::nullopt;
}

Fact<double> a100_equivalents(const std::vector<const GpuSpec*>& specs) {
    if (specs.empty()) return Fact<double>::absent("no GPUs");
    double sum = 0;
    for (const GpuSpec* s : specs) {
        if (!s) return Fact<double>::absent("a GPU is not in the spec database, so its throughput is unknown");
        auto tflops = s->bf16_tensor_tflops ? s->bf16_tensor_tflops : s->fp16_tensor_tflops;
        if (!tflops) return Fact<double>::absent(s->name + " has no tensor TFLOPS in the spec database");
        sum += *tflops / kA100DenseBf16Tflops;
    }
    return sum;
}

std::vector<CheckResult> HostBalanceCheck::run(CheckContext& ctx) {
    BalanceInputs in = balance_inputs(*ctx.facts, ctx.prior);
    if (ctx.specs && !ctx.facts->all_gpus().empty()) {
        std::vector<const GpuSpec*> specs;
        for (const GpuInfo& g : ctx.facts->all_gpus()) specs.push_back(ctx.facts->spec_of(g.index));
        in.a100_equivalents = a100_equivalents(specs);
    }
    return {balance_result(in)};
}

}  // namespace gpuvet
