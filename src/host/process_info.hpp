// One process as /proc shows it, for the monitor's process table (top) and the trial run's
// process tree (run): parent, name, command line, owner, CPU time and I/O counters. Everything
// goes through the HostFs seam so tests read fixture trees. A process can vanish between two
// reads: read_process() then returns nothing, which callers treat as "exited".
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/fact.hpp"
#include "core/host_fs.hpp"

namespace gpuvet {

// /proc/<pid>/io: `rchar`/`wchar` count every read()/write() (page cache hits included);
// `read_bytes`/`write_bytes` what reached the storage layer. Unreadable for other users'
// processes without CAP_SYS_PTRACE.
struct ProcessIo {
    std::uint64_t rchar = 0, wchar = 0, read_bytes = 0, write_bytes = 0, cancelled_write_bytes = 0;
};

struct ProcessInfo {
    int pid = 0, ppid = 0;
    char state = '?';                                // R, S, D, Z, T ...
    std::string comm;                                // the kernel's 15-character name
    std::string cmdline;                             // arguments joined by spaces; empty for kernel threads and zombies
    Fact<unsigned> uid;                              // real uid from /proc/<pid>/status
    std::uint64_t utime_ticks = 0, stime_ticks = 0;  // user and system CPU time, in clock ticks
    std::uint64_t start_ticks = 0;                   // start time after boot, in clock ticks
    int threads = 0;
    std::uint64_t rss_bytes = 0;
    Fact<ProcessIo> io;
};

// Parses /proc/<pid>/stat; the name sits in parentheses and may itself hold spaces and ')'.
std::optional<ProcessInfo> parse_proc_pid_stat(const std::string& text);
// Parses the key: value lines of /proc/<pid>/io.
std::optional<ProcessIo> parse_proc_pid_io(const std::string& text);
// The real uid from /proc/<pid>/status ("Uid:\treal\teffective\t...").
std::optional<unsigned> parse_status_uid(const std::string& text);

// Everything above for one pid; nothing when the process is gone (or never was).
std::optional<ProcessInfo> read_process(const HostFs& fs, int pid);
// Every numeric entry of /proc, ascending.
std::vector<int> list_pids(const HostFs& fs);
// The user name of a uid from the password database, or the number when it has none (common in
// containers, where NVML shows host PIDs of other users).
std::string user_name(unsigned uid);
// Clock ticks per second (sysconf(_SC_CLK_TCK)), for the *_ticks fields.
long clock_ticks_per_s();

// Whether `pid` descends from `root`: its parents walked through `parent_of` (a pid to its parent,
// none when that process is not known) up to `root`, init, or 64 generations (no real tree is
// deeper; a cycle from reused pids ends there too).
template <class ParentOf>
bool descends_from(int pid, int root, ParentOf parent_of) {
    if (pid == root) return false;
    std::optional<int> up = parent_of(pid);
    for (int hops = 0; up && *up > 1 && *up != root && hops < 64; ++hops) up = parent_of(*up);
    return up && *up == root;
}

}  // namespace gpuvet
