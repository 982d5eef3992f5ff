#include "monitor/run_assembly.hpp"

#include "core/error.hpp"
#include "gpu/bindings/driver_deadline.hpp"
#include "monitor/job_process.hpp"
#include "monitor/run_record.hpp"
#include "monitor/run_rules.hpp"
#include "monitor/run_session.hpp"
#include "monitor/run_summary.hpp"

namespace gpuvet {

namespace {

// What the summary says beside the figures: the record file, a stop, orphans, MIG.
void add_run_notes(RunResult& r, const RunRecorder* recorder, const RunSampler& sampler, bool killed_by_gpuvet) {
    if (recorder) {
        r.record_path = recorder->path();
        if (!recorder->failure().empty()) r.notes.push_back("the record file is incomplete: " + recorder->failure());
    }
    if (r.stop_signal)
        r.notes.push_back("stopped by signal " + std::to_string(r.stop_signal) +
                          "; the job's processes received it too");
    if (std::size_t n = sampler.host().processes_dropped())
        r.notes.push_back(std::to_string(n) + " ended process(es) with the least CPU are not listed: the table keeps " +
                          std::to_string(kMaxProcessesKept) + " processes");
    if (killed_by_gpuvet)
        r.notes.push_back("the job outlasted two stop signals: at the third gpuvet sent SIGKILL to its processes");
    if (r.orphans_reaped > 0)
        r.notes.push_back(std::to_string(r.orphans_reaped) +
                          " process(es) of the job outlived their parent; gpuvet waited for them and reaped them");
    for (const RunGpuFacts& f : sampler.gpu_facts())
        if (f.mig)
            r.notes.push_back("GPU " + std::to_string(f.index) + " is in MIG mode: per-GPU figures may be absent");
    if (any_driver_wedged()) r.notes.push_back("the GPU driver stopped answering: " + driver_wedge_summary());
}

}  // namespace

RunResult summarize_run(const RunTimeline& tl, const std::vector<RunGpuFacts>& facts, double interval_s, int cpus,
                        bool gpus_visible, std::optional<double> wall_s) {
    RunResult r;
    r.interval_s = interval_s;
    const std::vector<RunPoint>& pts = tl.points();
    SteadyWindow win = steady_window(pts, interval_s, wall_s);
    r.window_start_s = win.start_s;
    r.window_end_s = win.end_s;
    r.window_rule = win.rule;
    RunEvidence e;
    e.window = window_view(pts, interval_s, win);
    e.all = &pts;
    e.window_s = win.end_s - win.start_s;
    e.gpus_visible = gpus_visible;
    e.absent = &tl.absent;
    for (std::size_t k = 0; k < facts.size(); ++k) e.gpus.push_back(summarize_gpu(pts, e.window, k, facts[k]));
    e.host = summarize_host(pts, e.window, cpus);
    r.diagnosis = diagnose(e);
    r.gpus = e.gpus;
    r.host = e.host;
    r.absent = tl.absent;
    r.gpu_indexes = tl.gpu_indexes;
    r.timeline = pts;
    r.timeline_bytes = tl.memory_bytes();
    r.timeline_thinned = tl.thinned();
    return r;
}

RunResult run_result_of(const RunRequest& req, const JobProcess& job, const RunSampler& sampler,
                        const RunRecorder* recorder, double wall_s, int cpus) {
    RunResult r = summarize_run(sampler.timeline(), sampler.gpu_facts(), req.interval_s, cpus,
                                sampler.no_gpu_reason().empty(), wall_s);
    r.command = req.command;
    r.tag = req.tag;
    r.note = req.note;
    r.end = job.main_end();
    r.exit_code = r.end ? shell_exit_code(*r.end) : exit_code::could_not_run;
    r.stop_signal = job.stop_signal();
    r.wall_s = wall_s;
    r.orphans_reaped = job.orphans_reaped();
    r.no_gpu_reason = sampler.no_gpu_reason();
    r.processes = sampler.host().processes();
    add_run_notes(r, recorder, sampler, job.killed_by_gpuvet());
    return r;
}

}  // namespace gpuvet
