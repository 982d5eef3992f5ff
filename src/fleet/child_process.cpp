#include "fleet/child_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <string_view>
#include <thread>

#include "core/error.hpp"

extern char** environ;

namespace gpuvet {

namespace {

void close_fd(int& fd) {
    if (fd >= 0) ::close(fd);
    fd = -1;
}

int status_of(int ws) { return WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws); }

}  // namespace

ChildProcess::ChildProcess(const std::vector<std::string>& argv, const std::vector<std::string>& drop_env) {
    int out[2], err[2];
    if (::pipe2(out, O_CLOEXEC) != 0) throw runtime_error("cannot create a pipe: " + std::string(strerror(errno)), "");
    if (::pipe2(err, O_CLOEXEC) != 0) {
        ::close(out[0]), ::close(out[1]);
        throw runtime_error("cannot create a pipe: " + std::string(strerror(errno)), "");
    }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, out[1], 1);
    posix_spawn_file_actions_adddup2(&fa, err[1], 2);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    sigset_t empty, defaults;
    sigemptyset(&empty);
    sigemptyset(&defaults);
    sigaddset(&defaults, SIGINT);
    sigaddset(&defaults, SIGTERM);
    sigaddset(&defaults, SIGPIPE);
    posix_spawnattr_setsigmask(&attr, &empty);
    posix_spawnattr_setsigdefault(&attr, &defaults);
    posix_spawnattr_setpgroup(&attr, 0);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP);
    std::vector<char*> args;
    for (auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    std::vector<char*> env;
    for (char** e = environ; *e; ++e) {
        std::string_view var(*e);
        bool dropped = false;
        for (auto& name : drop_env)
            dropped = dropped || (var.size() > name.size() && var.starts_with(name) && var[name.size()] == '=');
        if (!dropped) env.push_back(*e);
    }
    env.push_back(nullptr);
    int rc = posix_spawnp(&pid_, args[0], &fa, &attr, args.data(), env.data());
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&attr);
    ::close(out[1]), ::close(err[1]);
    out_ = out[0], err_ = err[0];
    if (rc != 0) {
        close_fd(out_), close_fd(err_);
        pid_ = -1;
        throw runtime_error("cannot start " + argv[0] + ": " + strerror(rc),
                            "install Slurm's client commands (Debian: slurm-client) and put them in PATH");
    }
}

ChildProcess::~ChildProcess() {
    if (pid_ > 0 && !status_ && !killed_) {
        ::kill(-pid_, SIGKILL);
        wait_exit(kReapWaitS);  // not reaped by then: left to init when gpuvet exits
    }
    close_fd(out_), close_fd(err_);
}

bool ChildProcess::read_ready(int& fd, std::string& into) {
    if (fd < 0) return false;
    char buf[65536];
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n > 0) {
        into.append(buf, std::size_t(n));
        return true;
    }
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) return true;
    close_fd(fd);
    return false;
}

void ChildProcess::signal_group(int sig) {
    if (pid_ > 0 && !status_) ::kill(-pid_, sig);
    killed_ = killed_ || sig == SIGKILL;
}

std::optional<int> ChildProcess::poll_exit() {
    if (status_ || pid_ <= 0) return status_;
    int ws;
    if (::waitpid(pid_, &ws, WNOHANG) == pid_) status_ = status_of(ws);
    return status_;
}

std::optional<int> ChildProcess::wait_exit(double timeout_s) {
    auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
    while (!poll_exit()) {
        if (std::chrono::steady_clock::now() >= end) return std::nullopt;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return status_;
}

CommandResult run_command(const std::vector<std::string>& argv, double timeout_s) {
    CommandResult r;
    std::optional<ChildProcess> child;
    try {
        child.emplace(argv);
    } catch (const Error& e) {
        r.err = e.what();
        return r;
    }
    int out = child->out_fd(), err = child->err_fd();
    auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
    while (out >= 0 || err >= 0) {
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(end - std::chrono::steady_clock::now());
        if (left.count() <= 0) break;
        pollfd p[2] = {{out, POLLIN, 0}, {err, POLLIN, 0}};
        if (::poll(p, 2, int(std::min<long long>(left.count(), 200))) < 0 && errno != EINTR) break;
        if (p[0].revents) child->read_ready(out, r.out);
        if (p[1].revents) child->read_ready(err, r.err);
    }
    auto left_s = std::chrono::duration<double>(end - std::chrono::steady_clock::now()).count();
    auto st = child->wait_exit(std::max(0.0, left_s));
    if (!st) {
        child->signal_group(SIGKILL);
        child->wait_exit(kReapWaitS);
        r.err += argv[0] + " did not finish within " + std::to_string(int(timeout_s)) + " s";
        st = 137;
    }
    r.status = *st;
    return r;
}

}  // namespace gpuvet
