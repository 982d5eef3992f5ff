// The job `gpuvet run` wraps: started with its stdin/stdout/stderr and environment untouched, its
// whole process tree kept under gpuvet (PR_SET_CHILD_SUBREAPER: orphans and double-forked
// daemons are re-parented to gpuvet instead of init), Ctrl-C/SIGTERM forwarded to it, and every
// process of the tree reaped. One waiter thread owns all of that: it takes SIGINT, SIGTERM, SIGHUP
// and SIGCHLD with sigtimedwait (they are blocked in every other thread), so nothing here runs in
// a signal handler. A stop signal also sets the stop flag (core/interrupt.hpp), so that a driver call
// the main thread waits for is given up within seconds.
#pragma once
#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/run_process.hpp"

namespace gpuvet {

// The exit code a shell gives for that end: the status itself, or 128 + N for a death by signal N.
int shell_exit_code(const JobEnd& e);
// The shell's code for a command that could not be executed: 127 not found, 126 found but not runnable.
int exec_failure_exit_code(int err);
// "command not found" / "permission denied (not executable)" / the OS text.
std::string exec_failure_text(int err);

class JobProcess {
public:
    // Blocks the signals the waiter takes in the calling thread (threads started afterwards
    // inherit the mask): call before any other thread exists. Becomes the subreaper.
    JobProcess();
    ~JobProcess();  // stops the waiter, restores the signal mask
    JobProcess(const JobProcess&) = delete;
    JobProcess& operator=(const JobProcess&) = delete;

    // Before start(): waits at most `up_to` for a stop signal (SIGINT, SIGTERM, SIGHUP), which is
    // blocked and would otherwise wait for the job. Returns it (and sets the stop flag), or 0.
    int wait_for_stop(std::chrono::milliseconds up_to);
    // Called on the waiter thread once no process of the job is left (set before start()): the
    // main thread may be inside a driver call then, which need not be waited for any longer.
    void on_tree_done(std::function<void()> f) { on_tree_done_ = std::move(f); }

    // Starts argv[0] (searched in PATH) with default signal dispositions and an empty mask.
    // Returns 0, or the errno of the failed exec (ENOENT, EACCES...).
    int start(const std::vector<std::string>& argv);
    pid_t pid() const { return pid_; }

    // Set once no child is left: the main process and every orphan re-parented to gpuvet ended.
    const std::atomic<bool>& tree_done() const { return tree_done_; }
    // Seconds from the start to the end of the job's whole tree; none while it runs.
    std::optional<double> tree_end_s() const {
        double t = tree_end_s_.load();
        return t >= 0 ? std::optional<double>(t) : std::nullopt;
    }
    std::optional<JobEnd> main_end() const;
    int orphans_reaped() const { return orphans_reaped_.load(); }
    int signals_forwarded() const { return forwarded_.load(); }
    // The last signal gpuvet was sent (0: none), to say in the report that the run was stopped.
    int stop_signal() const { return stop_signal_.load(); }
    // gpuvet escalated to SIGKILL (the third stop signal): the job ignored the first two.
    bool killed_by_gpuvet() const { return signals_seen_.load() >= 3; }

private:
    void wait_loop();
    void reap();
    void forward(int sig, bool from_terminal);

    pid_t pid_ = -1;
    std::chrono::steady_clock::time_point started_{};
    std::thread waiter_;
    std::atomic<bool> tree_done_{false}, quit_{false};
    std::atomic<int> orphans_reaped_{0}, forwarded_{0}, stop_signal_{0}, signals_seen_{0};
    std::atomic<double> tree_end_s_{-1};  // an atomic cannot hold an optional: negative until the end
    mutable std::mutex mu_;
    std::optional<JobEnd> main_end_;
    std::function<void()> on_tree_done_;
    bool mask_saved_ = false;
    unsigned char old_mask_[128] = {};  // sigset_t, kept opaque here
};

// Every process whose parent chain leads to `root` (root itself excluded), from one /proc scan.
std::vector<int> descendants_of(int root);

}  // namespace gpuvet
