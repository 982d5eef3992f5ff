// Every kind of path an output option may name (docs/reports.md, "Output files"), in a private
// temporary folder: device nodes are made there with mknod, never the machine's own /dev.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include "core/atomic_file.hpp"
#include "core/error.hpp"

using namespace gpuvet;
namespace fs = std::filesystem;

namespace {

struct TempDir {
    fs::path path;
    TempDir() {
        std::string t = (fs::temp_directory_path() / "gpuvet-output-XXXXXX").string();
        path = ::mkdtemp(t.data());
    }
    ~TempDir() { fs::remove_all(path); }
};

std::string slurp(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
}

int entries(const fs::path& dir) {
    int n = 0;
    for (auto& e : fs::directory_iterator(dir)) (void)e, ++n;
    return n;
}

ErrorKind kind_of_failure(const fs::path& p) {
    try {
        write_file_atomically(p, "x");
    } catch (const Error& e) {
        return e.kind();
    }
    return ErrorKind::Internal;  // did not throw
}

}  // namespace

TEST(OutputFile, RegularFileReplacedAtomicallyKeepingItsMode) {
    TempDir d;
    fs::path p = d.path / "r.json";
    write_file_atomically(p, "first");
    ::chmod(p.c_str(), 0600);
    write_file_atomically(p, "second");
    EXPECT_EQ(slurp(p), "second");
    struct stat st {};
    ASSERT_EQ(::stat(p.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0600u);
    EXPECT_EQ(entries(d.path), 1);  // no temporary file left
}

TEST(OutputFile, SymlinkIsFollowedAndStaysALink) {
    TempDir d;
    fs::create_directory(d.path / "keep");
    fs::path target = d.path / "keep" / "keep.txt";
    write_file_atomically(target, "old");
    fs::create_symlink("keep/keep.txt", d.path / "out_link.html");
    write_file_atomically(d.path / "out_link.html", "new");
    EXPECT_TRUE(fs::is_symlink(d.path / "out_link.html"));
    EXPECT_EQ(slurp(target), "new");
    EXPECT_EQ(entries(d.path / "keep"), 1);
    // A link to a link is followed too.
    fs::create_symlink("out_link.html", d.path / "second_link");
    write_file_atomically(d.path / "second_link", "newer");
    EXPECT_EQ(slurp(target), "newer");
}

TEST(OutputFile, DanglingLinkLoopDirectoryAndSocketAreRefusedAsUsage) {
    TempDir d;
    fs::create_symlink("nowhere.txt", d.path / "dangling");
    EXPECT_EQ(kind_of_failure(d.path / "dangling"), ErrorKind::Usage);
    EXPECT_FALSE(fs::exists(d.path / "nowhere.txt"));
    fs::create_symlink("loop_b", d.path / "loop_a");
    fs::create_symlink("loop_a", d.path / "loop_b");
    EXPECT_EQ(kind_of_failure(d.path / "loop_a"), ErrorKind::Usage);
    fs::create_directory(d.path / "adir");
    EXPECT_EQ(kind_of_failure(d.path / "adir"), ErrorKind::Usage);
    EXPECT_TRUE(fs::is_directory(d.path / "adir"));

    int s = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::string sock = (d.path / "sock").string();
    ASSERT_LT(sock.size(), sizeof addr.sun_path);
    std::strcpy(addr.sun_path, sock.c_str());
    ASSERT_EQ(::bind(s, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    EXPECT_EQ(kind_of_failure(sock), ErrorKind::Usage);
    struct stat st {};
    ASSERT_EQ(::lstat(sock.c_str(), &st), 0);
    EXPECT_TRUE(S_ISSOCK(st.st_mode));
    ::close(s);
}

TEST(OutputFile, FifoIsWrittenThroughNeverReplaced) {
    TempDir d;
    fs::path fifo = d.path / "myfifo";
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    // Nobody reads it: refused at once, not waited on.
    EXPECT_EQ(kind_of_failure(fifo), ErrorKind::Usage);
    int reader = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
    ASSERT_GE(reader, 0);
    write_file_atomically(fifo, "through the fifo");
    char buf[64] = {};
    ssize_t n = ::read(reader, buf, sizeof buf - 1);
    ::close(reader);
    EXPECT_EQ(std::string(buf, n > 0 ? std::size_t(n) : 0), "through the fifo");
    struct stat st {};
    ASSERT_EQ(::lstat(fifo.c_str(), &st), 0);
    EXPECT_TRUE(S_ISFIFO(st.st_mode));
    EXPECT_EQ(entries(d.path), 1);
}

TEST(OutputFile, DeviceNodesAreWrittenThroughOrRefusedNeverReplaced) {
    if (::geteuid() != 0) GTEST_SKIP() << "mknod needs root";
    TempDir d;
    fs::path null_node = d.path / "mynull", full_node = d.path / "myfull", disk = d.path / "mydisk";
    ASSERT_EQ(::mknod(null_node.c_str(), S_IFCHR | 0666, makedev(1, 3)), 0);
    ASSERT_EQ(::mknod(full_node.c_str(), S_IFCHR | 0666, makedev(1, 7)), 0);
    ASSERT_EQ(::mknod(disk.c_str(), S_IFBLK | 0600, makedev(7, 200)), 0);  // a loop device number
    write_file_atomically(null_node, "<html>report</html>");
    EXPECT_EQ(kind_of_failure(full_node), ErrorKind::Runtime);  // ENOSPC, reported
    EXPECT_EQ(kind_of_failure(disk), ErrorKind::Usage);
    // A symlink to a device node is followed to the node, which stays.
    fs::create_symlink("mynull", d.path / "link_to_null");
    write_file_atomically(d.path / "link_to_null", "x");
    for (const fs::path& p : {null_node, full_node}) {
        struct stat st {};
        ASSERT_EQ(::lstat(p.c_str(), &st), 0);
        EXPECT_TRUE(S_ISCHR(st.st_mode)) << p;
    }
    struct stat st {};
    ASSERT_EQ(::lstat(disk.c_str(), &st), 0);
    EXPECT_TRUE(S_ISBLK(st.st_mode));
    EXPECT_EQ(entries(d.path), 4);
}

TEST(OutputFile, OwnDescriptorsAreWrittenTo) {
    int p[2];
    ASSERT_EQ(::pipe(p), 0);
    write_file_atomically("/dev/fd/" + std::to_string(p[1]), "via fd");
    write_file_atomically("/proc/self/fd/" + std::to_string(p[1]), "+proc");
    ::close(p[1]);
    char buf[64] = {};
    ssize_t n = ::read(p[0], buf, sizeof buf - 1);
    ::close(p[0]);
    EXPECT_EQ(std::string(buf, n > 0 ? std::size_t(n) : 0), "via fd+proc");
    EXPECT_EQ(resolve_output_path("/dev/stdout").kind, OutputKind::Descriptor);
    EXPECT_EQ(resolve_output_path("/dev/stdout").fd, 1);
}

TEST(OutputFile, StreamIsCloseOnExecLockedAndTruncated) {
    TempDir d;
    fs::path p = d.path / "rec.jsonl";
    write_file_atomically(p, "an older record\n");
    int fd = open_output_stream(p, "--record");
    ASSERT_GE(fd, 0);
    EXPECT_TRUE(::fcntl(fd, F_GETFD) & FD_CLOEXEC);
    EXPECT_EQ(slurp(p), "");
    try {
        open_output_stream(p, "--record");
        ADD_FAILURE() << "a second writer was let in";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::Usage);
        EXPECT_NE(std::string(e.what()).find("another process"), std::string::npos) << e.what();
    }
    ::close(fd);
    int again = open_output_stream(p, "--record");  // the lock went with the first writer
    EXPECT_GE(again, 0);
    ::close(again);
    fs::create_directory(d.path / "adir");
    EXPECT_THROW(open_output_stream(d.path / "adir", "--log"), Error);
}
