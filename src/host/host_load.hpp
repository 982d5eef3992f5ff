// The host's load for the monitor's header: CPU busy % (from two readings of /proc/stat), memory
// used/total (/proc/meminfo: used = MemTotal - MemAvailable, as free(1) and htop count it) and the
// load averages (/proc/loadavg). Parsers are pure; HostLoadReader keeps the previous CPU counters.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "core/fact.hpp"
#include "host/load_signals.hpp"
#include "core/host_fs.hpp"

namespace gpuvet {

// The aggregate "cpu" line of /proc/stat, in clock ticks.
struct CpuTicks {
    std::uint64_t busy = 0, total = 0;  // busy = total - idle - iowait
};
std::optional<CpuTicks> parse_proc_stat_cpu(const std::string& text);
// How many "cpuN" lines /proc/stat has (online CPUs).
int count_proc_stat_cpus(const std::string& text);

// RAM from /proc/meminfo: parse_meminfo() in host/load_signals.hpp.

struct LoadAverage {
    double one = 0, five = 0, fifteen = 0;
};
std::optional<LoadAverage> parse_loadavg(const std::string& text);

struct HostLoad {
    Fact<double> cpu_busy_percent;  // over the time since the previous read
    Fact<int> cpus;
    Fact<std::uint64_t> memory_total_bytes, memory_used_bytes;
    Fact<LoadAverage> load;
};

class HostLoadReader {
public:
    explicit HostLoadReader(HostFs fs) : fs_(std::move(fs)) {}
    HostLoad read();

private:
    HostFs fs_;
    std::optional<CpuTicks> last_;
};

}  // namespace gpuvet
