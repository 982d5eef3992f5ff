// gpuvet check: the acceptance test of a delivered server.
#include "cli/check_run.hpp"
#include "cli/common.hpp"
#include "cli/history_record.hpp"
#include "cli/registry.hpp"
#include "cli/number_option.hpp"
#include "host/iperf_run.hpp"
#include "host/storage_bench.hpp"
#include "core/check.hpp"
#include "core/context.hpp"
#include "core/error.hpp"
#include "core/runner.hpp"
#include "gpu/burn.hpp"
#include "order/order.hpp"
#include "specs/spec_db.hpp"

namespace gpuvet {

namespace {

struct CheckArgs {
    bool quick = false;
    bool full = false;
    std::string data_dir = ".";
    std::optional<std::string> net_server;
    std::optional<double> burn_duration_s;
    std::optional<std::string> expect;      // --expect "8x H100-SXM-80GB, 64 cores"
    std::optional<std::string> order_file;  // --order order.toml
    std::string gpus;                       // --gpus 0,1
    std::string only;                       // --only gpu.p2p,host.
    std::optional<std::string> python;      // --python: gpu.software, gpu.train
    HistoryOptions history;
};

int run_check(const GlobalOptions& g, const CheckArgs& a) {
    SpecDb specs = load_specs(g);
    // Bad selections end here with exit 2, before anything runs.
    std::vector<std::string> only = split_commas(a.only);
    if (!a.only.empty() && only.empty())
        throw usage_error("--only: no check named", "give check keys or areas, e.g. --only gpu.p2p,host.");
    require_known_checks(only);  // an unknown key ends here, before the order file is read
    // The order is read before any check runs: bad input ends here with exit 2.
    std::optional<Order> order;
    if (a.expect && a.order_file)
        throw usage_error("--expect and --order both given",
                          "describe the order one way: --expect TEXT or --order FILE");
    require_data_dir(a.data_dir);
    require_usable_history(a.history);
    // A bad port or an unknown host is exit 2 here, not an ERROR after the other checks ran.
    if (a.net_server) resolve_server(*a.net_server, "--net-server");
    if (a.expect) order = parse_expect(*a.expect, specs);
    if (a.order_file) order = load_order_file(*a.order_file, specs);
    // Moving the database keeps its SKUs where they are, so the order's pointers to them stay valid.
    auto run = start_check_run(g, std::move(specs), tier_from_flags(a.quick, a.full), a.gpus);
    CheckSettings settings;
    settings.data_dir = a.data_dir;
    settings.net_server = a.net_server;
    settings.burn_s = a.burn_duration_s;
    if (order) settings.order = &*order;
    settings.train.python = a.python;
    CheckList checks = select_checks(only, settings);
    run_checks(checks, run->ctx);
    auto live = live_identity(*run->facts);
    if (selects_report_check(only, "history.drift"))
        if (auto drift = history_drift(run->report, a.history, live)) run->report.checks.push_back(std::move(*drift));
    // The HTML report shows the box's earlier runs; read before this run is recorded.
    auto past = g.report_dir ? box_history_for(run->report, a.history, live) : std::nullopt;
    int code = emit_report(run->report, g, past ? &*past : nullptr);
    record_in_history(run->report, a.history, live);
    return code;
}

}  // namespace

void add_check_command(Cli cli) {
    auto* sub = cli.app.add_subcommand("check", "Acceptance test of this server: a go/no-go verdict");
    auto args = std::make_shared<CheckArgs>();
    sub->add_flag("--quick", args->quick, "shortest tier (about 1-2 minutes)");
    sub->add_flag("--full", args->full, "longest tier: 10-minute burn, exhaustive sweeps, the training benchmark")
        ->excludes("--quick");
    sub->add_option("--data-dir", args->data_dir, "folder on the data disk for host.storage (default: here)");
    sub->add_option("--net-server", args->net_server, "iperf3 server HOST[:PORT] for host.network");
    add_number_option(*sub, "--burn-duration", args->burn_duration_s, kBurnDurationRule,
                      "gpu.burn duration: 90s, 10m (default 20 s quick, 60 s, 10 min full)");
    sub->add_option("--expect", args->expect,
                    "what was ordered, e.g. \"8x H100-SXM-80GB, 64 cores, 1TB RAM\" (docs/order.md)");
    sub->add_option("--order", args->order_file, "order file (TOML) to verify the server against (docs/order.md)");
    sub->add_option("--gpus", args->gpus, "comma-separated GPU indexes to measure (default: all)");
    sub->add_option("--python", args->python,
                    "the Python the training job uses, for gpu.software and gpu.train (default: $VIRTUAL_ENV, "
                    "$CONDA_PREFIX, then PATH)");
    sub->add_option("--only", args->only, "comma-separated check keys or areas (gpu., host.) to run (default: all)");
    add_history_flags(*sub, args->history);
    add_output_flags(*sub, cli.global);
    sub->footer(
        "Examples:\n"
        "  gpuvet check                     run every check and print the scorecard\n"
        "  gpuvet check --no-history        the same, without recording it in the history (docs/history.md)\n"
        "  gpuvet check --json > box.json   the same, as a JSON document\n"
        "  gpuvet check --report out/       also write out/gpuvet-report.{json,txt}\n"
        "  gpuvet check --expect \"8x H100-SXM-80GB, nvlink\"   verify the delivery against the order\n"
        "  gpuvet check --only gpu.,host.cpu --gpus 0,1   just the GPU checks and host.cpu, on GPUs 0 and 1\n"
        "Exit codes: 0 all passed (warnings allowed), 1 a check failed, 2 bad input, 3 incomplete (interrupted) or "
        "nothing could run.");
    on_chosen(cli, *sub, "check", [args](const GlobalOptions& g) { return run_check(g, *args); });
}

}  // namespace gpuvet
