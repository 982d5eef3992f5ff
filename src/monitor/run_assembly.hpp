// A finished run's result, put together in one place: the summary and diagnosis over the timeline,
// then the job's end and the notes that go beside the figures. Nothing after this changes it.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "core/run_result.hpp"
#include "core/run_timeline.hpp"

namespace gpuvet {

class RunSampler;
class JobProcess;
class RunRecorder;

// What the command line asked of the run that the result repeats.
struct RunRequest {
    std::vector<std::string> command;
    std::string tag, note;
    double interval_s = 1;
};

// The summary and diagnosis of a finished run; `wall_s`, when given, bounds the steady window.
RunResult summarize_run(const RunTimeline& tl, const std::vector<RunGpuFacts>& facts, double interval_s, int cpus,
                        bool gpus_visible, std::optional<double> wall_s = std::nullopt);

// The whole result: summarize_run over what `sampler` recorded, the job's end, and the notes (the
// record file, a stop, dropped or orphaned processes, MIG, a driver that stopped answering).
RunResult run_result_of(const RunRequest& req, const JobProcess& job, const RunSampler& sampler,
                        const RunRecorder* recorder, double wall_s, int cpus);

}  // namespace gpuvet
