// gpuvet top: the live monitor (full screen on a terminal), its snapshot (--once, --json) and its
// recorder (--log). Wiring only: the monitor, model, outputs and screen live in src/monitor/.
#include <unistd.h>

#include <cstdlib>
#include <iostream>
#include <memory>
#include <thread>

#include "cli/check_run.hpp"
#include "cli/common.hpp"
#include "cli/number_option.hpp"
#include "core/error.hpp"
#include "core/text_safety.hpp"
#include "gpu/burn.hpp"
#include "gpu/device/nvml_backend.hpp"
#include "host/host_load.hpp"
#include "monitor/gpu_monitor.hpp"
#include "monitor/process_rows.hpp"
#include "monitor/sampling_loop.hpp"
#include "monitor/top_keys.hpp"
#include "monitor/top_model.hpp"
#include "monitor/top_output.hpp"
#include "monitor/top_recorder.hpp"
#include "monitor/top_screen.hpp"
#include "report/json.hpp"
#include "report/style.hpp"
#include "specs/spec_db.hpp"

namespace gpuvet {

namespace {

constexpr NumberRule kTopIntervalRule{kTopMinIntervalS,    kTopMaxIntervalS,     false, false, false,
                                      NumberUnit::Seconds, "a refresh interval", "",    "1"};
// --once and --json read twice this far apart: rates (NVLink, CPU %) and GPM need two samples
// (GPM's at least 100 ms apart, as NVML documents).
constexpr auto kSnapshotGap = std::chrono::milliseconds(250);

constexpr unsigned kTopReadings = kReadUtilization | kReadMemory | kReadPower | kReadClocks | kReadThermal |
                                  kReadPcieLink | kReadPcieThroughput | kReadNvLinkThroughput | kReadProcesses |
                                  kReadGpm;

struct TopArgs {
    double interval_s = 1;
    std::optional<double> duration_s;
    std::string gpus;
    bool once = false;
    std::optional<std::string> log;
    std::optional<std::string> format;
};

std::string host_name() {
    char buf[256] = {0};
    if (gethostname(buf, sizeof buf - 1) != 0) return "?";
    return buf;
}

LogFormat log_format(const TopArgs& a) {
    std::string f = a.format.value_or("");
    if (f.empty()) {
        const std::string& p = *a.log;
        f = p.size() > 6 && (p.ends_with(".jsonl") || p.ends_with(".ndjson")) ? "jsonl" : "csv";
    }
    if (f == "csv") return LogFormat::Csv;
    if (f == "jsonl") return LogFormat::Jsonl;
    throw usage_error(std::string("unknown --format '") + f + "'", "give --format csv or --format jsonl");
}

void check_args(const TopArgs& a, const GlobalOptions& g) {
    if (a.format && !a.log) throw usage_error("--format applies to --log only", "add --log FILE, or drop --format");
    if (a.log && (a.once || g.json))
        throw usage_error(
            std::string("--log records until stopped; ") + (a.once ? "--once" : "--json") + " prints one snapshot",
            "use either --log FILE or --once/--json");
}

// Everything one tick reads, kept together so each mode samples alike.
struct Watch {
    const NvmlBackend& backend;
    GpuMonitor monitor;
    SpecDb specs;
    TopModel model;
    HostLoadReader host;
    ProcessRows processes;

