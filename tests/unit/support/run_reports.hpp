// A run's report as `gpuvet run` writes it, for the tests that read reports back or compare two runs.
#pragma once
#include <string>

#include "core/clock_reasons.hpp"
#include "report/run_json.hpp"
#include "support/run_timelines.hpp"

namespace gpuvet::test {

// A 100 s run on one GPU held at 1400 MHz by its power cap: F1.
inline RunResult power_capped_run() {
    RunResult r = judge(timeline(100, 1,
                                 [](int, RunPoint& p) {
                                     p.gpus[0].utilization_percent = 97;
                                     p.gpus[0].power_w = 690;
                                     p.gpus[0].sm_clock_mhz = 1400;
                                     p.gpus[0].clock_event_reasons = clock_reason::kSwPowerCap;
                                 }),
                        1);
    r.command = {"python", "train.py"};
    r.tag = "box-a";
    r.wall_s = 100;
    r.end = JobEnd{false, 0, 100};
    return r;
}

inline std::string report_of(const RunResult& r) {
    Envelope env;
    env.command = "run";
    return render_run_json(env, r);
}

// A run on a box where gpuvet saw no GPU, diagnosed as mostly waiting.
inline RunResult host_only_run() {
    RunResult r;
    r.command = {"python3", "-c", "import time\ntime.sleep(1)"};
    r.end = JobEnd{false, 0, 1.0};
    r.wall_s = 1.2;
    r.no_gpu_reason = "libnvidia-ml.so.1 could not be loaded";
    RuleFinding f;
    f.id = "H3";
    f.title = "Mostly waiting";
    f.severity = RuleSeverity::kInfo;
    f.party = RuleParty::kJob;
    f.message = "The job used 0.001 cores.";
    f.action = "Look at what it waits for.";
    f.source = "[G]";
    r.diagnosis.primary = f;
    r.host.cpus = 2;
    return r;
}

}  // namespace gpuvet::test
