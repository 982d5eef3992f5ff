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

}  // namespace gpuvet::test
