#include "core/atomic_file.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <string>

#include "core/error.hpp"
#include "core/interrupt.hpp"

namespace gpuvet {

namespace {

namespace fs = std::filesystem;

constexpr int kMaxLinks = 40;  // as the kernel's own limit on nested symbolic links (ELOOP)

// `/dev/stdout` and its kin name a descriptor gpuvet already holds: -1 when `p` is not one.
int own_descriptor(const std::string& p) {
    if (p == "/dev/stdin") return 0;
    if (p == "/dev/stdout") return 1;
    if (p == "/dev/stderr") return 2;
    for (std::string_view prefix : {"/dev/fd/", "/proc/self/fd/"}) {
        if (p.rfind(prefix, 0) != 0) continue;
        std::string_view rest = std::string_view(p).substr(prefix.size());
        int n = -1;
        auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), n);
        if (ec == std::errc() && end == rest.data() + rest.size() && n >= 0) return n;
    }
    return -1;
}

// The kernel's rule for protected_symlinks, kept although gpuvet follows links itself: in a sticky
// folder anyone may write to (/tmp), a link is followed only when its owner is the follower or the
// folder's owner, so a link planted there cannot aim a root gpuvet at /etc/shadow.
bool may_follow(const fs::path& link, const struct stat& link_st) {
    struct stat dir {};
    fs::path parent = link.parent_path().empty() ? fs::path(".") : link.parent_path();
    if (::stat(parent.c_str(), &dir) != 0) return false;
    const bool shared_sticky = (dir.st_mode & S_ISVTX) && (dir.st_mode & S_IWOTH);
    return !shared_sticky || link_st.st_uid == ::geteuid() || link_st.st_uid == dir.st_uid;
}

[[noreturn]] void refuse(const fs::path& asked, const std::string& why, const std::string& fix) {
    throw usage_error("cannot write " + asked.string() + ": " + why, fix);
}

const char* kind_words(mode_t m) {
    if (S_ISDIR(m)) return "it is a directory";
    if (S_ISBLK(m)) return "it is a block device (a disk): gpuvet never writes a report over one";
    if (S_ISSOCK(m)) return "it is a socket";
    return "it is not a regular file, a character device or a FIFO";
}

void write_all(int fd, std::string_view content, const fs::path& path) {
    const char* p = content.data();
    std::size_t left = content.size();
    while (left > 0) {
        ssize_t n = ::write(fd, p, left);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            int e = errno;
            throw runtime_error("cannot write " + path.string() + " (write: " + std::strerror(e) + ")",
                                "choose a writable place with free space for the output");
        }
        p += n;
        left -= std::size_t(n);
    }
}

// Opens a character device or FIFO for writing. O_NONBLOCK only for the open: a FIFO with no
// reader fails at once (ENXIO) instead of blocking gpuvet until someone reads it.
int open_write_through(const fs::path& asked, const fs::path& target) {
    int fd = ::open(target.c_str(), O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        if (e == ENXIO)
            refuse(asked, "it is a FIFO that no process is reading", "start the reader first, or give a regular file");
        throw runtime_error("cannot write " + asked.string() + " (" + std::strerror(e) + ")",
                            "choose a path you may write to");
    }
    int flags = ::fcntl(fd, F_GETFL);
    if (flags >= 0) ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
    return fd;
}

void write_new_file(const fs::path& path, std::string_view content, mode_t mode) {
    auto dir = path.parent_path().empty() ? fs::path(".") : path.parent_path();
    // Appended rather than `"." + name + ...`: GCC 12 misreads that operator+ as an overlapping
    // memcpy (a false -Wrestrict).
    std::string hidden = ".";
    hidden += path.filename().string();
    hidden += ".XXXXXX";
    std::string tmpl = (dir / hidden).string();
    int fd = ::mkostemp(tmpl.data(), O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        throw runtime_error("cannot write " + path.string() + " (" + std::strerror(e) + ")",
                            "choose a writable folder with free space for the report");
    }
    CleanupPath on_second_signal(tmpl);  // a second Ctrl-C while the report is written leaves no temp file
    auto fail = [&](const char* what) {
        int e = errno;
        if (fd >= 0) ::close(fd);
        ::unlink(tmpl.c_str());
        throw runtime_error(std::string("cannot write ") + path.string() + " (" + what + ": " + std::strerror(e) + ")",
                            "choose a writable folder with free space for the report");
    };
    try {
        write_all(fd, content, path);
    } catch (...) {
        ::close(fd);
        ::unlink(tmpl.c_str());
        throw;
    }
    if (::fchmod(fd, mode) != 0) fail("chmod");
    if (::fsync(fd) != 0) fail("fsync");
    if (::close(fd) != 0) {
        fd = -1;
        fail("close");
    }
    fd = -1;
    if (::rename(tmpl.c_str(), path.c_str()) != 0) fail("rename");
}

}  // namespace

