#include "checks/gpu_train.hpp"

#include "checks/gpu_requirements.hpp"
#include "checks/gpu_software_judge.hpp"
#include "checks/run_facts.hpp"
#include "core/context.hpp"
#include "core/error.hpp"
#include "specs/spec_db.hpp"
#include "train/python_env.hpp"
#include "train/python_script.hpp"

namespace gpuvet {

namespace {

std::string str(const nlohmann::json& j, const char* k) {
    auto it = j.find(k);
    if (it == j.end() || it->is_null()) return {};
    return it->is_string() ? it->get<std::string>() : it->dump();
}

double positive(const nlohmann::json& j, const char* k) {
    auto it = j.find(k);
    if (it == j.end() || !it->is_number() || !(it->get<double>() > 0))
        throw runtime_error(std::string("the benchmark's result has no positive '") + k + "'",
                            "this is a gpuvet bug if the script is unchanged: report it with the JSON report");
    return it->get<double>();
}

TrainRunFigure figure_of(const nlohmann::json& j) {
    if (!j.is_object()) throw runtime_error("the benchmark's result lacks a run", "report it with the JSON report");
    TrainRunFigure r;
    r.throughput = positive(j, "throughput");
    r.elapsed_s = positive(j, "elapsed_s");
    r.batch = int(positive(j, "batch"));
    if (auto it = j.find("oom_batches"); it != j.end() && it->is_array())
        for (auto& b : *it)
            if (b.is_number_integer()) r.oom_batches.push_back(b.get<int>());
    return r;
}

struct Device {
    std::string type;  // "cuda" or "cpu"
    std::vector<TrainGpu> gpus;
    std::string ordinals;  // "0,1": CUDA ordinals of the selected GPUs
};

// An AMD-only box: PyTorch's ROCm build runs the job through HIP on its own (its devices are still
// called "cuda"), so gpuvet's CUDA is not needed, only the GPUs.
bool amd_box(const CheckContext& ctx) {
    return ctx.facts && ctx.facts->driver().amd_present && !ctx.facts->driver().nvidia_found;
}

GpuNeed need_of(const CheckContext& ctx) { return amd_box(ctx) ? GpuNeed::Inventory : GpuNeed::Cuda; }

Device device_for(const CheckContext& ctx) {
    Device d{"cuda", {}, ""};
    for (const GpuInfo* g : ctx.facts->selected_gpus()) {
        TrainGpu t;
        t.index = g->index;
        t.name = g->name ? *g->name : "GPU " + std::to_string(g->index);
        if (const GpuSpec* sp = ctx.facts->spec_of(g->index)) {
            t.sku = sp->key;
            t.bf16_tensor_tflops = sp->bf16_tensor_tflops;
            t.fp16_tensor_tflops = sp->fp16_tensor_tflops;
        }
        d.gpus.push_back(t);
        // AMD: HIP numbers the GPUs as AMD SMI does (by PCI bus) unless HIP_VISIBLE_DEVICES says otherwise.
        int ordinal = g->cuda_ordinal ? *g->cuda_ordinal : g->index;
        if (!d.ordinals.empty()) d.ordinals += ',';
        d.ordinals += std::to_string(ordinal);
    }
    return d;
}

}  // namespace

TrainFigures train_figures_of(const nlohmann::json& j) {
    TrainFigures f;
    f.model = str(j, "model");
    f.device = str(j, "device");
    f.torch = str(j, "torch");
    f.cuda = str(j, "cuda");
    f.hip = str(j, "hip");
    if (auto it = j.find("cudnn"); it != j.end() && it->is_number_integer()) f.cudnn = cudnn_text(it->get<int>());
    f.python = str(j, "python");
    f.warmup = int(j.value("warmup", 0));
    f.steps = int(j.value("steps", 0));
    const nlohmann::json& single = j.contains("single") ? j["single"] : nlohmann::json();
    f.single = figure_of(single);
    f.unit = str(single, "unit");
    f.precision = str(single, "precision");
    if (auto it = single.find("flops_per_unit"); it != single.end() && it->is_number())
        f.flops_per_unit = it->get<double>();
    if (j.contains("channels_last")) f.channels_last = figure_of(j["channels_last"]);
    if (auto it = j.find("ddp"); it != j.end() && it->is_array())
        for (auto& r : *it) f.ddp.push_back(positive(r, "throughput"));
    return f;
}

CheckResult train_error_result(const std::string& kind, const std::string& message, bool amd) {
    CheckResult r;
    r.verdict = Verdict::Fail;
    r.summary = message.empty() ? "the benchmark failed and gave no message" : message;
    if (kind == "no_torch" || kind == "no_torchvision" || kind == "no_transformers") {
        r.verdict = Verdict::Skip;
        r.summary += ": nothing to benchmark with; install it in the Python the job uses, or give --python";
    } else if (kind == "no_cuda_build") {
        r.summary += amd ? ": the wheel has no ROCm. Fix: " + torch_rocm_wheel_command(std::nullopt)
                         : ": the wheel has no CUDA. Fix: " + torch_cuda_wheel_command(std::nullopt);
    } else if (kind == "cuda_unavailable") {
        r.summary += " although the GPUs are there: see gpu.software for the reason";
    } else if (kind == "oom") {
        r.summary += ": see gpu.tenancy for memory other processes hold, or give a smaller --batch";
    } else if (kind == "nccl") {
        r.summary += ": check gpu.allreduce and NCCL_DEBUG=INFO for the link that failed";
    } else {
        // A failure the script does not classify says nothing about the hardware: the check could
        // not run, it did not find a fault.
        r.verdict = Verdict::Error;
        r.summary = "the benchmark failed (" +
                    (kind.empty() ? std::string("no error_kind") : "error_kind '" + kind + "'") + "): " + r.summary;
    }
    return r;
}

std::optional<std::string> GpuTrainCheck::unmet_requirement(const CheckContext& ctx) const {
    if (!settings_.explicit_run && ctx.options.tier != Tier::Full)
        return std::string("runs with 'check --full' or 'gpuvet bench train'");
    if (train_cpu_allowed() && gpu_requirement(ctx, need_of(ctx))) return std::nullopt;  // the CPU test run
    return gpu_requirement(ctx, need_of(ctx));
}

std::vector<CheckResult> GpuTrainCheck::run(CheckContext& ctx) {
    PythonLookup py = find_python(settings_.python);
    if (!py.found) {
        CheckResult r;
        r.summary = py.absent_reason + ": nothing to benchmark with; give --python PATH";
        return {r};
    }
    Device dev = device_for(ctx);
    if (gpu_requirement(ctx, need_of(ctx))) dev = {"cpu", {}, ""};  // only with GPUVET_TRAIN_ALLOW_CPU=1
    ScriptRun run;
    run.python = py.found->path;
    run.script = train_bench_script();
    run.name = "train_bench.py";
    run.args = {"--model", settings_.model, "--device", dev.type};
    if (dev.type == "cpu") run.args.push_back("--tiny");
    else run.args.insert(run.args.end(), {"--devices", dev.ordinals});
    if (settings_.steps) run.args.insert(run.args.end(), {"--steps", std::to_string(*settings_.steps)});
    if (settings_.batch) run.args.insert(run.args.end(), {"--batch", std::to_string(*settings_.batch)});
    if (settings_.channels_last) run.args.push_back("--channels-last");
    run.idle_timeout_s = train_watchdog_s(180);  // the first cuDNN autotune of a large batch takes tens of seconds
    run.total_timeout_s = 1800;
    run.stop = ctx.stop;
    run.on_progress = [&](const std::string& line) {
        if (ctx.progress) ctx.progress->update(settings_.model + " " + line);
    };
    ScriptOutcome out = run_script(run);
    if (out.failure == ScriptFailure::Interrupted) throw Interrupted{};
    if (out.failure != ScriptFailure::None)
        throw runtime_error("the training benchmark failed: " + out.message,
                            "run 'gpuvet bench train " + settings_.model + " --python " + py.found->path +
                                "' to repeat it; GPUVET_TRAIN_WATCHDOG_S raises the watchdog's limit");
    const std::string status = str(out.result, "status");
    if (status == "error")
        return {train_error_result(str(out.result, "error_kind"), str(out.result, "message"), amd_box(ctx))};
    if (status != "ok")
        throw runtime_error(status.empty() ? "the benchmark's result lacks a status"
                                           : "the benchmark's result has an unknown status '" + status + "'",
                            "this is a gpuvet bug if the script is unchanged: report it with the JSON report");
    return judge_train(train_figures_of(out.result), dev.gpus, TrainBaselines::embedded(),
                       [&](const std::string& sku) -> std::optional<double> {
                           const GpuSpec* sp = ctx.specs ? ctx.specs->by_key(sku) : nullptr;
                           return sp ? sp->fp16_tensor_tflops : std::nullopt;
                       });
}

}  // namespace gpuvet
