#include "monitor/job_process.hpp"

#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>

#include "core/interrupt.hpp"
#include "host/process_info.hpp"

extern char** environ;

namespace gpuvet {

namespace {

sigset_t taken_signals() {
    sigset_t s;
    sigemptyset(&s);
    for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGCHLD}) sigaddset(&s, sig);
    return s;
}

}  // namespace

int shell_exit_code(const JobEnd& e) { return e.signaled ? 128 + e.code : e.code; }

int exec_failure_exit_code(int err) { return (err == ENOENT || err == ENOTDIR) ? 127 : 126; }

std::string exec_failure_text(int err) {
    if (err == ENOENT || err == ENOTDIR) return "command not found";
    if (err == EACCES) return "permission denied (not an executable file)";
    if (err == ENOEXEC) return "not an executable format (a script without a #! line?)";
    return std::strerror(err);
}

std::vector<int> descendants_of(int root) {
    HostFs fs;
    std::map<int, int> parent;
    for (int pid : list_pids(fs)) {
        auto stat = fs.read("/proc/" + std::to_string(pid) + "/stat");
        if (!stat) continue;
        if (auto p = parse_proc_pid_stat(*stat)) parent[pid] = p->ppid;
    }
    auto parent_of = [&](int pid) -> std::optional<int> {
        auto it = parent.find(pid);
        return it == parent.end() ? std::nullopt : std::optional<int>(it->second);
    };
    std::vector<int> out;
    for (auto& [pid, ppid] : parent)
        if (descends_from(pid, root, parent_of)) out.push_back(pid);
    return out;
}

JobProcess::JobProcess() {
    sigset_t s = taken_signals(), old;
    static_assert(sizeof(sigset_t) <= sizeof(old_mask_));
    if (pthread_sigmask(SIG_BLOCK, &s, &old) == 0) {
        std::memcpy(old_mask_, &old, sizeof old);
        mask_saved_ = true;
    }
    // Orphans of the job come back to gpuvet, so the tree stays ours to sample and to reap.
    ::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
}

JobProcess::~JobProcess() {
    quit_ = true;
    if (waiter_.joinable()) waiter_.join();
    if (mask_saved_) {
        sigset_t old;
        std::memcpy(&old, old_mask_, sizeof old);
        pthread_sigmask(SIG_SETMASK, &old, nullptr);
    }
}

int JobProcess::start(const std::vector<std::string>& argv) {
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    sigset_t empty, defaults;
    sigemptyset(&empty);
    sigemptyset(&defaults);
    // gpuvet ignores SIGPIPE and blocks the signals its waiter takes: the job gets neither.
    for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGCHLD, SIGPIPE, SIGQUIT}) sigaddset(&defaults, sig);
    posix_spawnattr_setsigmask(&attr, &empty);
    posix_spawnattr_setsigdefault(&attr, &defaults);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    started_ = std::chrono::steady_clock::now();
    int err = posix_spawnp(&pid_, args[0], nullptr, &attr, args.data(), environ);
    posix_spawnattr_destroy(&attr);
    if (err != 0) {
        pid_ = -1;
        return err;
    }
    waiter_ = std::thread([this] { wait_loop(); });
    return 0;
}

std::optional<JobEnd> JobProcess::main_end() const {
    std::lock_guard<std::mutex> lock(mu_);
    return main_end_;
}

void JobProcess::reap() {
    while (true) {
        int status = 0;
        pid_t p = ::waitpid(-1, &status, WNOHANG);
        if (p == 0) return;
        if (p < 0) {
            if (errno == EINTR) continue;
            if (errno == ECHILD && !tree_done_) {
                tree_end_s_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
                tree_done_ = true;
            }
            return;
        }
        if (p == pid_) {
            JobEnd e;
            e.signaled = WIFSIGNALED(status);
            e.code = e.signaled ? WTERMSIG(status) : WEXITSTATUS(status);
            e.at_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
            std::lock_guard<std::mutex> lock(mu_);
            main_end_ = e;
        } else {
            ++orphans_reaped_;
        }
    }
}

int JobProcess::wait_for_stop(std::chrono::milliseconds up_to) {
    sigset_t s;
    sigemptyset(&s);
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&s, sig);
    auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(up_to).count();
    timespec slice{static_cast<time_t>(ns / 1000000000), static_cast<long>(ns % 1000000000)};
    int sig = sigtimedwait(&s, nullptr, &slice);
    if (sig <= 0) return 0;
    stop_signal_ = sig;
    ++signals_seen_;
    request_stop();
    return sig;
}

void JobProcess::forward(int sig, bool from_terminal) {
    stop_signal_ = sig;
    request_stop();  // a driver call the main thread waits for is given up within seconds
    int seen = ++signals_seen_;
    // A third stop means the job ignores the polite ones.
    int send = seen >= 3 ? SIGKILL : sig;
    std::vector<int> tree = descendants_of(::getpid());
    for (int p : tree) {
        // Ctrl-C at the terminal already reached every process in gpuvet's foreground group;
        // sending it again would make Python raise KeyboardInterrupt twice.
        if (from_terminal && send != SIGKILL && ::getpgid(p) == ::getpgrp()) continue;
        if (::kill(p, send) == 0) ++forwarded_;
    }
    // Said as it happens: a job that ignores the signal otherwise looks like gpuvet ignoring it.
    std::string say = seen >= 3   ? "gpuvet: third stop signal: sending SIGKILL to the job's processes\n"
                      : seen == 2 ? "gpuvet: the job is still running; one more stop signal kills it (SIGKILL)\n"
                                  : "gpuvet: " +
                                        std::string(sig == SIGINT    ? "SIGINT"
                                                    : sig == SIGTERM ? "SIGTERM"
                                                                     : "SIGHUP") +
                                        " passed on to the job; a third stop signal kills it (SIGKILL)\n";
    [[maybe_unused]] ssize_t n = ::write(STDERR_FILENO, say.data(), say.size());
}

void JobProcess::wait_loop() {
    sigset_t s = taken_signals();
    timespec slice{0, 100 * 1000 * 1000};
    while (!quit_ && !tree_done_) {
        siginfo_t info{};
        int sig = sigtimedwait(&s, &info, &slice);
        if (sig == SIGINT || sig == SIGTERM || sig == SIGHUP) forward(sig, info.si_code == SI_KERNEL);
        reap();
    }
    if (tree_done_ && on_tree_done_) on_tree_done_();
}

}  // namespace gpuvet