OutputTarget resolve_output_path(const fs::path& asked) {
    fs::path p = asked;
    for (int hop = 0; hop <= kMaxLinks; ++hop) {
        if (int fd = own_descriptor(p.string()); fd >= 0) return {OutputKind::Descriptor, p, fd};
        struct stat st {};
        if (::lstat(p.c_str(), &st) != 0) {
            if (errno != ENOENT) {
                int e = errno;
                refuse(asked, std::strerror(e), "choose a path in a folder that exists and that you may write to");
            }
            if (hop > 0)
                refuse(asked, "it is a symbolic link to " + p.string() + ", which does not exist",
                       "remove the link or point it at a file");
            return {OutputKind::NewFile, p, -1};
        }
        if (S_ISREG(st.st_mode)) return {OutputKind::Regular, p, -1};
        if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) return {OutputKind::WriteThrough, p, -1};
        if (!S_ISLNK(st.st_mode)) refuse(asked, kind_words(st.st_mode), "give the path of a file to write");
        if (!may_follow(p, st))
            refuse(asked, "it is a symbolic link of another user in a shared sticky folder (such as /tmp)",
                   "write somewhere else: a link planted there could point at any file");
        std::error_code ec;
        fs::path next = fs::read_symlink(p, ec);
        if (ec) refuse(asked, "its link cannot be read (" + ec.message() + ")", "give the path of a file to write");
        p = next.is_absolute() ? next : p.parent_path() / next;
    }
    refuse(asked, "its symbolic links nest more than 40 deep (a loop?)", "give the path of a file to write");
}

void write_file_atomically(const fs::path& path, std::string_view content) {
    OutputTarget t = resolve_output_path(path);
    switch (t.kind) {
        case OutputKind::Descriptor: write_all(t.fd, content, path); return;
        case OutputKind::WriteThrough: {
            int fd = open_write_through(path, t.path);
            try {
                write_all(fd, content, path);
            } catch (...) {
                ::close(fd);
                throw;
            }
            ::close(fd);
            return;
        }
        case OutputKind::Regular: {
            struct stat st {};
            mode_t mode = ::stat(t.path.c_str(), &st) == 0 ? (st.st_mode & 07777) : 0644;
            write_new_file(t.path, content, mode);
            return;
        }
        case OutputKind::NewFile: write_new_file(t.path, content, 0644); return;
    }
}

int open_output_stream(const fs::path& path, std::string_view option) {
    OutputTarget t = resolve_output_path(path);
    std::string name = std::string(option) + " " + path.string();
    if (t.kind == OutputKind::Descriptor) {
        int fd = ::fcntl(t.fd, F_DUPFD_CLOEXEC, 3);
        if (fd < 0) refuse(path, std::string("descriptor ") + std::to_string(t.fd) + " is not open", "give a file");
        return fd;
    }
    if (t.kind == OutputKind::WriteThrough) return open_write_through(path, t.path);
    // Not O_TRUNC at open: a file another gpuvet is writing is refused before it is emptied.
    int fd = ::open(t.path.c_str(), O_WRONLY | O_CREAT | O_NOCTTY | O_CLOEXEC, 0644);
    if (fd < 0) {
        int e = errno;
        throw input_error(name + ": cannot write there (" + std::strerror(e) + ")",
                          "choose a file in a folder you can write to");
    }
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
        ::close(fd);
        throw usage_error(name + ": another process (a second gpuvet?) is writing this file",
                          "give each run its own file");
    }
    if (::ftruncate(fd, 0) != 0) {
        int e = errno;
        ::close(fd);
        throw input_error(name + ": cannot empty it (" + std::strerror(e) + ")", "choose another file");
    }
    return fd;
}

}  // namespace gpuvet
