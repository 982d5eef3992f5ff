#include "monitor/run_verdict.hpp"

namespace gpuvet {

namespace {

// A finding that names a limit, not only a note: any severity above "info" (run_rules.cpp).
bool is_bottleneck(const RuleFinding& f) { return f.severity != "info"; }
// The server's own limits (the F family: power cap, thermal, PCIe replays...) count wherever they rank.
bool is_server_limit(const RuleFinding& f) { return !f.id.empty() && f.id[0] == 'F'; }

}  // namespace

RunOutcome run_outcome(const RunResult& r) {
    if (!r.end || r.exit_code != 0) return RunOutcome::JobFailed;
    const Diagnosis& d = r.diagnosis;
    if (d.primary && is_bottleneck(*d.primary)) return RunOutcome::Bottleneck;
    for (const RuleFinding& f : d.others)
        if (is_server_limit(f)) return RunOutcome::Bottleneck;
    return RunOutcome::Healthy;
}

const char* to_string(RunOutcome o) {
    switch (o) {
        case RunOutcome::Healthy: return "HEALTHY";
        case RunOutcome::Bottleneck: return "BOTTLENECK";
        case RunOutcome::JobFailed: return "JOB_FAILED";
    }
    return "JOB_FAILED";
}

int judge_exit_code(RunOutcome o) {
    switch (o) {
        case RunOutcome::Healthy: return 0;
        case RunOutcome::Bottleneck: return 1;
        case RunOutcome::JobFailed: return 3;
    }
    return 3;
}

}  // namespace gpuvet
