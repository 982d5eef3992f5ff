#include "core/input_file.hpp"

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/error.hpp"
#include "core/strings.hpp"

namespace gpuvet {

namespace {

std::atomic<const std::atomic<bool>*> g_stop{nullptr};

bool stopped() {
    const std::atomic<bool>* s = g_stop.load();
    return s && s->load();
}

struct Fd {
    int fd;
    ~Fd() {
        if (fd >= 0) ::close(fd);
    }
};

}  // namespace

void set_input_stop_flag(const std::atomic<bool>* stop) { g_stop.store(stop); }

std::string read_input_file(const std::filesystem::path& path, std::string_view option, std::size_t limit) {
    const std::string opt(option), name = path.string();
    auto too_big = [&] {
        return input_error(
            opt + " " + name + ": larger than the " + format_bytes(double(limit)) + " limit for input files",
            "pass the file itself (a " + opt.substr(opt.find_first_not_of('-')) +
                " file is a few KiB), not a device or an archive");
    };
    // Non-blocking, so a pipe or FIFO without data never blocks past a Ctrl-C.
    Fd f{::open(name.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC)};
    if (f.fd < 0)
        throw input_error("cannot read " + name + ": " + std::strerror(errno), "check the path given to " + opt);
    struct stat st {};
    if (::fstat(f.fd, &st) == 0) {
        if (S_ISDIR(st.st_mode)) throw input_error(name + " is a folder", "give " + opt + " a file");
        if (S_ISREG(st.st_mode) && std::uint64_t(st.st_size) > limit) throw too_big();
    }
    std::string out;
    char buf[65536];
    for (;;) {
        if (stopped()) throw runtime_error("interrupted while reading " + name, "run the command again to finish it");
        ssize_t n = ::read(f.fd, buf, sizeof buf);
        if (n > 0) {
            if (out.size() + std::size_t(n) > limit) throw too_big();
            out.append(buf, std::size_t(n));
        } else if (n == 0) {
            return out;
        } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
            pollfd p{f.fd, POLLIN, 0};
            ::poll(&p, 1, 100);  // wake up now and then to look at the stop flag
        } else if (errno != EINTR) {
            throw input_error("cannot read " + name + ": " + std::strerror(errno), "check the path given to " + opt);
        }
    }
}

}  // namespace gpuvet
