// gpuvet compare: offers side by side (check reports of different servers, value per money with
// --prices), or --fleet DIR: many nodes' reports, outliers and one NHC-style line per node.
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <set>

#include "cli/common.hpp"
#include "cli/compare_run_fleet.hpp"
#include "core/atomic_file.hpp"
#include "core/text_safety.hpp"
#include "core/error.hpp"
#include "core/input_file.hpp"
#include "compare/run_compare.hpp"
#include "plan/planned_job.hpp"
#include "plan/rates_sources.hpp"
#include "report/fleet_reader.hpp"
#include "report/fleet_view.hpp"
#include "report/offer_workload_view.hpp"
#include "report/offers_view.hpp"
#include "core/report_reader.hpp"
#include "report/run_compare_view.hpp"
#include "report/run_report_reader.hpp"
#include "report/style.hpp"
#include "specs/spec_db.hpp"

namespace gpuvet {

namespace {

namespace fs = std::filesystem;

struct CompareArgs {
    std::vector<std::string> files;
    std::optional<std::string> prices;
    std::optional<std::string> fleet;
    std::optional<std::string> output;
    std::optional<std::string> workload;
    bool html = false;
    bool nhc = false;
};

// The kinds of document whose checks compare: a `run` report's comparison is its own.
bool comparable_kind(const std::string& kind) { return kind == "check" || kind == "burn" || kind == "bench"; }

std::vector<std::string> fleet_files(const std::string& dir) {
    std::error_code ec;
    if (!fs::is_directory(dir, ec))
        throw usage_error("--fleet " + dir + ": not a folder", "give the folder that holds the nodes' JSON reports");
    std::vector<std::string> out;
    for (auto& e : fs::directory_iterator(dir, ec)) {
        std::error_code probe;  // an entry that cannot be looked at is not a report: the listing goes on
        if (e.path().extension() == ".json" && e.is_regular_file(probe)) out.push_back(e.path().string());
        // A node's folder, as --report DIR writes one per node under a Slurm step of several tasks.
        if (e.is_directory(probe))
            for (const char* name : {"gpuvet-run.json", "gpuvet-report.json"})
                if (fs::is_regular_file(e.path() / name, probe)) out.push_back((e.path() / name).string());
    }
    if (ec) throw usage_error("--fleet " + dir + ": " + ec.message(), "give a readable folder");
    std::sort(out.begin(), out.end());
    return out;
}

// Reads every input, refusing duplicates, documents of other kinds and mixed kinds, before any
// output is written.
std::vector<OfferInput> read_inputs(const std::vector<std::string>& files) {
    std::vector<OfferInput> out;
    std::set<std::string> seen_paths;
    std::map<std::string, std::string> seen_text;  // content -> the file that had it
    std::string kind0, file0;
    for (auto& f : files) {
        std::error_code ec;
        std::string canon = fs::weakly_canonical(f, ec).string();
        if (!seen_paths.insert(ec ? f : canon).second)
            throw usage_error(f + " is given twice", "name each report once");
        std::string text = read_input_file(f, "report", kReportFileLimitBytes);
        auto [it, fresh] = seen_text.emplace(text, f);
        if (!fresh)
            throw input_error(f + " and " + it->second + " are the same report",
                              "each offer or node needs its own report: run gpuvet check on each server");
        ReportDocument doc = read_document(text, f);
        const std::string& kind = doc.kind;
        if (kind == "run")
            throw input_error(f + " is a run report among check reports",
                              "compare two run reports alone, or check reports alone");
        if (!comparable_kind(kind))
            throw input_error(f + ": a '" + kind + "' document, not a check report",
                              "compare the JSON that 'gpuvet check --json' or --report DIR wrote");
        if (kind0.empty()) kind0 = kind, file0 = f;
        else if (kind != kind0)
            throw input_error(f + " is a '" + kind + "' report, " + file0 + " a '" + kind0 + "' report",
                              "compare reports of one kind");
        std::string name = fs::path(f).stem().string();
        if (!doc.report)
            throw input_error(f + ": this " + kind + " document holds no checks",
                              "compare the JSON that 'gpuvet check --json' or --report DIR wrote");
        out.push_back({name, f, std::move(*doc.report)});
    }
    // Two files of one name in different folders: their paths tell them apart.
    std::set<std::string> names;
    bool clash = false;
    for (auto& in : out) clash = clash || !names.insert(in.name).second;
    if (clash)
        for (auto& in : out) in.name = in.path;
    return out;
}

// Each offer's measured rates, taken from its report as `gpuvet plan --measured` takes them (each file is
// read once), and the job planned on them.
WorkloadComparison workload_on_inputs(const GlobalOptions& g, const PlannedJob& job,
                                      const std::vector<OfferInput>& inputs, const PriceTable* prices) {
    SpecDb db = load_specs(g);
    std::vector<OfferRates> rates;
    for (const OfferInput& in : inputs) rates.push_back({in.name, measured_rates(in.report, in.path, db)});
    return plan_on_offers(job, db, rates, prices);
}

void add_workload_section(std::string& text, const WorkloadComparison& w, bool markdown, bool html) {
    if (markdown) text += workload_markdown(w);
    else if (html) text.insert(text.rfind("</body>"), workload_html(w));
    else text += workload_terminal(w);
}

bool is_run_report(const std::string& file) {
    return document_kind(read_input_file(file, "report", kReportFileLimitBytes), file) == "run";
}

int compare_runs_cmd(const GlobalOptions& g, const CompareArgs& a) {
    if (a.files.size() != 2)
        throw usage_error("run reports compare two at a time (" + std::to_string(a.files.size()) + " given)",
                          "gpuvet compare a/gpuvet-run.json b/gpuvet-run.json");
    if (a.prices || a.fleet || a.nhc || a.html || g.markdown || a.workload)
        throw usage_error("--prices, --fleet, --nhc, --html, --markdown and --workload are for check reports",
                          "compare two run reports in the terminal or with --json");
    std::error_code ec;
    if (fs::weakly_canonical(a.files[0], ec) == fs::weakly_canonical(a.files[1], ec))
        throw usage_error(a.files[0] + " is given twice", "name each report once");
    std::vector<RunResult> runs;
    std::vector<std::string> labels;
    for (auto& f : a.files) {
        std::string text = read_input_file(f, "report", kReportFileLimitBytes);
        if (document_kind(text, f) != "run")
            throw input_error(f + " is not a run report, the other one is",
                              "compare two reports that 'gpuvet run --report DIR' wrote");
        runs.push_back(read_run_report(text, f));
        // A run's --tag names it; otherwise its folder, since every run writes gpuvet-run.json.
        std::string folder = fs::path(f).parent_path().filename().string();
        labels.push_back(!runs.back().tag.empty() ? runs.back().tag
                         : !folder.empty()        ? folder
                                                  : fs::path(f).stem().string());
    }
    if (labels[0] == labels[1]) labels = a.files;
    RunComparison c = compare_runs(runs[0], runs[1], labels[0], labels[1]);
    std::string text = g.json ? render_run_comparison_json(c, finished_envelope(g))
                              : render_run_comparison(c, a.output ? Style{} : detect_style(g.no_color));
    if (!g.json) text = terminal_safe(text);  // tags and labels come from the reports
    if (a.output) write_file_atomically(*a.output, text);
    else std::cout << text;
    // A job that failed is a finding: the two machines could not be compared.
    return c.not_comparable.empty() ? exit_code::ok : exit_code::check_failed;
}

// Every node's report is read and summarised in turn (never all at once); one bad report is that
// node's ERROR line, not the fleet's end.
int compare_fleet(const GlobalOptions& g, const CompareArgs& a) {
    std::vector<std::string> files = fleet_files(*a.fleet);
    if (files.empty())
        throw usage_error("--fleet " + *a.fleet + ": no .json report in it",
                          "put the nodes' JSON reports (gpuvet check --json) into the folder");
    bool runs = false;
    try {
        runs = is_run_report(files.front());
    } catch (const Error& e) {
        if (e.kind() == ErrorKind::Runtime) throw;  // an unreadable first report is that node's line below
    }
    if (runs) {
        if (g.markdown || a.html || a.nhc || a.output)
            throw usage_error("--markdown, --html, --nhc and -o are for a fleet of check reports",
                              "compare a fleet of run reports in the terminal or with --json");
        return compare_run_fleet(g, files, g.json);
    }
    Fleet f = analyse_fleet(read_fleet_files(files));
    if (files.size() < kOutlierMinNodes)
        f.notes.push_back(std::to_string(files.size()) + " report(s): outliers need " +
                          std::to_string(kOutlierMinNodes) + " nodes or more, each node is judged alone");
    Envelope env = finished_envelope(g);
    Style st = a.output ? Style{} : detect_style(g.no_color);
    std::string text = g.json       ? render_fleet_json(f, env)
                       : g.markdown ? render_fleet_markdown(f)
                       : a.html     ? render_fleet_html(f)
                       : a.nhc      ? render_fleet_nhc(f)
                                    : render_fleet_terminal(f, st);
    if (!g.json && !a.html) text = terminal_safe(text);  // names and problems come from the reports' folder
    if (a.output) write_file_atomically(*a.output, text);
    else std::cout << text;
    return fleet_exit_code(f);
}

int run_compare(const GlobalOptions& g, const CompareArgs& a) {
    if (!a.fleet && !a.files.empty() && is_run_report(a.files[0])) return compare_runs_cmd(g, a);
    if (a.fleet && !a.files.empty())
        throw usage_error("--fleet and report files both given", "give either files to compare or --fleet DIR");
    if (a.fleet && a.prices)
        throw usage_error("--prices with --fleet", "a fleet is one model at one price: compare offers without --fleet");
    if (a.nhc && !a.fleet) throw usage_error("--nhc without --fleet", "use --fleet DIR --nhc");
    if (a.workload && a.fleet)
        throw usage_error("--workload with --fleet",
                          "a planned job compares offers: gpuvet compare a.json b.json --workload job.json");
    int formats = int(g.json) + int(g.markdown) + int(a.html) + int(a.nhc);
    if (formats > 1)
        throw usage_error("more than one output format", "choose one of --json, --markdown, --html, --nhc");
    if (a.fleet) return compare_fleet(g, a);
    std::vector<std::string> files = a.files;
    if (files.size() < 2)
        throw usage_error("compare needs at least two reports", "gpuvet compare a.json b.json [--prices prices.toml]");
    // Everything is read and judged before anything is printed or written: bad input leaves no file.
    std::map<std::string, double> prices;
    std::string currency;
    std::optional<PriceTable> table;
    if (a.prices) {
        table = read_prices(*a.prices, load_specs(g));
        prices = table->per_card_hour;
        currency = table->currency;
    }
    std::optional<PlannedJob> job;
    if (a.workload)
        job = parse_planned_job(read_input_file(*a.workload, "--workload", kReportFileLimitBytes), *a.workload);
    std::vector<OfferInput> inputs = read_inputs(files);
    std::optional<WorkloadComparison> planned;
    if (job) planned = workload_on_inputs(g, *job, inputs, table ? &*table : nullptr);
    Envelope env = finished_envelope(g);
    std::string text;
    int code = exit_code::ok;
    Style st = a.output ? Style{} : detect_style(g.no_color);
    {
        OfferComparison c = compare_offers(std::move(inputs), prices, currency);
        text = g.json       ? render_offers_json(c, env, planned ? workload_to_json(*planned) : Json())
                     : g.markdown ? render_offers_markdown(c)
               : a.html     ? render_offers_html(c)
                            : render_offers_terminal(c, st);
        if (planned && !g.json) add_workload_section(text, *planned, g.markdown, a.html);
    }
    if (!a.html && !g.json) text = terminal_safe(text);  // HTML and JSON escape their own text
    if (a.output) write_file_atomically(*a.output, text);
    else std::cout << text;
    return code;
}

}  // namespace

void add_compare_command(Cli cli) {
    auto* sub =
        cli.app.add_subcommand("compare", "Offers side by side by measured value per money, or a fleet's outliers");
    auto args = std::make_shared<CompareArgs>();
    sub->add_option("reports", args->files, "check reports (JSON) of the offers to compare, or two run reports")
        ->type_name("FILE.json");
    sub->add_option("--prices", args->prices, "TOML price file: [prices] \"GPU name\" = price per card-hour")
        ->type_name("FILE");
    sub->add_option("--fleet", args->fleet, "a folder of many nodes' check reports of one GPU model")->type_name("DIR");
    sub->add_option("--workload", args->workload,
                    "a planned job ('gpuvet plan ... --json' output): its time and cost on each offer's measured rates")
        ->type_name("FILE.json");
    sub->add_flag("--json", cli.global.json, "the comparison as a JSON document");
    sub->add_flag("--markdown", cli.global.markdown, "Markdown for a ticket or chat");
    sub->add_flag("--html", args->html, "a self-contained HTML page");
    sub->add_flag("--nhc", args->nhc,
                  "with --fleet: only the NHC-style lines, 'node | Healthy' or 'node | ERROR: ...'");
    sub->add_option("-o,--output", args->output,
                    "write to FILE instead of stdout: a file (or a link's target) is replaced atomically, a device or "
                    "FIFO written through, a directory refused (docs/reports.md)")
        ->type_name("FILE");
    sub->add_flag("--no-color", cli.global.no_color, "no colour (colour is used only on a terminal)");
    sub->add_option("--specs", cli.global.specs_files, "add or override GPU SKUs from a TOML file (for --prices)")
        ->type_name("FILE")
        ->check(CLI::ExistingFile);
    sub->footer(
        "Examples:\n"
        "  gpuvet compare a.json b.json --prices prices.toml   the better offer per money, and why\n"
        "  gpuvet compare a.json b.json --workload job.json --prices prices.toml   the planned job on each offer\n"
        "  gpuvet compare --fleet reports/ --nhc                one line per node for a scheduler\n"
        "  gpuvet compare a/gpuvet-run.json b/gpuvet-run.json   the same job on two servers: which was faster, why\n"
        "Exit codes: 0 compared (with --fleet: every node healthy), 1 --fleet found a node not healthy,\n"
        "1 a run report's job failed, was killed or stopped (not compared), 2 bad input, 3 --fleet: a node's report\n"
        "is missing or unusable (its line says why).");
    on_chosen(cli, *sub, "compare", [args](const GlobalOptions& g) { return run_compare(g, *args); });
}

}  // namespace gpuvet
