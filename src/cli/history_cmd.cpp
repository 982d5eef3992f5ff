// gpuvet history: the boxes and GPUs seen, a box's or a GPU's runs, a figure over time, a run
// against an earlier one, the export, and the import of saved reports (docs/history.md).
#include "cli/history_cmd.hpp"

#include <filesystem>
#include <iostream>

#include "cli/common.hpp"
#include "cli/history_record.hpp"
#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/text_safety.hpp"
#include "history/diff.hpp"
#include "history/queries.hpp"
#include "history/store.hpp"
#include "report/history_view.hpp"
#include "core/report_reader.hpp"

namespace gpuvet {

namespace {

struct HistoryArgs {
    std::string part;  // "" (the list), show, trend, diff, export, import
    std::optional<std::string> db;
    std::string what;                     // show BOX|GPU
    std::string metric;                   // trend METRIC
    std::optional<std::string> gpu, box;  // trend --gpu / --box; diff's box
    std::optional<std::string> html;      // trend --html FILE
    std::string against = "previous";     // diff --against previous|first
    std::string format;                   // export --format csv|jsonl
    std::optional<std::string> output;    // export --output FILE
    std::vector<std::string> files;       // import FILE...
};

std::filesystem::path db_path(const HistoryArgs& a) {
    std::string why;
    auto p = history::history_path(a.db, &why);
    if (!p) throw usage_error("no history database: " + why, "name one with --history-db FILE or GPUVET_HISTORY_DB");
    history::require_database_file(*p);
    return *p;
}

// Reading needs a database that exists: a missing one is said plainly, not created empty.
history::Store open_existing(const HistoryArgs& a) {
    auto p = db_path(a);
    std::error_code ec;
    if (!std::filesystem::exists(p, ec))
        throw input_error("no history at " + p.string(),
                          "run `gpuvet check` (it records each run) or `gpuvet history import FILE.json`, or name "
                          "another file with --history-db");
    return history::Store(p, false);
}

int print(const GlobalOptions& g, const Json& body, const std::string& text) {
    if (g.json) std::cout << render_document(finished_envelope(g), body);
    else std::cout << terminal_safe(text);  // hostnames, GPU names, serials and SMBIOS ids come from the database
    return exit_code::ok;
}

int list(const GlobalOptions& g, const HistoryArgs& a) {
    auto store = open_existing(a);
    auto boxes = history::list_boxes(store.db());
    auto gpus = history::list_gpus(store.db());
    auto moves = history::hostname_changes(store.db());
    return print(g, history_list_json(boxes, gpus, moves), render_history_list(boxes, gpus, moves));
}

std::vector<ShownRun> shown(history::Database& db, const std::vector<history::RunRow>& runs,
                            const std::optional<std::string>& only_gpu) {
    std::vector<ShownRun> out;
    for (const auto& r : runs) {
        ShownRun s{r, {}, {}};
        // A trial run's figures have no spec: its utilization, power and temperature are its key figures.
        bool all = r.command == "run";
        for (auto& f : history::snapshot(db, r.id).figures)
            if ((all || f.spec || f.fail_below || f.fail_above) && (!only_gpu || f.gpu == only_gpu))
                s.figures.push_back(f);
        if (all) s.findings = history::findings_of(db, r.id);
        out.push_back(std::move(s));
    }
    return out;
}

int show(const GlobalOptions& g, const HistoryArgs& a) {
    auto store = open_existing(a);
    auto& db = store.db();
    if (auto gpu = history::find_gpu(db, a.what)) {
        std::optional<std::string> key;
        for (auto& row : history::list_gpus(db))
            if (row.id == *gpu) key = row.key;
        auto runs = shown(db, history::runs_of_gpu(db, *gpu), key);
        std::string title = "GPU " + a.what;
        return print(g, history_show_json(title, runs), render_history_show(title, runs));
    }
    if (auto box = history::find_box(db, a.what)) {
        auto runs = shown(db, history::runs_of_box(db, *box), std::nullopt);
        std::string title = runs.empty() ? a.what : runs.front().run.box;
        return print(g, history_show_json(title, runs), render_history_show(title, runs));
    }
    throw input_error("the history has no box or GPU '" + a.what + "'",
                      "`gpuvet history` lists the boxes (by name or hostname) and GPUs (by serial or UUID)");
}

int trend(const GlobalOptions& g, const HistoryArgs& a) {
    auto store = open_existing(a);
    auto& db = store.db();
    std::optional<std::int64_t> gpu, box;
    if (a.gpu && !(gpu = history::find_gpu(db, *a.gpu)))
        throw input_error("the history has no GPU '" + *a.gpu + "'", "`gpuvet history` lists the GPUs");
    if (a.box && !(box = history::find_box(db, *a.box)))
        throw input_error("the history has no box '" + *a.box + "'", "`gpuvet history` lists the boxes");
    auto points = history::trend(db, a.metric, gpu, box);
    if (points.empty()) {
        std::string known;
        for (auto& m : history::metrics(db)) known += (known.empty() ? "" : ", ") + m;
        throw input_error("no recorded value of '" + a.metric + "'" + (gpu || box ? " there" : ""),
                          known.empty() ? "the history holds no figures yet" : "recorded metrics: " + known);
    }
    if (a.html) write_file_atomically(*a.html, render_trend_html(a.metric, points));
    return print(g, trend_json(a.metric, points), render_trend(a.metric, points, 100));
}

std::int64_t the_box(history::Database& db, const std::optional<std::string>& named) {
    if (named) {
        if (auto b = history::find_box(db, *named)) return *b;
        throw input_error("the history has no box '" + *named + "'", "`gpuvet history` lists the boxes");
    }
    auto boxes = history::list_boxes(db);
    if (boxes.size() == 1) return boxes.front().id;
    std::string names;
    for (auto& b : boxes) names += (names.empty() ? "" : ", ") + b.name;
    throw usage_error(boxes.empty() ? "the history has no box yet" : "which box? the history holds " + names,
                      "give the box: gpuvet history diff BOX");
}

int diff(const GlobalOptions& g, const HistoryArgs& a) {
    auto store = open_existing(a);
    auto& db = store.db();
    auto runs = history::runs_of_box(db, the_box(db, a.box));
    if (runs.size() < 2)
        throw input_error("box " + runs.front().box + " has one run only", "run `gpuvet check` again to compare");
    const auto& now = runs.back();
    const auto& base = a.against == "first" ? runs.front() : runs[runs.size() - 2];
    auto history_of = [&](const std::string& key, const std::string& metric) {
        auto gpu = history::find_gpu(db, key);
        return gpu ? history::earlier_values(db, *gpu, metric, now.started_at) : std::vector<double>{};
    };
    auto d = history::diff_runs(history::snapshot(db, base.id), history::snapshot(db, now.id), history_of);
    return print(g, diff_json(d), render_diff(d));
}

int export_rows(const HistoryArgs& a) {
    auto store = open_existing(a);
    std::string out = a.format == "csv" ? export_csv_header() : "";
    history::for_each_figure(store.db(), [&](const history::ExportRow& r) {
        out += a.format == "csv" ? export_csv_row(r) : export_jsonl_row(r);
    });
    if (a.output) write_file_atomically(*a.output, out);
    else std::cout << out;
    return exit_code::ok;
}

int import_reports(const GlobalOptions& g, const HistoryArgs& a) {
    // Every file is read first: one bad report is exit 2 before anything is written.
    std::vector<Report> reports;
    for (const auto& f : a.files) reports.push_back(read_report_file(f));
    history::Store store(db_path(a), true);
    Json body{{"database", store.db().file().string()}, {"imported", Json::array()}};
    std::string text;
    for (std::size_t i = 0; i < reports.size(); ++i) {
        auto rec = store.record(history::record_of(reports[i]), "imported");
        body["imported"].push_back({{"file", a.files[i]}, {"box", rec.box}, {"added", rec.added}});
        text += a.files[i] + ": " + (rec.added ? "added to " : "already in the history, ") + rec.box +
                (rec.matched_by.empty() ? "" : " (recognised by its " + rec.matched_by + ")") + "\n";
    }
    return print(g, body, text);
}

int run_history(const GlobalOptions& g, const HistoryArgs& a) {
    if (a.part == "show") return show(g, a);
    if (a.part == "trend") return trend(g, a);
    if (a.part == "diff") return diff(g, a);
    if (a.part == "export") return export_rows(a);
    if (a.part == "import") return import_reports(g, a);
    return list(g, a);
}

}  // namespace

void add_history_command(Cli cli) {
    auto* sub = cli.app.add_subcommand("history", "The boxes and GPUs seen over time: runs, trends, swaps, drift");
    auto args = std::make_shared<HistoryArgs>();
    auto common = [&](CLI::App* p) {
        p->add_option("--history-db", args->db,
                      "the history database file (default: $GPUVET_HISTORY_DB, else "
                      "$XDG_DATA_HOME/gpuvet/history.sqlite, else ~/.local/share/gpuvet/history.sqlite)");
        p->add_flag("--json", cli.global.json, "print the machine-readable JSON document on stdout");
    };
    common(sub);
    sub->require_subcommand(0, 1);
    auto* s = sub->add_subcommand("show", "every run of one box or GPU, with its verdict and key figures");
    s->add_option("what", args->what, "a box name or hostname, or a GPU serial or UUID")->required();
    auto* t = sub->add_subcommand("trend", "one figure over time against its spec and floor");
    t->add_option("metric", args->metric, "the figure, e.g. gpu.memory_bandwidth.copy_gbps")->required();
    t->add_option("--gpu", args->gpu, "only this GPU (serial or UUID)");
    t->add_option("--box", args->box, "only the GPUs of this box (name or hostname)")->excludes("--gpu");
    t->add_option("--html", args->html, "also write the chart as an HTML page to FILE")->type_name("FILE");
    auto* d = sub->add_subcommand("diff", "the latest run of a box against its previous (or first) run");
    d->add_option("box", args->box, "the box (name or hostname); optional when the history holds one");
    d->add_option("--against", args->against, "previous (default) or first")
        ->check(CLI::IsMember({"previous", "first"}));
    auto* e = sub->add_subcommand("export", "every recorded figure, for spreadsheets and other tools");
    e->add_option("--format", args->format, "csv or jsonl")->required()->check(CLI::IsMember({"csv", "jsonl"}));
    e->add_option("--output", args->output, "write FILE instead of stdout")->type_name("FILE");
    auto* i = sub->add_subcommand("import", "add saved JSON reports (the same report twice is one entry)");
    i->add_option("files", args->files, "gpuvet JSON reports (check, bench, burn, host)")->required();
    for (auto* p : {s, t, d, e, i}) {
        common(p);
        p->callback([args, p] { args->part = p->get_name(); });
    }
    sub->footer(
        "Examples:\n"
        "  gpuvet history                                   boxes and GPUs, first/last seen, last verdict\n"
        "  gpuvet history show box-1a2b3c4d                 every run of that box with its key figures\n"
        "  gpuvet history trend gpu.memory_bandwidth.copy_gbps --gpu 1654922000123 --html bw.html\n"
        "  gpuvet history diff --against first              what changed since the box was first vetted\n"
        "  gpuvet history export --format csv > history.csv\n"
        "  gpuvet history import old/*.json                 saved reports into the history\n"
        "The database: --history-db FILE, else $GPUVET_HISTORY_DB, else $XDG_DATA_HOME/gpuvet/history.sqlite, "
        "else ~/.local/share/gpuvet/history.sqlite.\n"
        "Exit codes: 0 ok, 2 bad input (no such box, GPU or metric; an unreadable report), 3 the database "
        "could not be used.");
    on_chosen(
        cli, *sub, "history", [args](const GlobalOptions& g) { return run_history(g, *args); }, true);
}

}  // namespace gpuvet
