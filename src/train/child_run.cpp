#include "train/child_run.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "core/interrupt.hpp"

extern char** environ;

namespace gpuvet {

namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

constexpr std::size_t kTailLines = 40;
constexpr std::size_t kLineMax = 1 << 20;  // a longer line is cut: a runaway child cannot fill memory

// Splits a stream into lines as it arrives.
struct LineReader {
    int fd = -1;
    std::string partial;
    bool open() const { return fd >= 0; }
    // Reads what is there; calls `line` for each whole line. Returns false at EOF.
    template <class F>
    bool pump(F&& line) {
        char buf[65536];
        ssize_t n = read(fd, buf, sizeof buf);
        if (n < 0 && (errno == EINTR || errno == EAGAIN)) return true;
        if (n <= 0) {
            if (!partial.empty()) line(partial);
            partial.clear();
            close(fd);
            fd = -1;
            return false;
        }
        partial.append(buf, std::size_t(n));
        std::size_t pos;
        while ((pos = partial.find('\n')) != std::string::npos) {
            line(partial.substr(0, pos));
            partial.erase(0, pos + 1);
        }
        if (partial.size() > kLineMax) partial.resize(kLineMax);
        return true;
    }
};

void keep(std::deque<std::string>& tail, std::string s) {
    if (s.size() > 2000) s = s.substr(0, 2000) + "...";
    tail.push_back(std::move(s));
    if (tail.size() > kTailLines) tail.pop_front();
}

std::vector<char*> c_strings(std::vector<std::string>& v) {
    std::vector<char*> out;
    for (auto& s : v) out.push_back(s.data());
    out.push_back(nullptr);
    return out;
}

std::vector<std::string> child_env(const ChildOptions& o) {
    std::vector<std::string> env;
    for (char** e = environ; e && *e; ++e) {
        std::string kv = *e;
        bool replaced = false;
        for (auto& [k, v] : o.env) replaced = replaced || kv.compare(0, k.size() + 1, k + "=") == 0;
        if (!replaced) env.push_back(std::move(kv));
    }
    for (auto& [k, v] : o.env) env.push_back(k + "=" + v);
    return env;
}

// In the child, between fork and exec: only async-signal-safe calls.
[[noreturn]] void exec_child(char** argv, char** envp, int out_w, int err_w, int status_w) {
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    signal(SIGPIPE, SIG_DFL);
    int null = open("/dev/null", O_RDONLY);
    if (null >= 0) dup2(null, STDIN_FILENO);
    dup2(out_w, STDOUT_FILENO);
    dup2(err_w, STDERR_FILENO);
    execve(argv[0], argv, envp);
    int e = errno;
    (void)!write(status_w, &e, sizeof e);
    _exit(127);
}

// The processes whose parent is gpuvet: with the subreaper flag set, orphans of the child's tree
// (double-forked, setsid daemons) become gpuvet's children instead of init's.
std::vector<pid_t> own_children() {
    std::vector<pid_t> out;
    const pid_t self = getpid();
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator("/proc", ec)) {
        const std::string name = e.path().filename().string();
        if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
        std::ifstream f(e.path() / "stat");
        std::string stat((std::istreambuf_iterator<char>(f)), {});
        std::size_t close = stat.rfind(')');
        if (close == std::string::npos) continue;
        std::istringstream rest(stat.substr(close + 1));
        char state = 0;
        long ppid = 0;
        if (rest >> state >> ppid && ppid == self) out.push_back(pid_t(std::stol(name)));
    }
    return out;
}

// Kills and reaps what the benchmark left behind outside its group (a daemon that called setsid),
// until a look finds none; bounded, so a process that forks without end cannot hold gpuvet.
void end_leftovers() {
    for (auto t0 = Clock::now(); since(t0) < 2;) {
        std::vector<pid_t> left = own_children();
        if (left.empty()) return;
        for (pid_t p : left) kill(p, SIGKILL);
        for (pid_t p : left) waitpid(p, nullptr, 0);
    }
}

// Ends the whole group: SIGTERM, a grace period, then SIGKILL; reaps the child.
void end_group(pid_t pid, int& status) {
    kill(-pid, SIGTERM);
    auto t0 = Clock::now();
    while (since(t0) < 3) {
        if (waitpid(pid, &status, WNOHANG) == pid) break;
        usleep(20000);
    }
    kill(-pid, SIGKILL);
    if (waitpid(pid, &status, WNOHANG) == 0) waitpid(pid, &status, 0);
}

}  // namespace

std::string last_lines(const std::vector<std::string>& lines, std::size_t n) {
    std::string out;
    std::size_t from = lines.size() > n ? lines.size() - n : 0;
    for (std::size_t i = from; i < lines.size(); ++i) {
        if (lines[i].empty()) continue;
        out += (out.empty() ? "" : " | ") + lines[i];
    }
    return out;
}

