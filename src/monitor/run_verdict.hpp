// The verdict policy of a trial run, beside the rules that feed it: what `run --judge` exits with
// and the history records. One place, so the exit code and the record never disagree.
#pragma once
#include "core/run_result.hpp"

namespace gpuvet {

enum class RunOutcome {
    Healthy,     // no bottleneck: compute-bound, or nothing fired
    Bottleneck,  // a bottleneck or a hardware limit of the server (an F rule) was found
    JobFailed,   // the command failed or was stopped: the run is not a fair trial
};

RunOutcome run_outcome(const RunResult& r);
// "HEALTHY", "BOTTLENECK", "JOB_FAILED"
const char* to_string(RunOutcome o);
// --judge's exit code (docs/run.md): 0 healthy, 1 bottleneck, 3 job failed.
int judge_exit_code(RunOutcome o);

}  // namespace gpuvet
