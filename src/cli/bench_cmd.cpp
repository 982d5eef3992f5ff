// gpuvet bench <what>: just the measurements of one area, with check's output flags.
// The table maps each name to check keys of the registry; a new benchmark is one row.

#include "cli/check_run.hpp"
#include "cli/common.hpp"
#include "cli/registry.hpp"
#include "core/check.hpp"
#include "core/context.hpp"
#include "core/error.hpp"
#include "core/runner.hpp"
#include "specs/spec_db.hpp"

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
        {"gemm", {"gpu.gemm"}, "tensor GEMM TFLOPS: TF32, FP16, BF16, FP8, INT8 (cuBLASLt)"},
        {"allreduce", {"gpu.allreduce"}, "NCCL all-reduce bus bandwidth over all GPUs"},
    };
    return rows;
}

struct BenchArgs {
    std::string what;
    bool quick = false, full = false;
    std::string gpus;
};

int run_bench(const GlobalOptions& g, const BenchArgs& a) {
    const BenchRow* row = nullptr;
    std::string names;
    for (const auto& r : bench_table()) {
        names += (names.empty() ? "" : ", ") + std::string(r.name);
        if (a.what == r.name) row = &r;
    }
    if (!row) throw usage_error("unknown benchmark '" + a.what + "'", "choose one of: " + names);
    auto run = start_check_run(g, load_specs(g), tier_from_flags(a.quick, a.full), a.gpus);
    CheckList chosen = select_checks(row->checks);
    run_checks(chosen, run->ctx);
    return emit_report(run->report, g);
}

}  // namespace

void add_bench_command(Cli cli) {
    auto* sub = cli.app.add_subcommand("bench", "Run one group of GPU measurements");
    auto args = std::make_shared<BenchArgs>();
    std::string help = "what to measure:";
    for (const auto& r : bench_table()) help += std::string("\n  ") + r.name + ": " + r.what;
    sub->add_option("what", args->what, help)->required();
    sub->add_flag("--quick", args->quick, "shortest sizes and repetitions");
    sub->add_flag("--full", args->full, "longest sizes and repetitions")->excludes("--quick");
    sub->add_option("--gpus", args->gpus, "comma-separated GPU indexes (default: all)");
    add_output_flags(*sub, cli.global);
    sub->footer(
        "Examples:\n  gpuvet bench memory\n  gpuvet bench fp --gpus 0,1 --json\n"
        "Exit codes: 0 passed (warnings allowed), 1 a measurement failed, 2 bad input, 3 incomplete (interrupted) or "
        "nothing could run.");
    on_chosen(cli, *sub, "bench", [args](const GlobalOptions& g) { return run_bench(g, *args); });
}

}  // namespace gpuvet
