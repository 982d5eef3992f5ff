// gpuvet run -- CMD ARGS...: runs the user's own job, samples its GPUs and its process tree while
// it runs, and names its bottleneck. The job keeps the terminal: its stdin, stdout and stderr are
// untouched, so gpuvet writes its own lines and the summary to stderr.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <exception>
#include <iostream>
#include <memory>
#include <mutex>
#include <thread>

#include "cli/common.hpp"
#include "cli/history_record.hpp"
#include "cli/number_option.hpp"
#include "cli/output_guard.hpp"
#include "core/atomic_file.hpp"
#include "core/text_safety.hpp"
#include "core/error.hpp"
#include "gpu/bindings/driver_deadline.hpp"
#include "gpu/bindings/driver_exit.hpp"
#include "gpu/device/backend_choice.hpp"
#include "host/cpu_facts.hpp"
#include "monitor/job_process.hpp"
#include "monitor/run_assembly.hpp"
#include "monitor/run_record.hpp"
#include "monitor/run_session.hpp"
#include "monitor/sampling_loop.hpp"
#include "report/run_html.hpp"
#include "report/run_json.hpp"
#include "report/slurm_json.hpp"
#include "report/run_view.hpp"
#include "monitor/run_verdict.hpp"

namespace gpuvet {

namespace {

struct RunArgs {
    std::vector<std::string> command;
    std::string gpus;
    double interval_s = 1;
    std::string record;
    std::string tag, note;
    bool judge = false;
    HistoryOptions history;
};

// 10 Hz is as fast as NVML refreshes most fields; a minute is the coarsest that still shows stalls.
constexpr NumberRule kIntervalRule{
    .min = 0.1, .max = 60, .unit = NumberUnit::Seconds, .what = "an interval", .example = "1s"};

// How long the job's start waits for the GPUs to open. A healthy driver answers in well under a
// second (a few seconds without persistence mode); a wedged one would hold the job for the whole
// driver budget, so past this the run samples the host only.
constexpr auto kGpuOpenWait = std::chrono::seconds(5);

// The GPUs opened on a thread of their own: a driver that does not answer (nvmlInit stuck in the
// kernel) must delay neither the job's start nor gpuvet's exit, and the stop signals must still be
// taken meanwhile (they are blocked for the job control's waiter).
class GpuOpener {
public:
    GpuOpener(std::vector<int> gpus, int root) : state_(std::make_shared<State>()) {
        thread_ = std::thread([st = state_, gpus = std::move(gpus), root] {
            std::unique_ptr<RunSampler> s;
            std::exception_ptr error;
            try {
                s = std::make_unique<RunSampler>(&GpuBackends::shared().devices(), gpus, root);
            } catch (...) {
                error = std::current_exception();
            }
            std::lock_guard lk(st->mu);
            st->sampler = std::move(s);
            st->error = error;
            st->done = true;
        });
    }
    // A thread still inside a driver call is left behind, and the process ends without the
    // drivers' teardown (which would wait for it).
    ~GpuOpener() {
        if (done()) {
            thread_.join();
        } else {
            thread_.detach();
            request_exit_without_teardown();
        }
    }
    GpuOpener(const GpuOpener&) = delete;
    GpuOpener& operator=(const GpuOpener&) = delete;

