// What every command shares: the global flags, the report header, the output step.
#pragma once
#include <CLI/CLI.hpp>
#include <atomic>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/context.hpp"
#include "core/interrupt.hpp"  // stop_flag(): Ctrl-C / SIGTERM
#include "core/result.hpp"

namespace gpuvet::history {
struct BoxHistory;
}

namespace gpuvet {

class SpecDb;
struct Inventory;

struct GlobalOptions {
    bool json = false;                      // the machine-readable document on stdout
    std::optional<std::string> report_dir;  // write report files there
    bool no_color = false;
    bool verbose = false;                  // scorecard: every measurement and detail
    bool markdown = false;                 // Markdown on stdout instead of the scorecard
    std::vector<std::string> specs_files;  // --specs FILE (repeatable)
    std::vector<std::string> argv;
    std::string command;                     // the subcommand that ran
    std::optional<double> driver_timeout_s;  // --driver-timeout (gpu/bindings/driver_deadline.hpp)
};

// A command registers its subcommand and sets `action`; main runs it after parsing.
using Action = std::function<int()>;

struct Cli {
    CLI::App& app;
    GlobalOptions& global;
    Action& action;
};

// --driver-timeout SECONDS on a command that calls the GPU libraries: the budget of one driver call
// (GPUVET_DRIVER_TIMEOUT_S as an option, the same range). Every such command takes it; main adds it
// to them all (and to fleet's parts, whose node-side checks inherit it through the environment).
void add_driver_timeout_option(CLI::App& sub, GlobalOptions& g);
// Puts the option in force, before the command runs: here and in every gpuvet this one starts.
void apply_driver_timeout(const GlobalOptions& g);

// The tier the --quick and --full flags choose (neither: standard).
Tier tier_from_flags(bool quick, bool full);

// Registers what runs when `sub` is chosen: `name` becomes the report's command. `after_parts`:
// wait until the subcommand's own subcommands were parsed (final_callback).
void on_chosen(Cli cli, CLI::App& sub, std::string name, std::function<int(const GlobalOptions&)> run,
               bool after_parts = false);

void add_check_command(Cli cli);
void add_specs_command(Cli cli);
void add_inventory_command(Cli cli);
void add_host_command(Cli cli);
void add_plan_command(Cli cli);
void add_bench_command(Cli cli);
void add_burn_command(Cli cli);
void add_top_command(Cli cli);
void add_export_command(Cli cli);  // gpuvet export: Prometheus metrics
void add_report_command(Cli cli);
void add_compare_command(Cli cli);
void add_run_command(Cli cli);

// Adds --json, --report, --no-color (and --specs when `with_specs`) to a subcommand.
// Which of the shared output options a command takes besides --json and --no-color.
struct OutputFlags {
    bool report = true;  // --report DIR, -v/--verbose, --markdown: commands that write a check report
    bool specs = true;   // --specs FILE: commands that read the GPU spec database
};
void add_output_flags(CLI::App& sub, GlobalOptions& g, OutputFlags with = {});

// The spec database with the user's --specs files merged in.
SpecDb load_specs(const GlobalOptions& g);

// The envelope of a document this command writes: version, command, argv, the command's start
// time. close_envelope() stamps the end time and the duration; finished_envelope() does both.
Envelope new_envelope(const GlobalOptions& g);
void close_envelope(Envelope& e);
Envelope finished_envelope(const GlobalOptions& g);
// A report whose envelope starts now.
Report new_report(const GlobalOptions& g);

// Creates the --report folder (and its parents); throws a Runtime error with advice when it cannot.
std::filesystem::path report_folder(const std::string& dir);

// Prints the report (JSON or scorecard), writes --report files atomically, returns the exit code.
// `history`: the box's earlier runs, a section of the HTML report when given.
int emit_report(Report& r, const GlobalOptions& g, const history::BoxHistory* history = nullptr);

// For a fatal error: when --json was asked for, a valid JSON document carrying the error.
void emit_fatal_json(const GlobalOptions& g, const std::string& kind, const std::string& message,
                     const std::string& advice, int exit_code);

std::string utc_now_rfc3339();

// "0,1,3" -> {0, 1, 3} for --gpus; a bad item is a usage error. check_gpu_indexes() rejects an
// index the inventory does not list (when it lists any).
std::vector<int> parse_gpu_list(const std::string& s);
void check_gpu_indexes(const std::vector<int>& gpus, const Inventory& inv);
// "a,b" -> {"a", "b"}, empty items dropped.
std::vector<std::string> split_commas(const std::string& s);

}  // namespace gpuvet
