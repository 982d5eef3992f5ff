// gpuvet top: the live monitor (full screen on a terminal), its snapshot (--once, --json) and its
// recorder (--log). Wiring only: the monitor, model, outputs and screen live in src/monitor/.
#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <mutex>
#include <thread>

#include "cli/check_run.hpp"
#include "cli/common.hpp"
#include "cli/number_option.hpp"
#include "core/error.hpp"
#include "core/text_safety.hpp"
#include "gpu/bindings/driver_deadline.hpp"
#include "gpu/bindings/driver_exit.hpp"
#include "gpu/burn.hpp"
#include "gpu/device/backend_choice.hpp"
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

constexpr NumberRule kTopIntervalRule{.min = kTopMinIntervalS,
                                      .max = kTopMaxIntervalS,
                                      .unit = NumberUnit::Seconds,
                                      .what = "a refresh interval",
                                      .example = "1"};
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
    const DeviceBackend& backend;
    GpuMonitor monitor;
    SpecDb specs;
    TopModel model;
    HostLoadReader host;
    ProcessRows processes;

    Watch(const DeviceBackend& b, std::vector<int> gpus, const GlobalOptions& g)
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

// The run's GPUs: NVIDIA's, AMD's or both (gpu/device/backend_choice.hpp).
const DeviceBackend& usable_backend() {
    const GpuBackends& all = GpuBackends::shared();
    const DeviceBackend& b = all.devices();
    if (!b.usable())
        throw runtime_error("no GPU driver to watch: NVIDIA (" + all.nvidia().absent_reason + "), AMD (" +
                                all.amd().absent_reason + ")",
                            "install or load the GPU driver (nvidia-smi or amd-smi must work), or set GPUVET_LIBNVML "
                            "or GPUVET_LIBAMD_SMI to the library to use");
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
    // A snapshot with a GPU whose driver did not answer is not a full picture of the machine.
    return any_driver_wedged() ? exit_code::could_not_run : exit_code::ok;
}

// What stopped answering, said once the screen is left (or the log closed).
void say_wedged() {
    if (any_driver_wedged()) std::cerr << "gpuvet top: " << driver_wedge_summary() << "\n";
}

// The full-screen monitor samples on a thread of its own, so that a driver call that does not
// return (until its deadline abandons it) never holds up the keys: `q` and Ctrl-C answer at
// once, and the header says the values are stale. The thread shares the Watch, so a sampler
// still inside a driver call when top ends is left running on state that stays alive.
class ScreenSampler {
public:
    ScreenSampler(std::shared_ptr<Watch> w, double interval_s) : s_(std::make_shared<State>()) {
        s_->w = std::move(w);
        s_->interval_s = interval_s;
        th_ = std::thread(loop, s_);
    }
    ~ScreenSampler() {
        if (th_.joinable()) stop(std::chrono::milliseconds(0));
    }
    ScreenSampler(const ScreenSampler&) = delete;
    ScreenSampler& operator=(const ScreenSampler&) = delete;

    void set_interval(double s) {
        std::lock_guard lk(s_->mu);
        s_->interval_s = s;
        s_->cv.notify_all();
    }
    std::uint64_t ticks() {
        std::lock_guard lk(s_->mu);
        return s_->ticks;
    }
    // Waits at most `for_at_most` for the first tick (the first frame then shows readings).
    void wait_first(std::chrono::milliseconds for_at_most) {
        std::unique_lock lk(s_->mu);
        s_->cv.wait_for(lk, for_at_most, [&] { return s_->ticks > 0; });
    }
    void draw(TopScreen& screen, const ViewState& view) {
        std::lock_guard lk(s_->mu);
        screen.draw(s_->w->model.frame(), view);
    }
    // What the header says while the values are not current; empty while the driver answers.
    std::string stale_note() {
        std::lock_guard lk(s_->mu);
        auto now = Clock::now();
        double busy_s = s_->busy ? std::chrono::duration<double>(now - s_->busy_since).count() : 0;
        if (busy_s >= std::max(kStaleAfterS, 2 * s_->interval_s))
            return "STALE " + std::to_string(static_cast<long long>(busy_s)) + " s: the driver is not answering";
        if (any_driver_wedged()) {
            std::string first = driver_wedge_summary();
            return "NOT ANSWERING: " + first.substr(0, first.find('\n'));
        }
        return {};
    }
    // Ends the thread; false when it is still inside a driver call after `grace` (then it is
    // detached and the process must end without its teardown).
    bool stop(std::chrono::milliseconds grace) {
        std::unique_lock lk(s_->mu);
        s_->quit = true;
        s_->cv.notify_all();
        bool done = s_->cv.wait_for(lk, grace, [&] { return s_->finished; });
        lk.unlock();
        if (done) th_.join();
        else th_.detach();
        return done;
    }

private:
    using Clock = std::chrono::steady_clock;
    static constexpr double kStaleAfterS = 2;  // a tick that long overdue is not a slow /proc read
    struct State {
        std::mutex mu;
        std::condition_variable cv;
        std::shared_ptr<Watch> w;
        double interval_s = 1;
        bool quit = false, finished = false, busy = false;
        Clock::time_point busy_since{};
        std::uint64_t ticks = 0;
    };

