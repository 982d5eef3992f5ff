// gpuvet's thin main: parse, dispatch, and turn errors into advice and an exit code.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>
#include <string_view>
#include <unistd.h>

#include "cli/common.hpp"
#include "cli/fleet_cmd.hpp"
#include "cli/fleet_run.hpp"
#include "cli/history_cmd.hpp"
#include "cli/number_option.hpp"
#include "cli/output_guard.hpp"
#include "cli/suggest.hpp"
#include "core/error.hpp"
#include "core/text_safety.hpp"
#include "core/input_file.hpp"
#include "gpu/bindings/driver_deadline.hpp"
#include "gpu/bindings/driver_exit.hpp"

using namespace gpuvet;

namespace {

// Every command, registered on the app; the ones that call a GPU library take the driver budget.
void register_commands(CLI::App& app, Cli cli) {
    app.name("gpuvet");
    app.set_version_flag("--version", std::string("gpuvet ") + GPUVET_VERSION);
    app.require_subcommand(1);
    app.footer(
        "Examples:\n"
        "  gpuvet check --expect \"8x H100-SXM-80GB\"   go/no-go acceptance test against the order\n"
        "  gpuvet inventory                           what the driver reports about every GPU\n"
        "  gpuvet bench memory                        one GPU measurement (memory, fp, gemm, p2p...)\n"
        "  gpuvet host storage --data-dir /data       the host that feeds the GPUs\n"
        "  gpuvet plan --model llama-3-70b --task lora  VRAM, cards, speed and cost of a workload\n"
        "  gpuvet specs compare a100 h100             datasheets side by side, with ratios\n"
        "  gpuvet top                                 live monitor of the GPUs (q quits)\n"
        "  gpuvet export                              Prometheus metrics on 127.0.0.1:9400 (dcgm-exporter names)\n"
        "  gpuvet history                             the boxes and GPUs seen over time; trend, diff, swaps\n"
        "Run 'gpuvet <command> --help' for a command's options and examples.");
    add_check_command(cli);
    add_specs_command(cli);
    add_inventory_command(cli);
    add_host_command(cli);
    add_plan_command(cli);
    add_bench_command(cli);
    add_burn_command(cli);
    add_top_command(cli);
    add_export_command(cli);
    add_report_command(cli);
    add_compare_command(cli);
    add_run_command(cli);
    add_fleet_command(cli);
    add_history_command(cli);
    for (const char* name : {"check", "inventory", "bench", "burn", "top", "export", "run"})
        add_driver_timeout_option(*app.get_subcommand(name), cli.global);
    for (CLI::App* part : app.get_subcommand("fleet")->get_subcommands({}))
        add_driver_timeout_option(*part, cli.global);
}

// A command line CLI11 refused: the fix if one is close, exit 2 (a Slurm prolog lets the job run).
int usage_error(CLI::App& app, GlobalOptions& global, const CLI::ParseError& e, int argc, char** argv) {
    // Slurm drains a node whose Prolog exits nonzero: a prolog the tool could not even parse
    // says why in the log and lets the job run.
    if (is_prolog_invocation(argc, argv)) return prolog_tool_error(e.what());
    std::string msg = e.what();
    if (auto hint = suggest_fix(app, argc, argv)) msg = *hint;
    // CLI11 may stop before it reaches --json: the argument list still says what was asked for.
    for (int i = 1; i < argc && std::string_view(argv[i]) != "--"; ++i)
        if (std::string_view(argv[i]) == "--json") global.json = true;
    std::cerr << "gpuvet: " << terminal_safe(msg) << "\n";
    if (!global.json) std::cerr << "Run 'gpuvet --help' for usage.\n";
    emit_fatal_json(global, "usage", msg, "run 'gpuvet --help' for usage", exit_code::bad_input);
    return finish_output(exit_code::bad_input);
}

// The boundary where typed errors become advice and an exit code.
int run_action(const GlobalOptions& global, const Action& action) {
    try {
        rethrow_option_error();  // a numeric option its rule refused, kept from parse()
        apply_driver_timeout(global);
        if (std::string bad = driver_timeout_env_problem(); !bad.empty())
            throw Error(ErrorKind::Input, bad,
                        "give the seconds a driver call may take, e.g. GPUVET_DRIVER_TIMEOUT_S=30");
        return action ? action() : exit_code::bad_input;
    } catch (const Error& e) {
        std::cerr << "gpuvet: " << terminal_safe(e.what()) << "\n";
        if (!e.advice().empty()) std::cerr << "  → " << terminal_safe(e.advice()) << "\n";
        int code = exit_code_for(e.kind());
        emit_fatal_json(global, to_string(e.kind()), e.what(), e.advice(), code);
        return code;
    } catch (const std::exception& e) {
        std::cerr << "gpuvet: internal error: " << terminal_safe(e.what()) << "\n";
        emit_fatal_json(global, "internal", e.what(), "please report this", exit_code::could_not_run);
        return exit_code::could_not_run;
    }
}

// A driver call that never returned still runs on a thread of its own: the driver's atexit
// handlers and nvmlShutdown would wait for it. The report is written; leave without them.
int leave(int code) {
    if (exit_without_teardown()) {
        std::cout.flush();
        std::cerr.flush();
        std::fflush(nullptr);
        _exit(code);
    }
    return code;
}

}  // namespace

int main(int argc, char** argv) {
    guard_standard_streams();
    GlobalOptions global;
    for (int i = 0; i < argc; ++i) global.argv.emplace_back(argv[i]);
    Action action;
    CLI::App app{"gpuvet — measure a GPU server against what was promised"};
    register_commands(app, Cli{app, global, action});
    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForVersion& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        return usage_error(app, global, e, argc, argv);
    }
    install_stop_handlers(::isatty(STDERR_FILENO) != 0);
    set_input_stop_flag(&stop_flag());
    int code = finish_output(run_action(global, action));
    if (code != exit_code::ok && code != exit_code::check_failed && is_prolog_invocation(argc, argv))
        code = prolog_tool_error("gpuvet would have exited " + std::to_string(code) + ", for the reason above");
    return leave(code);
}
