// What the trial run reports about the job's processes: how the main one ended and each process of
// the tree with its totals. Plain data, shared by the job control (monitor/job_process), the host sampler
// (run_host) and the results model the printers read (run_result).
#pragma once
#include <string>

namespace gpuvet {

// How the job's main process ended.
struct JobEnd {
    bool signaled = false;
    int code = 0;     // exit status, or the signal number when signaled
    double at_s = 0;  // seconds after the start
};

// One process of the tree as the report lists it: its total CPU and I/O over the run.
struct TreeProcess {
    int pid = 0, ppid = 0;
    std::string comm, cmdline;
    std::string role;  // "main", "worker", "other"
    double cpu_s = 0;
    double read_bytes = 0, rchar = 0, write_bytes = 0;
    bool alive = true;
};

}  // namespace gpuvet