    static void loop(std::shared_ptr<State> s) {
        std::unique_lock lk(s->mu);
        while (!s->quit) {
            s->busy = true;
            s->busy_since = Clock::now();
            lk.unlock();
            MonitorTick t = s->w->monitor.sample();  // only this thread uses the monitor
            HostLoad host = s->w->host.read();
            auto procs = s->w->processes.read(t);
            lk.lock();
            s->w->model.update(t, std::move(host), std::move(procs));
            s->busy = false;
            ++s->ticks;
            s->cv.notify_all();
            auto next = s->busy_since + std::chrono::milliseconds(static_cast<long long>(s->interval_s * 1000));
            s->cv.wait_until(lk, next, [&] { return s->quit; });
        }
        s->finished = true;
        s->cv.notify_all();
    }

    std::shared_ptr<State> s_;
    std::thread th_;
};

int run_screen(const std::shared_ptr<Watch>& w, const TopArgs& a, bool color) {
    TopScreen screen(color);
    ViewState view;
    view.interval_s = a.interval_s;
    std::vector<int> indexes;
    for (const auto& g : w->monitor.gpus()) indexes.push_back(g.index);
    const auto start = std::chrono::steady_clock::now();
    ScreenSampler sampler(w, view.interval_s);
    sampler.wait_first(std::chrono::milliseconds(500));
    std::uint64_t drawn = 0;
    bool redraw = true;
    while (!stop_flag().load()) {
        if (a.duration_s && std::chrono::steady_clock::now() - start >= std::chrono::duration<double>(*a.duration_s))
            break;
        view.stale = sampler.stale_note();
        std::uint64_t ticks = sampler.ticks();
        if (redraw || ticks != drawn) sampler.draw(screen, view);
        drawn = ticks;
        std::string shown = view.stale;
        redraw = false;
        int key = screen.key_until(std::chrono::steady_clock::now() + std::chrono::milliseconds(100));
        if (key < 0) {
            redraw = sampler.stale_note() != shown;  // the stale mark counts its seconds
            continue;
        }
        redraw = true;
        if (key == TopScreen::resize_key()) continue;
        KeyEffect e = apply_key(view, key, indexes);
        if (e == KeyEffect::Quit) break;
        if (e == KeyEffect::IntervalChanged) sampler.set_interval(view.interval_s);
    }
    // After Ctrl-C a call in flight is abandoned within about a second (driver_deadline.hpp);
    // after `q` nothing asks it to, and top does not wait for a driver that is not answering.
    auto grace = stop_flag().load() ? std::chrono::milliseconds(1500) : std::chrono::milliseconds(300);
    if (!sampler.stop(grace)) request_exit_without_teardown();
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
    auto w = std::make_shared<Watch>(usable_backend(), gpus, g);
    int code = exit_code::ok;
    if (rec) code = run_log(*w, *rec, a);
    else if (a.once || g.json || !::isatty(STDOUT_FILENO) || !::isatty(STDIN_FILENO)) code = run_snapshot(*w, g);
    else code = run_screen(w, a, detect_style(g.no_color).color);
    say_wedged();
    return code;
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
    add_output_flags(*sub, cli.global, {.report = false});
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
        "restored), 2 bad input (unwritable --log file, unknown GPU), 3 no driver or NVML missing, or a --once/--json "
        "snapshot in which a driver call did not return in its budget (GPUVET_DRIVER_TIMEOUT_S, default 30 s; the "
        "full screen marks such values STALE and still obeys q).");
    on_chosen(cli, *sub, "top", [args](const GlobalOptions& g) { return run_top(g, *args); });
}

}  // namespace gpuvet
