// gpuvet burn: every selected GPU under sustained full load, judged (throttling, errors, outliers).
#include "cli/check_run.hpp"
#include "cli/common.hpp"
#include "cli/history_record.hpp"
#include "cli/registry.hpp"
#include "cli/number_option.hpp"
#include "core/check.hpp"
#include "core/context.hpp"
#include "core/error.hpp"
#include "core/runner.hpp"
#include "gpu/burn.hpp"
#include "specs/spec_db.hpp"

namespace gpuvet {

namespace {

struct BurnArgs {
    double duration_s = 600;
    std::string gpus;
    std::string dtype = "bf16";
    std::string load = "gemm";
    double sample_hz = 1;
    HistoryOptions history;
};

// NVML refreshes most fields about once a second; 20 Hz is as fast as it is worth asking.
constexpr NumberRule kSampleHzRule{.min = 1, .max = 20, .what = "a rate", .suffix = "Hz", .example = "2"};

int run_burn_cmd(const GlobalOptions& g, const BurnArgs& a) {
    BurnOptions o;
    o.duration_s = a.duration_s;
    o.dtype = parse_burn_dtype(a.dtype);
    o.load = parse_burn_load(a.load);
    o.sample_hz = a.sample_hz;
    require_usable_history(a.history);

    auto run = start_check_run(g, load_specs(g), Tier::Standard, a.gpus);
    CheckSettings settings;
    settings.burn = o;
    CheckList checks = select_checks({"gpu.burn"}, settings);
    run_checks(checks, run->ctx);
    int code = emit_report(run->report, g);
    record_in_history(run->report, a.history, live_identity(*run->facts));
    return code;
}

}  // namespace

void add_burn_command(Cli cli) {
    auto* sub =
        cli.app.add_subcommand("burn", "Sustained full load on the GPUs, judged: throttling, errors, slow GPUs");
    auto args = std::make_shared<BurnArgs>();
    add_number_option(*sub, "--duration", args->duration_s, kBurnDurationRule, "how long: 90s, 10m, 1h (default 10m)");
    sub->add_option("--gpus", args->gpus, "GPU indexes, comma-separated (default: all)");
    sub->add_option("--dtype", args->dtype, "bf16 | fp16 | tf32 | fp32 | fp64 (default bf16)");
    sub->add_option("--load", args->load, "gemm | memory | mixed (default gemm)");
    add_number_option(*sub, "--sample-hz", args->sample_hz, kSampleHzRule, "NVML telemetry rate (default 1)");
    add_history_flags(*sub, args->history);
    add_output_flags(*sub, cli.global);
    sub->footer(
        "Examples:\n"
        "  gpuvet burn                          10 minutes on every GPU, bf16\n"
        "  gpuvet burn --duration 2m --gpus 0,1 --dtype fp32\n"
        "  gpuvet burn --load mixed --report out/   tensor and memory load; writes out/gpuvet-report.*\n"
        "Ctrl-C stops the load; the report of what was measured is still printed and written (INCOMPLETE).\n"
        "Exit codes: 0 passed (warnings allowed), 1 a GPU failed, 2 bad input, 3 incomplete (interrupted) or nothing "
        "could run.");
    on_chosen(cli, *sub, "burn", [args](const GlobalOptions& g) { return run_burn_cmd(g, *args); });
}

}  // namespace gpuvet
