// The monitor's process table: every process NVML lists on the watched GPUs, with what /proc says
// about it (user, command, CPU %). NVML reports PIDs as the host kernel numbers them, so inside a
// container a process can be missing from this /proc or be another process there; such a row keeps
// its PID and GPU memory and says why the rest is absent.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/fact.hpp"
#include "core/host_fs.hpp"
#include "monitor/gpu_monitor.hpp"

namespace gpuvet {

struct ProcessRow {
    int gpu = 0;
    std::uint32_t pid = 0;
    std::string type;  // "compute", "graphics"
    Fact<std::uint64_t> gpu_memory_bytes;
    Fact<std::string> user, command;  // command: the command line, else the kernel's name
    Fact<double> cpu_percent;         // of one core, over the time since the previous tick
};

inline constexpr const char* kHostPidNote =
    "PIDs are the host's (NVML): inside a container they may be missing here or name other processes";

class ProcessRows {
public:
    explicit ProcessRows(HostFs fs) : fs_(std::move(fs)) {}
    // The rows of one tick, by GPU then PID. CPU % needs the previous tick's CPU time of the PID.
    std::vector<ProcessRow> read(const MonitorTick& tick);

private:
    struct Seen {
        std::uint64_t ticks = 0;
        double t_s = 0;
    };
    HostFs fs_;
    std::map<int, Seen> last_;  // pid -> CPU time at the previous tick
};

}  // namespace gpuvet
