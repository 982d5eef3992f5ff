// The host side of the trial run: the job's process tree (every descendant of gpuvet, which is
// the subreaper) read from /proc each tick, its CPU time split into the main process and its
// workers, its I/O counters, and the system-wide signals (CPU busy and steal, PSI, network,
// memory). Counters of processes that exited stay in the tree's totals, so a worker that ends
// between two ticks does not make the sums go backwards.
#pragma once
#include <chrono>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "host/load_signals.hpp"
#include "host/process_info.hpp"
#include "host/steal.hpp"
#include "core/host_fs.hpp"
#include "core/run_process.hpp"
#include "core/run_timeline.hpp"

namespace gpuvet {

// PyTorch names its DataLoader workers (the kernel keeps 15 characters of the name):
// "pt_data_worker" (older releases), "pt_multiprocess_data_worker" -> "pt_multiprocess",
// "pt_thread_data_worker" -> "pt_thread_data_".
bool is_dataloader_worker_name(const std::string& comm);

// The most processes the table keeps (the report lists each with its CPU and I/O): a job that
// shells out all day would otherwise grow it without bound. gpuvet's own choice: a training job's
// tree is tens of processes; 1024 keeps every long-lived one and the report under a megabyte.
inline constexpr std::size_t kMaxProcessesKept = 1024;

class RunHostSampler {
public:
    // root: the subreaper (gpuvet's pid); job: the command's pid.
    RunHostSampler(HostFs fs, int root, int job);
    // Reads everything once; rates are over the time since the previous call (unmeasured on the
    // first). `gpu_pids`: processes NVML lists on the GPUs, so the main process is the one that
    // holds the GPU when the job's own process is a launcher.
    HostPoint sample(const std::set<int>& gpu_pids);
    void set_job(int job) { job_ = job; }
    // Pids of the tree at the last sample.
    const std::set<int>& tree() const { return tree_; }
    // Every process seen, ordered by CPU time, most first; at most kMaxProcessesKept.
    std::vector<TreeProcess> processes() const;
    // Ended processes left out of the table to keep it bounded (those with the least CPU).
    std::size_t processes_dropped() const { return dropped_; }
    // Why a signal could not be read, once per signal.
    const std::map<std::string, std::string>& absent() const { return absent_; }

private:
    struct Seen {
        TreeProcess info;
        std::uint64_t cpu_ticks = 0;
        std::uint64_t run_ns = 0, wait_ns = 0;
        bool reaped_by_root = false;  // its parent was gpuvet: its I/O is nobody else's
    };
    // What one tick's pass over the tree adds up.
    struct TreeDeltas {
        double cpu_ticks = 0, read = 0, rchar = 0, write = 0, run_ns = 0, wait_ns = 0;
        bool io_seen = false, sched_seen = false;
        std::map<int, double> cpu_now;  // this tick's CPU per process, cores
    };
    struct RoleCpu {
        double main = 0, workers = 0, busiest = 0;  // cores
    };
    void read_tree(HostPoint& h, const std::set<int>& gpu_pids, double dt_s);
    void forget_ended(const std::set<int>& tree, TreeDeltas& d);
    void account(int pid, const ProcessInfo& p, double dt_s, TreeDeltas& d);
    int main_process(const std::map<int, ProcessInfo>& live, const std::set<int>& tree, const std::set<int>& gpu_pids,
                     std::map<int, std::vector<int>>& children, const TreeDeltas& d) const;
    RoleCpu assign_roles(HostPoint& h, const std::map<int, ProcessInfo>& live, const std::set<int>& tree, int main,
                         const std::set<int>& workers, const TreeDeltas& d);
    void read_system(HostPoint& h, double dt_s);

    HostFs fs_;
    std::size_t dropped_ = 0;
    int root_, job_;
    std::map<int, Seen> seen_;
    std::set<int> tree_;
    std::optional<std::chrono::steady_clock::time_point> last_;
    std::optional<std::map<int, CpuTimes>> last_stat_;
    std::optional<PressureStat> last_psi_[3];
    std::optional<NetBytes> last_net_;
    std::map<std::string, std::string> absent_;
};

}  // namespace gpuvet
