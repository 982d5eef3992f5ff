#include "core/atomic_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "core/error.hpp"
#include "core/interrupt.hpp"

namespace gpuvet {

void write_file_atomically(const std::filesystem::path& path, std::string_view content) {
    auto dir = path.parent_path().empty() ? std::filesystem::path(".") : path.parent_path();
    // Appended rather than `"." + name + ...`: GCC 12 misreads that operator+ as an overlapping
    // memcpy (a false -Wrestrict).
    std::string hidden = ".";
    hidden += path.filename().string();
    hidden += ".XXXXXX";
    std::string tmpl = (dir / hidden).string();
    int fd = ::mkstemp(tmpl.data());
    auto fail = [&](const char* what) {
        int e = errno;
        if (fd >= 0) ::close(fd);
        ::unlink(tmpl.c_str());
        throw runtime_error(std::string("cannot write ") + path.string() + " (" + what + ": " + std::strerror(e) + ")",
                            "choose a writable folder with free space for the report");
    };
    if (fd < 0) {
        int e = errno;
        throw runtime_error("cannot write " + path.string() + " (" + std::strerror(e) + ")",
                            "choose a writable folder with free space for the report");
    }
    CleanupPath on_second_signal(tmpl);  // a second Ctrl-C while the report is written leaves no temp file
    const char* p = content.data();
    std::size_t left = content.size();
    while (left > 0) {
        ssize_t n = ::write(fd, p, left);
        if (n < 0) {
            if (errno == EINTR) continue;
            fail("write");
        }
        p += n;
        left -= std::size_t(n);
    }
    if (::fchmod(fd, 0644) != 0) fail("chmod");
    if (::fsync(fd) != 0) fail("fsync");
    if (::close(fd) != 0) {
        fd = -1;
        fail("close");
    }
    fd = -1;
    if (::rename(tmpl.c_str(), path.c_str()) != 0) fail("rename");
}

}  // namespace gpuvet
