// gpuvet bench <what>: just the measurements of one area, with check's output flags.
// The table maps each name to check keys of the registry; a new benchmark is one row.

#include "cli/check_run.hpp"
#include "cli/common.hpp"
#include "cli/history_record.hpp"
#include "cli/registry.hpp"
#include "core/check.hpp"
#include "core/context.hpp"
#include "core/error.hpp"
#include "core/runner.hpp"
#include "specs/spec_db.hpp"
#include "train/python_env.hpp"
#include "train/train_settings.hpp"

namespace gpuvet {

namespace {

struct BenchRow {
    const char* name;
    std::vector<std::string> checks;  // registry keys
    const char* what;
};
const std::vector<BenchRow>& bench_table() {
    static const std::vector<BenchRow> rows = {
        {"memory", {"gpu.memory_bandwidth"}, "device memory bandwidth: copy, read, write, triad"},
        {"fp", {"gpu.fp_peak"}, "FMA throughput: FP64, FP32, FP16, BF16"},
        {"memtest", {"gpu.memtest"}, "write and verify nearly all GPU memory"},
        {"pcie", {"gpu.h2d_d2h"}, "host<->GPU copy bandwidth, each GPU alone and all at once"},
        {"p2p", {"gpu.p2p"}, "GPU<->GPU copy bandwidth and latency for every pair"},
        {"gemm",
         {"gpu.gemm"},
         "tensor GEMM TFLOPS: TF32, FP16, BF16, FP8, INT8 (cuBLASLt; FP16, BF16 through hipBLASLt on AMD)"},
        {"allreduce", {"gpu.allreduce"}, "NCCL (RCCL on AMD) all-reduce bus bandwidth over all GPUs"},
        {"train",
         {"gpu.software", "gpu.train"},
         "a training benchmark with this server's PyTorch vs public baselines: train "
         "[resnet50|bert-large|bert-base|gpt]"},
    };
    return rows;
}

struct BenchArgs {
    std::string what;
    std::string model;  // bench train's model
    bool quick = false, full = false;
    std::string gpus;
    std::optional<std::string> python;
    std::optional<int> steps, batch;
    bool channels_last = false;
    HistoryOptions history;
};

const char* const kTrainModels[] = {"resnet50", "bert-large", "bert-base", "gpt"};

// bench train's options, checked before anything runs (exit 2).
TrainSettings train_settings_of(const BenchArgs& a) {
    TrainSettings t;
    t.explicit_run = true;
    t.python = a.python;
    t.steps = a.steps;
    t.batch = a.batch;
    t.channels_last = a.channels_last;
    if (!a.model.empty()) t.model = a.model;
    bool known = false;
    for (const char* m : kTrainModels) known = known || t.model == m;
    if (!known)
        throw usage_error("unknown model '" + t.model + "' for bench train",
                          "choose one of: resnet50, bert-large, bert-base, gpt");
    if (a.what != "train" && (!a.model.empty() || a.python || a.steps || a.batch || a.channels_last))
        throw usage_error("a model, --python, --steps, --batch and --channels-last belong to 'bench train'",
                          "run 'gpuvet bench train resnet50 --steps 100', or drop them");
    if (t.steps && (*t.steps < 1 || *t.steps > 100000))
        throw usage_error("--steps " + std::to_string(*t.steps) + " is out of range", "give 1 to 100000 timed steps");
    if (t.batch && (*t.batch < 1 || *t.batch > 65536))
        throw usage_error("--batch " + std::to_string(*t.batch) + " is out of range",
                          "give a per-GPU batch from 1 to 65536");
    if (t.python) find_python(t.python);  // a --python that is no interpreter: exit 2 now
    return t;
}

int run_bench(const GlobalOptions& g, const BenchArgs& a) {
    const BenchRow* row = nullptr;
    std::string names;
    for (const auto& r : bench_table()) {
        names += (names.empty() ? "" : ", ") + std::string(r.name);
        if (a.what == r.name) row = &r;
    }
    if (!row) throw usage_error("unknown benchmark '" + a.what + "'", "choose one of: " + names);
    CheckSettings settings;
    settings.train = train_settings_of(a);
    require_usable_history(a.history);
    auto run = start_check_run(g, load_specs(g), tier_from_flags(a.quick, a.full), a.gpus);
    CheckList chosen = select_checks(row->checks, settings);
    run_checks(chosen, run->ctx);
    int code = emit_report(run->report, g);
    record_in_history(run->report, a.history, live_identity(*run->facts));
    return code;
}

}  // namespace

void add_bench_command(Cli cli) {
    auto* sub = cli.app.add_subcommand("bench", "Run one group of GPU measurements");
    auto args = std::make_shared<BenchArgs>();
    std::string help = "what to measure:";
    for (const auto& r : bench_table()) help += std::string("\n  ") + r.name + ": " + r.what;
    sub->add_option("what", args->what, help)->required();
    sub->add_option("model", args->model, "bench train: resnet50 (default), bert-large, bert-base or gpt");
    sub->add_flag("--quick", args->quick, "shortest sizes and repetitions");
    sub->add_flag("--full", args->full, "longest sizes and repetitions")->excludes("--quick");
    sub->add_option("--gpus", args->gpus, "comma-separated GPU indexes (default: all)");
    sub->add_option("--python", args->python,
                    "bench train: the Python the job uses (default: $VIRTUAL_ENV, $CONDA_PREFIX, PATH)");
    sub->add_option("--steps", args->steps, "bench train: timed steps (default 100; 50 for gpt)");
    sub->add_option("--batch", args->batch, "bench train: per-GPU batch (default: by memory, as the baseline)");
    sub->add_flag("--channels-last", args->channels_last, "bench train resnet50: also time channels-last");
    add_history_flags(*sub, args->history);
    add_output_flags(*sub, cli.global);
    sub->footer(
        "Examples:\n  gpuvet bench memory\n  gpuvet bench fp --gpus 0,1 --json\n"
        "  gpuvet bench train resnet50 --python /opt/venv/bin/python\n"
        "Exit codes: 0 passed (warnings allowed), 1 a measurement failed, 2 bad input, 3 incomplete (interrupted) or "
        "nothing could run.");
    on_chosen(cli, *sub, "bench", [args](const GlobalOptions& g) { return run_bench(g, *args); });
}

}  // namespace gpuvet
