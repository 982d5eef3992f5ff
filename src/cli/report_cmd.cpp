// gpuvet report FILE.json: prints a report written earlier (or on another machine) again, as the
// terminal scorecard, Markdown or the self-contained HTML page.
#include <iostream>

#include "cli/common.hpp"
#include "core/atomic_file.hpp"
#include "core/text_safety.hpp"
#include "core/error.hpp"
#include "core/input_file.hpp"
#include "report/html_report.hpp"
#include "report/markdown.hpp"
#include "core/report_reader.hpp"
#include "report/run_html.hpp"
#include "report/run_markdown.hpp"
#include "report/run_report_reader.hpp"
#include "report/run_view.hpp"
#include "report/style.hpp"
#include "report/terminal.hpp"

namespace gpuvet {

namespace {

struct ReportArgs {
    std::string file;
    bool html = false;
    bool markdown = false;
    std::optional<int> width;
    std::optional<std::string> output;
};

Style terminal_style(const GlobalOptions& g, const ReportArgs& a) {
    Style st = a.output ? Style{} : detect_style(g.no_color);
    if (a.width) st.width = *a.width;
    st.verbose = g.verbose;
    return st;
}

// A run report (gpuvet run --report DIR) has its own pages: the diagnosis, not a matrix of checks.
std::string render_run_document(const GlobalOptions& g, const ReportArgs& a, const std::string& json) {
    RunReportDoc d = read_run_report_doc(json, a.file);
    if (a.html) return render_run_html(d.envelope, d.run, d.series);
    if (a.markdown) return render_run_markdown(d.envelope, d.run);
    return render_run_summary(d.run, terminal_style(g, a));
}

int run_report(const GlobalOptions& g, const ReportArgs& a) {
    std::string json = read_input_file(a.file, "report", kReportFileLimitBytes);
    std::string text;
    if (document_kind(json, a.file) == "run") text = render_run_document(g, a, json);
    else {
        Report r = parse_report(json, a.file);
        if (a.html) text = render_html(r);
        else if (a.markdown) text = render_markdown(r);
        else text = render_terminal(r, terminal_style(g, a));
    }
    if (!a.html) text = terminal_safe(text);  // HTML escapes its own text
    if (a.output) write_file_atomically(*a.output, text);
    else std::cout << text;
    return exit_code::ok;
}

}  // namespace

void add_report_command(Cli cli) {
    auto* sub = cli.app.add_subcommand("report", "Print a saved JSON report again: scorecard, Markdown or HTML");
    auto args = std::make_shared<ReportArgs>();
    sub->add_option("file", args->file,
                    "a JSON report 'gpuvet check --json', check --report DIR or run --report DIR wrote")
        ->required()
        ->type_name("FILE.json");
    auto* html = sub->add_flag("--html", args->html, "the self-contained HTML page (no network, inline SVG charts)");
    sub->add_flag("--markdown", args->markdown, "Markdown for a ticket or chat: verdict, matrix, failures")
        ->excludes(html);
    sub->add_option("--width", args->width, "terminal columns for the scorecard (40-400; default: the terminal's)")
        ->check(CLI::Range(40, 400));
    sub->add_option("-o,--output", args->output,
                    "write to FILE instead of stdout: a file (or a link's target) is replaced atomically, a device or "
                    "FIFO written through, a directory refused (docs/reports.md)")
        ->type_name("FILE");
    sub->add_flag("--no-color", cli.global.no_color, "no colour (colour is used only on a terminal)");
    sub->add_flag("-v,--verbose", cli.global.verbose, "the full scorecard: every measurement of every result");
    sub->footer(
        "Examples:\n"
        "  gpuvet report box.json                  the compact scorecard again\n"
        "  gpuvet report box.json --html -o box.html   a page to attach to a ticket\n"
        "  gpuvet report box.json --markdown       paste into a ticket or chat\n"
        "  gpuvet report out/gpuvet-run.json --html -o run.html   a trial run's diagnosis and timeline\n"
        "Exit codes: 0 printed, 2 the file is not a report this build reads.");
    on_chosen(cli, *sub, "report", [args](const GlobalOptions& g) { return run_report(g, *args); });
}

}  // namespace gpuvet