    bool done() const {
        std::lock_guard lk(state_->mu);
        return state_->done;
    }
    // The sampler once done (a --gpus index the machine lacks is thrown here); else host-only.
    std::unique_ptr<RunSampler> take(int root) {
        std::lock_guard lk(state_->mu);
        if (!state_->done)
            return std::make_unique<RunSampler>(
                "the GPU driver did not answer within " + std::to_string(kGpuOpenWait.count()) +
                    " s: a wedged driver? check `dmesg` for Xid and NVRM (NVIDIA) or amdgpu (AMD) messages",
                root);
        if (state_->error) std::rethrow_exception(state_->error);
        return std::move(state_->sampler);
    }

private:
    struct State {
        std::mutex mu;
        bool done = false;
        std::unique_ptr<RunSampler> sampler;
        std::exception_ptr error;
    };
    std::shared_ptr<State> state_;
    std::thread thread_;
};

// Samples the job's GPUs and host every interval until its process tree is gone, telling what
// happens on the way; returns the job's wall time.
double sample_until_done(const RunArgs& a, JobProcess& job, RunSampler& sampler, RunRecorder* recorder) {
    const auto start = std::chrono::steady_clock::now();
    bool told_leftovers = false;
    LoopLimits limits;
    limits.interval = std::chrono::milliseconds(static_cast<long long>(a.interval_s * 1000));
    run_sampling_loop(limits, job.tree_done(), [&] {
        double t_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        // Known before the tick: a tick taken while the command was still ending counts it among
        // the processes, and would announce leftovers that are not there.
        const bool ended_before_tick = job.main_end().has_value();
        const RunPoint& p = sampler.tick(t_s);
        if (recorder) recorder->write(p);
        for (const std::string& n : sampler.take_news()) std::cerr << "gpuvet: " << terminal_safe(n) << "\n";
        if (!told_leftovers && ended_before_tick && p.host.processes > 0) {
            told_leftovers = true;
            std::cerr << "gpuvet: " << terminal_safe(a.command[0]) << " exited; waiting for its " << p.host.processes
                      << " remaining process(es) (Ctrl-C ends them)\n";
        }
        return true;
    });
    // The job's own end: a tick held up by a driver call that had to be given up does not count.
    double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (std::optional<double> end_s = job.tree_end_s()) wall_s = std::min(wall_s, *end_s);
    return wall_s;
}

// The report folder's files (when asked for) and the summary on stderr.
Envelope write_run_outputs(const GlobalOptions& g, const RunResult& r) {
    Envelope env = new_envelope(g);
    close_envelope(env);
    if (g.report_dir) {
        std::filesystem::path dir = report_folder(*g.report_dir);
        write_file_atomically(dir / "gpuvet-run.json", with_slurm_context(render_run_json(env, r), slurm_context()));
        write_file_atomically(dir / "gpuvet-run.txt", terminal_safe(render_run_summary(r, Style{false, 100, true})));
        write_file_atomically(dir / "report.html", render_run_html(env, r, run_series(r)));
    }
    Style st = detect_style(g.no_color);
    st.color = st.color && ::isatty(STDERR_FILENO);
    st.verbose = g.verbose;
    std::cerr << terminal_safe(render_run_summary(r, st));
    std::cerr.flush();
    return env;
}

int run_run_cmd(const GlobalOptions& g, const RunArgs& a) {
    if (a.command.empty())
        throw usage_error("no command to run: nothing follows --",
                          "put the command after --, e.g. gpuvet run -- python train.py --epochs 1");
    stdout_belongs_to_child();  // gpuvet writes to stderr only: a closed stdout keeps the job's code
    // Everything that can refuse the run does so before the command starts.
    std::unique_ptr<RunRecorder> recorder;
    if (!a.record.empty()) recorder = std::make_unique<RunRecorder>(a.record);
    std::vector<int> gpus = a.gpus.empty() ? std::vector<int>{} : parse_gpu_list(a.gpus);
    require_usable_history(a.history);
    JobProcess job;  // first: blocks the signals its waiter takes before any library starts a thread
    const int root = static_cast<int>(::getpid());
    GpuOpener opener(gpus, root);
    const auto open_until = std::chrono::steady_clock::now() + kGpuOpenWait;
    while (!opener.done() && std::chrono::steady_clock::now() < open_until)
        if (int sig = job.wait_for_stop(std::chrono::milliseconds(50))) {
            std::cerr << "gpuvet: stopped by signal " << sig << " while opening the GPUs: the job was not started\n";
            return 128 + sig;
        }
    std::unique_ptr<RunSampler> sampler_owner = opener.take(root);
    RunSampler& sampler = *sampler_owner;
    if (recorder) recorder->header(sampler.timeline().gpu_indexes, a.interval_s, a.command);
    // Once the job's processes are gone, a driver call still in flight is not waited for.
    job.on_tree_done([] { cut_driver_waits("the job had ended"); });

    int err = job.start(a.command);
    if (err != 0) {
        std::cerr << "gpuvet: cannot run '" << terminal_safe(a.command[0]) << "': " << exec_failure_text(err) << "\n"
                  << "  → check the spelling and that it is installed and executable (PATH is searched)\n";
        return exec_failure_exit_code(err);
    }
    sampler.set_job(job.pid());
    if (!sampler.no_gpu_reason().empty())
        std::cerr << "gpuvet: no GPU visible (" << sampler.no_gpu_reason() << "): recording the host side only\n";

    const double wall_s = sample_until_done(a, job, sampler, recorder.get());
    const RunResult r = run_result_of(RunRequest{a.command, a.tag, a.note, a.interval_s}, job, sampler, recorder.get(),
                                      wall_s, static_cast<int>(allowed_cpus().size()));
    Envelope env = write_run_outputs(g, r);
    // The GPUs' identities come from the backend the sampler opened; a host-only run (no driver, or
    // one that did not answer in time) has none, and the backend is not touched again.
    record_run_in_history(env, r, a.history, r.no_gpu_reason.empty() ? &GpuBackends::shared().devices() : nullptr);
    return a.judge ? judge_exit_code(run_outcome(r)) : r.exit_code;
}

}  // namespace

void add_run_command(Cli cli) {
    auto* sub = cli.app.add_subcommand("run", "Run your own job, record its GPUs and host, and name its bottleneck");
    auto args = std::make_shared<RunArgs>();
    sub->add_option("command", args->command, "the command and its arguments, after --")->expected(-1);
    sub->add_option("--gpus", args->gpus, "GPU indexes to sample, comma-separated (default: all)");
    add_number_option(*sub, "--interval", args->interval_s, kIntervalRule, "sampling interval (default 1s)");
    sub->add_option("--record", args->record, "write the timeline to FILE as JSON Lines, as it runs")
        ->type_name("FILE");
    sub->add_option("--tag", args->tag, "a label for this run (server name, config)");
    sub->add_option("--note", args->note, "a free-text note kept in the report");
    sub->add_flag("--judge", args->judge,
                  "exit with the verdict (0 healthy, 1 bottleneck found, 3 the job failed) instead of the job's code");
    sub->add_option("--report", cli.global.report_dir,
                    "write gpuvet-run.json, gpuvet-run.txt and report.html into DIR (DIR/<node>/ for each task of "
                    "a Slurm step of several tasks)")
        ->type_name("DIR");
    sub->add_flag("--no-color", cli.global.no_color, "no colours in the summary");
    sub->add_flag("-v,--verbose", cli.global.verbose, "also list every signal that was not measured, and why");
    add_history_flags(*sub, args->history);
    sub->footer(
        "Examples:\n"
        "  gpuvet run -- python train.py --epochs 1         the job's own output as usual, then the diagnosis\n"
        "  gpuvet run --record run.jsonl --report out/ -- torchrun --nproc-per-node 8 train.py\n"
        "  gpuvet run --tag box-a --judge -- ./train.sh      exit code = verdict\n"
        "The summary goes to stderr (stdout is the job's). Ctrl-C and SIGTERM are forwarded to the job.\n"
        "Exit codes: the job's own (128+N if killed by signal N), 127 command not found, 126 not executable,\n"
        "2 bad input; with --judge 0 healthy, 1 a bottleneck or hardware limit, 3 the job failed.");
    on_chosen(cli, *sub, "run", [args](const GlobalOptions& g) {
        // The words after the first `--`, exactly as given (the parser may regroup positionals).
        auto dashes = std::find(g.argv.begin(), g.argv.end(), "--");
        if (dashes != g.argv.end()) args->command.assign(dashes + 1, g.argv.end());
        return run_run_cmd(g, *args);
    });
}

}  // namespace gpuvet
