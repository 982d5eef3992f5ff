// The system-wide and per-task load signals the trial run samples from /proc, beside the per-process
// reader (process_info): run-queue wait (/proc/<pid>/schedstat), pressure stall information
// (/proc/pressure/*), network bytes (/proc/net/dev) and memory/swap (/proc/meminfo). Parsers take
// the text so tests feed fixtures; readers go through the HostFs seam.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "core/host_fs.hpp"

namespace gpuvet {

// /proc/<pid>/schedstat: "run_ns wait_ns timeslices" (Documentation/scheduler/sched-stats.rst).
// Kernels that do not collect per-task sched_info (schedstats and delay accounting both off)
// print zeros; callers tell that from a process that did use CPU time.
struct SchedStat {
    std::uint64_t run_ns = 0, wait_ns = 0, timeslices = 0;
};
std::optional<SchedStat> parse_schedstat(const std::string& text);

// One /proc/pressure/<resource> file: the "some" and "full" lines' avg10 (%) and total (µs).
// cpu has no meaningful "full" line on older kernels: full_total_us stays absent there.
struct PressureStat {
    double some_avg10_percent = 0;
    std::uint64_t some_total_us = 0;
    std::optional<std::uint64_t> full_total_us;
};
std::optional<PressureStat> parse_pressure(const std::string& text);
// resource: "cpu", "io" or "memory"; nothing when the kernel lacks PSI (< 4.20 or CONFIG_PSI off).
std::optional<PressureStat> read_pressure(const HostFs& fs, const std::string& resource);

// /proc/net/dev summed over every interface but loopback: the network namespace's traffic.
struct NetBytes {
    std::uint64_t rx_bytes = 0, tx_bytes = 0;
    int interfaces = 0;
};
std::optional<NetBytes> parse_net_dev(const std::string& text);

// /proc/meminfo's totals, in bytes.
struct MemorySnapshot {
    std::uint64_t total_bytes = 0, available_bytes = 0, swap_total_bytes = 0, swap_free_bytes = 0;
};
std::optional<MemorySnapshot> parse_meminfo(const std::string& text);

}  // namespace gpuvet
