#include "cli/common.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <iostream>
#include <sstream>

#include "cli/number_option.hpp"
#include "cli/output_guard.hpp"
#include "core/atomic_file.hpp"
#include "core/text_safety.hpp"
#include "core/error.hpp"
#include "core/slurm_env.hpp"
#include "gpu/bindings/driver_deadline.hpp"
#include "report/html_report.hpp"
#include "report/json.hpp"
#include "report/slurm_json.hpp"
#include "report/markdown.hpp"
#include "report/style.hpp"
#include "report/terminal.hpp"
#include "specs/spec_db.hpp"

namespace gpuvet {

namespace {
// When the report was started, on the monotonic clock: duration_s must not follow wall-clock steps.
// When the chosen command started: every document's envelope counts from here.
std::chrono::steady_clock::time_point g_report_started = std::chrono::steady_clock::now();
std::string g_started_at;
}  // namespace

std::string utc_now_rfc3339() {
    std::time_t t = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

void add_output_flags(CLI::App& sub, GlobalOptions& g, OutputFlags with) {
    sub.add_flag("--json", g.json, "print the machine-readable JSON document on stdout");
    if (with.report)
        sub.add_option(
               "--report", g.report_dir,
               "also write the report files into DIR (DIR/<node>/ for each task of a Slurm step of several tasks)")
            ->type_name("DIR");
    sub.add_flag("--no-color", g.no_color, "no colour (colour is used only on a terminal)");
    if (with.report) {
        sub.add_flag("-v,--verbose", g.verbose, "show every measurement and finding, also of passing checks");
        sub.add_flag("--markdown", g.markdown, "print Markdown (verdict, matrix, failures) for a ticket or chat")
            ->excludes("--json");
    }
    if (with.specs)
        sub.add_option("--specs", g.specs_files, "add or override GPU SKUs from a TOML file")
            ->type_name("FILE")
            ->check(CLI::ExistingFile);
}

SpecDb load_specs(const GlobalOptions& g) {
    SpecDb db = SpecDb::embedded();
    for (auto& f : g.specs_files) db.merge_file(f);
    return db;
}

Envelope new_envelope(const GlobalOptions& g) {
    Envelope e;
    e.tool_version = GPUVET_VERSION;
    e.command = g.command;
    e.argv = g.argv;
    e.started_at = g_started_at.empty() ? utc_now_rfc3339() : g_started_at;
    return e;
}

Envelope finished_envelope(const GlobalOptions& g) {
    Envelope e = new_envelope(g);
    close_envelope(e);
    return e;
}

void close_envelope(Envelope& e) {
    e.finished_at = utc_now_rfc3339();
    e.duration_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - g_report_started).count();
}

// A report's JSON with the Slurm job, step, node and GPU variables of this process, when it runs
// under Slurm: what a fleet's node reports are told apart by.
static std::string report_json_text(const Report& r) {
    Json j = to_json(r);
    auto slurm = slurm_context();
    j["slurm"] = slurm ? slurm_to_json(*slurm) : Json(nullptr);
    return j.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

Report new_report(const GlobalOptions& g) {
    Report r;
    static_cast<Envelope&>(r) = new_envelope(g);
    return r;
}

std::filesystem::path report_folder(const std::string& dir) {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec)
        throw runtime_error("cannot create report folder " + dir + ": " + ec.message(),
                            "choose a writable folder for --report");
    return dir;
}

// The same bounds as GPUVET_DRIVER_TIMEOUT_S (driver_deadline.cpp): above 0, at most a day.
constexpr NumberRule kDriverTimeoutRule{.min = 0,
                                        .max = 86400,
                                        .min_open = true,
                                        .unit = NumberUnit::Seconds,
                                        .what = "a driver call's budget",
                                        .example = "30"};

void add_driver_timeout_option(CLI::App& sub, GlobalOptions& g) {
    add_number_option(sub, "--driver-timeout", g.driver_timeout_s, kDriverTimeoutRule,
                      "seconds a driver call may take before it is abandoned and its GPU named as wedged (default "
                      "30, or GPUVET_DRIVER_TIMEOUT_S); calls that wait for GPU work get ten times as long");
}

void apply_driver_timeout(const GlobalOptions& g) {
    if (!g.driver_timeout_s) return;
    set_driver_timeout_s(*g.driver_timeout_s);
    // A gpuvet started from this one (fleet's node-side `gpuvet check`) reads the environment.
    char text[32];
    std::snprintf(text, sizeof text, "%.17g", *g.driver_timeout_s);
    ::setenv(kEnvDriverTimeout, text, 1);
}

Tier tier_from_flags(bool quick, bool full) { return quick ? Tier::Quick : full ? Tier::Full : Tier::Standard; }

void on_chosen(Cli cli, CLI::App& sub, std::string name, std::function<int(const GlobalOptions&)> run,
               bool after_parts) {
    auto chosen = [&g = cli.global, &action = cli.action, name = std::move(name), run = std::move(run)] {
        g.command = name;
        action = [&g, run] {
            g_report_started = std::chrono::steady_clock::now();
            g_started_at = utc_now_rfc3339();
            if (g.report_dir) {
                // One of several tasks of a Slurm step: its own folder of DIR, named by its node.
                if (auto sub = slurm_report_subfolder())
                    g.report_dir = (std::filesystem::path(*g.report_dir) / *sub).string();
                claim_report_dir(*g.report_dir);  // before anything is measured
            }
            return run(g);
        };
    };
    if (after_parts) sub.final_callback(chosen);
    else sub.callback(chosen);
}

namespace {

// A driver call abandoned at its deadline (gpu/bindings/driver_deadline.hpp) is an ERROR of its
// own, whatever the checks made of the facts it left absent: such a run is never GO.
void add_driver_wedges(Report& r) {
    if (!any_driver_wedged()) return;
    std::istringstream lines(driver_wedge_summary());
    for (std::string line; std::getline(lines, line);) {
        CheckResult c;
        c.key = "gpu.driver_answers";
        c.title = "Driver answers in time";
        c.verdict = Verdict::Error;
        c.summary = line;
        if (line.starts_with("GPU ")) c.gpu = std::atoi(line.c_str() + 4);
        r.checks.push_back(std::move(c));
    }
}

}  // namespace

int emit_report(Report& r, const GlobalOptions& g, const history::BoxHistory* history) {
    close_envelope(r);
    add_driver_wedges(r);
    r.finalize();
    if (g.report_dir) {
        std::filesystem::path dir = report_folder(*g.report_dir);
        write_file_atomically(dir / "gpuvet-report.json", report_json_text(r));
        write_file_atomically(dir / "gpuvet-report.txt", terminal_safe(render_scorecard(r, Style{false, 100, true})));
        write_file_atomically(dir / "report.md", render_markdown(r));
        write_file_atomically(dir / "report.html", render_html(r, history));
    }
    if (g.json) std::cout << report_json_text(r);
    else if (g.markdown) std::cout << render_markdown(r);
    else {
        Style st = detect_style(g.no_color);
        st.verbose = g.verbose;
        std::cout << terminal_safe(render_terminal(r, st));
    }
    std::cout.flush();
    return r.exit_code;
}

void emit_fatal_json(const GlobalOptions& g, const std::string& kind, const std::string& message,
                     const std::string& advice, int exit_code) {
    if (!g.json) return;
    Report r = new_report(g);
    r.fatal = ReportError{"gpuvet", kind, message, advice};
    r.finished_at = r.started_at;
    r.finalize();
    r.exit_code = exit_code;
    std::cout << report_json_text(r);
}

}  // namespace gpuvet
