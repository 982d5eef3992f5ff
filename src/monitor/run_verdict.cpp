#include "monitor/run_verdict.hpp"

#include "monitor/run_rules.hpp"

namespace gpuvet {

namespace {

// A finding that names a limit, not only a note: any severity above information.
bool is_bottleneck(const RuleFinding& f) { return f.severity != RuleSeverity::kInfo; }
// The server's own limits (the hardware family: power cap, thermal, PCIe replays...) count wherever
// they rank.
bool is_server_limit(const RuleFinding& f) {
    const RuleDef* r = run_rule_of(f.id);
    return r && r->family == RuleFamily::kHardware;
}

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