    Watch(const NvmlBackend& b, std::vector<int> gpus, const GlobalOptions& g)
        : backend(b),
          monitor(b, std::move(gpus), kTopReadings),
          specs(load_specs(g)),
          model(monitor.gpus(), specs, b.system(), host_name()),
          host(HostFs(host_root())),
          processes(HostFs(host_root())) {}
    void tick() {
        MonitorTick t = monitor.sample();
        model.update(t, host.read(), processes.read(t));
    }
};

const NvmlBackend& usable_backend() {
    const NvmlBackend& b = NvmlBackend::shared();
    if (!b.usable())
        throw runtime_error(std::string("no NVIDIA driver to watch: ") + b.absent_reason(),
                            "install or load the NVIDIA driver (nvidia-smi must work), or set GPUVET_LIBNVML to "
                            "the libnvidia-ml.so.1 to use");
    return b;
}

int run_log(Watch& w, TopRecorder& rec, const TopArgs& a) {
    set_first_stop_message(
        "\ngpuvet top: stopping; every tick recorded so far stays in the log (again to exit at once)\n");
    LoopLimits limits;
    limits.interval = std::chrono::milliseconds(static_cast<long long>(a.interval_s * 1000));
    if (a.duration_s) limits.duration = std::chrono::milliseconds(static_cast<long long>(*a.duration_s * 1000));
    LoopEnd end = run_sampling_loop(limits, stop_flag(), [&] {
        w.tick();
        rec.write(w.model.frame());
        return true;
    });
    std::cerr << "gpuvet top: recorded " << rec.rows() << " rows to " << *a.log
              << (end == LoopEnd::Stopped ? " (stopped)" : "") << "\n";
    return exit_code::ok;
}

int run_snapshot(Watch& w, const GlobalOptions& g) {
    w.tick();
    for (auto until = std::chrono::steady_clock::now() + kSnapshotGap; std::chrono::steady_clock::now() < until;) {
        if (stop_flag().load()) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    w.tick();
    if (g.json) {
        Envelope env = new_envelope(g);
        close_envelope(env);
        std::cout << render_document(env, top_to_json(w.model.frame()));
    } else {
        bool color = detect_style(g.no_color).color;  // --no-color, NO_COLOR (non-empty), a terminal
        std::cout << terminal_safe(render_top_once(w.model.frame(), color));
    }
    std::cout.flush();
    return exit_code::ok;
}

int run_screen(Watch& w, const TopArgs& a, bool color) {
    TopScreen screen(color);
    ViewState view;
    view.interval_s = a.interval_s;
    std::vector<int> indexes;
    for (const auto& g : w.monitor.gpus()) indexes.push_back(g.index);
    const auto start = std::chrono::steady_clock::now();
    bool quit = false;
    while (!quit && !stop_flag().load()) {
        LoopLimits limits;
        limits.interval = std::chrono::milliseconds(static_cast<long long>(view.interval_s * 1000));
        if (a.duration_s) {
            auto left = std::chrono::milliseconds(static_cast<long long>(*a.duration_s * 1000)) -
                        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start);
            if (left.count() <= 0) break;
            limits.duration = left;
        }
        bool restart = false;
        LoopEnd end = run_sampling_loop(
            limits, stop_flag(),
            [&] {
                w.tick();
                screen.draw(w.model.frame(), view);
                return true;
            },
            [&](std::chrono::steady_clock::time_point until) {
                int key = screen.key_until(until);
                if (key < 0) return true;
                if (key == TopScreen::resize_key()) {
                    screen.draw(w.model.frame(), view);
                    return true;
                }
                KeyEffect e = apply_key(view, key, indexes);
                if (e == KeyEffect::Quit) quit = true;
                if (e == KeyEffect::IntervalChanged) restart = true;
                if (e != KeyEffect::None) screen.draw(w.model.frame(), view);
                return !quit && !restart;
            });
        if (end != LoopEnd::TickEnded) break;  // stopped by a signal or the duration
    }
    return exit_code::ok;
}

int run_top(const GlobalOptions& g, const TopArgs& a) {
    check_args(a, g);
    std::vector<int> gpus = a.gpus.empty() ? std::vector<int>{} : parse_gpu_list(a.gpus);
    // The log file first: a path that cannot be written is bad input, found before any sampling.
    std::unique_ptr<TopRecorder> rec;
    if (a.log) {
        Envelope env = new_envelope(g);
        TopJson header = to_json(env);
        header["record"] = "header";
        header["fields"] = top_fields_json();
        rec = std::make_unique<TopRecorder>(*a.log, log_format(a), header.dump());
    }
    Watch w(usable_backend(), gpus, g);
    if (rec) return run_log(w, *rec, a);
    if (a.once || g.json || !::isatty(STDOUT_FILENO) || !::isatty(STDIN_FILENO)) return run_snapshot(w, g);
    return run_screen(w, a, detect_style(g.no_color).color);
}

}  // namespace

void add_top_command(Cli cli) {
    auto args = std::make_shared<TopArgs>();
    auto* sub = cli.app.add_subcommand(
        "top", "Live GPU monitor: full screen, a snapshot (--once, --json) or a recorder (--log)");
    add_number_option(*sub, "--interval", args->interval_s, kTopIntervalRule,
                      "refresh / sample interval (default 1 s)");
    add_number_option(*sub, "--duration", args->duration_s, kBurnDurationRule,
                      "stop after this long: 90s, 10m, 1h (default: until q or Ctrl-C)");
    sub->add_option("--gpus", args->gpus, "GPU indexes, comma-separated (default: all)");
    sub->add_flag("--once", args->once, "print one snapshot and exit (what top does when stdout is not a terminal)");
    sub->add_option("--log", args->log, "record one row per GPU per tick into FILE until Ctrl-C or --duration")
        ->type_name("FILE");
    sub->add_option("--format", args->format, "log format: csv (default) or jsonl (default for *.jsonl)");
    add_output_flags(*sub, cli.global, false, true);
    std::string keys;
    for (const auto& k : top_key_help()) keys += std::string("  ") + k + "\n";
    sub->footer(
        "Examples:\n"
        "  gpuvet top                            full-screen monitor (q quits)\n"
        "  gpuvet top --once                     one line per GPU, then the processes\n"
        "  gpuvet top --json                     one JSON document, nvidia-smi --query-gpu key names\n"
        "  gpuvet top --log gpus.csv --interval 0.5 --duration 10m   a recorder, like nvidia-smi dmon\n"
        "Keys:\n" +
        keys +
        "Without a terminal on stdout, top prints one snapshot (--once). Fields, units and hints: "
        "docs/monitor.md.\n"
        "Exit codes: 0 ended by q, Ctrl-C/SIGTERM or --duration (a second Ctrl-C: 3 at once, terminal "
        "restored), 2 bad input (unwritable --log file, unknown GPU), 3 no driver or NVML missing.");
    on_chosen(cli, *sub, "top", [args](const GlobalOptions& g) { return run_top(g, *args); });
}

}  // namespace gpuvet
