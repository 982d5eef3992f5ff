// host.cpu: model, sockets, cores, threads, cgroup limits, governor, steal time measured while
// gpuvet runs, and per-core throughput uniformity.
#pragma once
#include <optional>

#include "core/check.hpp"
#include "host/core_speed.hpp"
#include "host/steal.hpp"

namespace gpuvet {

class HostCpuCheck final : public Check {
public:
    std::string_view key() const override { return "host.cpu"; }
    std::string_view title() const override { return "Host CPU"; }
    std::vector<CheckResult> run(CheckContext& ctx) override;
};

// The steal figure and the verdict it earns; absent (PASS) when no CPU ran in the window.
Verdict judge_steal(const std::optional<StealWindow>& w, CheckResult& r);
// Per-core figures, stragglers named; WARN when any core is a straggler.
Verdict judge_core_speeds(const std::vector<CoreSpeed>& speeds, CheckResult& r);
// Hook for the order: the cores usable here held against the cores promised. FAIL when fewer.
// `usable_cpus` is what this process may really use (threads, narrowed by cpuset and quota).
Verdict hold_cores_against(double usable_cpus, int expected_cpus, CheckResult& r);

}  // namespace gpuvet
