#include "cli/output_guard.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>

#include "core/error.hpp"

namespace gpuvet {

namespace {
bool g_stdout_was_closed = false;
bool g_stdout_not_ours = false;
int g_report_lock_fd = -1;  // held until the process ends; the kernel drops the lock with it
}  // namespace

void guard_standard_streams() {
    for (int fd = 0; fd <= 2; ++fd) {
        if (::fcntl(fd, F_GETFD) != -1 || errno != EBADF) continue;
        if (fd == 1) g_stdout_was_closed = true;
        int n = ::open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);
        if (n >= 0 && n != fd) {
            ::dup2(n, fd);
            ::close(n);
        }
    }
    std::signal(SIGPIPE, SIG_IGN);
}

void claim_report_dir(const std::string& dir) {
    const std::string fix = "choose a folder you can write to, with free space, for --report";
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) throw usage_error("--report " + dir + ": cannot create the folder (" + ec.message() + ")", fix);
    if (!std::filesystem::is_directory(dir, ec)) throw usage_error("--report " + dir + ": not a folder", fix);
    // A probe file the size of a small report: permissions, read-only mounts and full disks all show here.
    std::string probe = (std::filesystem::path(dir) / ".gpuvet-probe.XXXXXX").string();
    int fd = ::mkostemp(probe.data(), O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        throw usage_error("--report " + dir + ": cannot write there (" + std::strerror(e) + ")", fix);
    }
    std::string block(16384, '\n');
    bool ok = ::write(fd, block.data(), block.size()) == ssize_t(block.size()) && ::fsync(fd) == 0;
    int e = errno;
    ::close(fd);
    ::unlink(probe.c_str());
    if (!ok) throw usage_error("--report " + dir + ": cannot write there (" + std::strerror(e) + ")", fix);

    // The folder itself is the lock (flock works on directories): nothing is left behind in it.
    int lfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (lfd < 0) {
        int le = errno;
        throw usage_error("--report " + dir + ": cannot open the folder (" + std::strerror(le) + ")", fix);
    }
    if (::flock(lfd, LOCK_EX | LOCK_NB) != 0) {
        ::close(lfd);
        throw usage_error("--report " + dir + ": another gpuvet run is writing its report there",
                          "wait for that run to finish, or give each run its own --report folder");
    }
    g_report_lock_fd = lfd;
}

void stdout_belongs_to_child() { g_stdout_not_ours = true; }

int finish_output(int code) {
    if (g_stdout_not_ours) return code;  // gpuvet printed nothing there: the code is the job's
    std::cout.flush();
    bool failed = std::cout.bad() || std::fflush(stdout) != 0 || std::ferror(stdout);
    int e = errno;
    if (g_stdout_was_closed) {
        std::cerr << "gpuvet: standard output is closed: the results could not be printed\n"
                     "  → run it with stdout open, or redirect it to a file (> report.txt)\n";
        return exit_code::could_not_run;
    }
    if (!failed) return code;
    if (e == EPIPE) return code;  // the reader has gone (| head): nothing more to say
    std::cerr << "gpuvet: writing the results to standard output failed (" << std::strerror(e)
              << ")\n"
                 "  → the output is incomplete: free space where stdout goes, or use --report DIR\n";
    return exit_code::could_not_run;
}

}  // namespace gpuvet