namespace {

// What is still in the pipes once the child is gone (every writer is, unless one left the group):
// read for up to a second, then close.
template <class Out, class Err>
void drain_and_close(LineReader& so, LineReader& se, Out& on_out, Err& on_err) {
    for (auto t1 = Clock::now(); (so.open() || se.open()) && since(t1) < 1;) {
        pollfd fds[2] = {{so.fd, POLLIN, 0}, {se.fd, POLLIN, 0}};
        poll(fds, 2, 50);
        if (so.open() && fds[0].revents) so.pump(on_out);
        if (se.open() && fds[1].revents) se.pump(on_err);
    }
    if (so.open()) close(so.fd);
    if (se.open()) close(se.fd);
}

}  // namespace

ChildOutcome run_child(const ChildOptions& o) {
    ChildOutcome r;
    auto t0 = Clock::now();
    int out[2], err[2], st[2];
    if (pipe2(out, O_CLOEXEC) != 0) return r.start_error = std::strerror(errno), r;
    if (pipe2(err, O_CLOEXEC) != 0 || pipe2(st, O_CLOEXEC) != 0) {
        r.start_error = std::strerror(errno);
        close(out[0]), close(out[1]);
        return r;
    }
    std::vector<std::string> args = o.argv, env = child_env(o);
    auto argv = c_strings(args), envp = c_strings(env);
    prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);  // the child's orphans come back to gpuvet
    pid_t pid = fork();
    if (pid == 0) exec_child(argv.data(), envp.data(), out[1], err[1], st[1]);
    close(out[1]), close(err[1]), close(st[1]);
    if (pid < 0) {
        r.start_error = std::string("fork failed: ") + std::strerror(errno);
        close(out[0]), close(err[0]), close(st[0]);
        return r;
    }
    setpgid(pid, pid);  // also here: the group exists whichever of the two runs first
    CleanupProcessGroup on_second_signal(pid);
    int exec_errno = 0;
    if (read(st[0], &exec_errno, sizeof exec_errno) == sizeof exec_errno) {
        close(st[0]), close(out[0]), close(err[0]);
        int status = 0;
        waitpid(pid, &status, 0);
        r.start_error = "could not execute " + o.argv[0] + ": " + std::strerror(exec_errno);
        return r;
    }
    close(st[0]);

    LineReader so{out[0], {}}, se{err[0], {}};
    std::deque<std::string> otail, etail;
    auto last_beat = Clock::now();
    auto on_out = [&](const std::string& l) {
        if (l.rfind(kProgressMark, 0) == 0) {
            last_beat = Clock::now();
            if (o.on_progress) o.on_progress(l.substr(std::strlen(kProgressMark)));
        } else if (l.rfind(kResultMark, 0) == 0) {
            r.result = l.substr(std::strlen(kResultMark));
        } else {
            keep(otail, l);
        }
    };
    auto on_err = [&](const std::string& l) { keep(etail, l); };
    int status = 0;
    bool reaped = false;
    while (!reaped) {
        pollfd fds[2] = {{so.fd, POLLIN, 0}, {se.fd, POLLIN, 0}};
        poll(fds, 2, 100);
        if (so.open() && (fds[0].revents & (POLLIN | POLLHUP | POLLERR))) so.pump(on_out);
        if (se.open() && (fds[1].revents & (POLLIN | POLLHUP | POLLERR))) se.pump(on_err);
        if (waitpid(pid, &status, WNOHANG) == pid) {
            reaped = true;
            r.end = WIFSIGNALED(status) ? ChildEnd::Signaled : ChildEnd::Exited;
        } else if (o.stop && o.stop->load()) {
            r.end = ChildEnd::Stopped;
        } else if (since(last_beat) > o.idle_timeout_s) {
            r.end = ChildEnd::Hung;
        } else if (since(t0) > o.total_timeout_s) {
            r.end = ChildEnd::TimedOut;
        } else {
            continue;
        }
        if (!reaped) end_group(pid, status), reaped = true;
    }
    kill(-pid, SIGKILL);  // whatever the child left running in its group
    end_leftovers();      // and outside it
    drain_and_close(so, se, on_out, on_err);
    if (r.end == ChildEnd::Exited) r.exit_status = WEXITSTATUS(status);
    if (r.end == ChildEnd::Signaled) r.signal = WTERMSIG(status);
    r.stderr_tail.assign(etail.begin(), etail.end());
    r.stdout_tail.assign(otail.begin(), otail.end());
    r.elapsed_s = since(t0);
    return r;
}

}  // namespace gpuvet
