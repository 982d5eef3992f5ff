// Steal time: CPU time a hypervisor gave to someone else while this VM's vCPU wanted to run.
// Read from /proc/stat before and after a measurement window; the parser takes the text so tests
// can feed two fixture snapshots.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "core/host_fs.hpp"

namespace gpuvet {

struct CpuTimes {
    std::uint64_t busy = 0;  // user + nice + system + irq + softirq (guest is inside user)
    std::uint64_t idle = 0;  // idle + iowait
    std::uint64_t steal = 0;
};

// Per-CPU times from /proc/stat text ("cpu0", "cpu1", ...; the aggregate "cpu" line is skipped).
std::map<int, CpuTimes> parse_proc_stat(const std::string& text);
std::optional<std::map<int, CpuTimes>> read_proc_stat(const HostFs& fs);

struct StealWindow {
    double steal_fraction = 0;  // stolen / (busy + stolen), over CPUs that wanted to run
    std::uint64_t steal_ticks = 0;
    std::uint64_t demanded_ticks = 0;
};

// The share of demanded CPU time that was stolen between two snapshots. Measured against demanded
// time, not wall time: on a big box most CPUs idle during the test, and idle vCPUs cannot be
// robbed, so dividing by all time would hide steal. nullopt when no CPU ran in the window.
std::optional<StealWindow> steal_between(const std::map<int, CpuTimes>& before, const std::map<int, CpuTimes>& after);

// Thresholds, as fractions. Reasoning: on a dedicated or properly sized VM steal is ~0; a few
// percent already means the host is shared beyond its cores; Netflix's practice (Cockcroft,
// "Netflix on AWS" talks) was to replace instances with sustained steal above 10%.
inline constexpr double kStealWarnAbove = 0.02;
inline constexpr double kStealFailAbove = 0.10;
inline constexpr const char* kStealSource =
    "share of the CPU time demanded while the per-core loop ran that the hypervisor gave to others "
    "(/proc/stat steal); ~0 on dedicated vCPUs, replace instances above 10% (Netflix practice, Cockcroft)";

}  // namespace gpuvet
