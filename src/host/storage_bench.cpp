#include "host/storage_bench.hpp"

#include <fcntl.h>
#include <liburing.h>
#include <sys/statfs.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <memory>
#include <mutex>
#include <random>
#include <sstream>
#include <thread>
#include <vector>

#include "core/error.hpp"
#include "core/interrupt.hpp"
#include "core/strings.hpp"

namespace gpuvet {

namespace {

using clk = std::chrono::steady_clock;
double since(clk::time_point t0) { return std::chrono::duration<double>(clk::now() - t0).count(); }

struct AlignedFree {
    void operator()(char* p) const { std::free(p); }
};
using Buffer = std::unique_ptr<char, AlignedFree>;

Buffer aligned_buffer(std::size_t bytes) {
    char* p = static_cast<char*>(std::aligned_alloc(4096, (bytes + 4095) / 4096 * 4096));
    if (!p)
        throw runtime_error("cannot allocate " + std::to_string(bytes) + " bytes of I/O buffers",
                            "free some memory, or raise this process's memory limit");
    // Non-repeating content: a filesystem or device that compresses or deduplicates zeros would
    // otherwise report speeds no real data reaches.
    std::mt19937_64 rng(0x9e3779b97f4a7c15ull);
    for (std::size_t i = 0; i + 8 <= bytes; i += 8) {
        std::uint64_t v = rng();
        std::memcpy(p + i, &v, 8);
    }
    return Buffer(p);
}

struct IoRun {
    std::uint64_t ops = 0;
    double seconds = 0;
    std::string error;      // set when an I/O failed
    bool no_space = false;  // the failure was ENOSPC: the data path filled up
};

// Keeps `depth` operations in flight through io_uring. `next` gives the offset of op i;
// stops after `max_ops`, `max_s` seconds, or a stop request.
//
// Each operation is submitted on its own as soon as a slot frees, and the loop sleeps only when no
// completion is waiting. Filling the whole queue and then waiting for completions in one call
// makes the operations travel in convoys: the device idles between a convoy's last completion and
// the next submission, which cost 12-15% of random 4 KiB IOPS against fio on a virtual disk
// (docs/benchmarks.md). fio's io_uring engine submits one operation per call in the same way.
IoRun uring_run(io_uring& ring, int fd, bool write, char* bufs, std::size_t block, int depth,
                const std::function<std::uint64_t(std::uint64_t)>& next, std::uint64_t max_ops, double max_s,
                const std::atomic<bool>* stop) {
    IoRun r;
    std::uint64_t submitted = 0, inflight = 0;
    // A buffer is reused only once its operation has completed; completions arrive in any order.
    std::vector<int> free_slots(static_cast<std::size_t>(depth));
    for (int i = 0; i < depth; ++i) free_slots[std::size_t(i)] = depth - 1 - i;
    auto t0 = clk::now();
    bool draining = false;
    auto fail = [&](std::string what) {
        if (r.error.empty()) r.error = std::move(what);
        draining = true;
    };
    while (r.ops < max_ops) {
        if (!draining && (since(t0) >= max_s || (stop && stop->load()))) draining = true;
        while (!draining && !free_slots.empty() && submitted < max_ops) {
            io_uring_sqe* sqe = io_uring_get_sqe(&ring);
            if (!sqe) break;
            int slot = free_slots.back();
            char* buf = bufs + std::size_t(slot) * block;
            std::uint64_t off = next(submitted);
            if (write) io_uring_prep_write(sqe, fd, buf, unsigned(block), off);
            else io_uring_prep_read(sqe, fd, buf, unsigned(block), off);
            io_uring_sqe_set_data64(sqe, std::uint64_t(slot));
            int rc = io_uring_submit(&ring);
            if (rc < 0) {
                fail(std::string("io_uring_submit: ") + std::strerror(-rc));
                break;
            }
            free_slots.pop_back();
            ++submitted;
            ++inflight;
        }
        if (inflight == 0) break;
        io_uring_cqe* cqe;
        if (io_uring_peek_cqe(&ring, &cqe) != 0) {
            int rc = io_uring_wait_cqe(&ring, &cqe);
            if (rc < 0 && rc != -EINTR) {
                fail(std::string("io_uring_wait_cqe: ") + std::strerror(-rc));
                break;
            }
        }
        unsigned head, seen = 0;
        io_uring_for_each_cqe(&ring, head, cqe) {
            ++seen;
            free_slots.push_back(int(cqe->user_data));
            if (cqe->res < 0) {
                r.no_space = r.no_space || (r.error.empty() && cqe->res == -ENOSPC);
                fail(std::strerror(-cqe->res));
            } else if (std::size_t(cqe->res) != block)
                fail("short " + std::string(write ? "write" : "read") + " (" + std::to_string(cqe->res) + " bytes)");
            ++r.ops;
        }
        io_uring_cq_advance(&ring, seen);
        inflight -= seen;
    }
    // Reap what is still in flight so the buffers are free before they are released.
    while (inflight > 0) {
        io_uring_cqe* cqe;
        if (io_uring_wait_cqe(&ring, &cqe) < 0) break;
        io_uring_cqe_seen(&ring, cqe);
        --inflight;
    }
    r.seconds = since(t0);
    return r;
}

// Without io_uring: `depth` threads doing synchronous pread/pwrite.
IoRun thread_run(int fd, bool write, char* bufs, std::size_t block, int depth,
                 const std::function<std::uint64_t(std::uint64_t)>& next, std::uint64_t max_ops, double max_s,
                 const std::atomic<bool>* stop) {
    IoRun r;
    std::atomic<std::uint64_t> ticket{0}, done{0};
    std::atomic<bool> failed{false};
    std::string err;
    bool no_space = false;
    std::mutex mu;
    auto t0 = clk::now();
    std::vector<std::thread> ts;
    for (int t = 0; t < depth; ++t)
        ts.emplace_back([&, t] {
            char* buf = bufs + std::size_t(t) * block;
            for (;;) {
                if (failed || since(t0) >= max_s || (stop && stop->load())) return;
                std::uint64_t i = ticket++;
                if (i >= max_ops) return;
                std::uint64_t off;
                {
                    std::lock_guard lk(mu);  // `next` may keep state (random generator)
                    off = next(i);
                }
                ssize_t n = write ? pwrite(fd, buf, block, off_t(off)) : pread(fd, buf, block, off_t(off));
                if (n != ssize_t(block)) {
                    std::lock_guard lk(mu);
                    if (err.empty()) {
                        err = n < 0 ? std::strerror(errno) : "short transfer";
                        no_space = n < 0 && errno == ENOSPC;
                    }
                    failed = true;
                    return;
                }
                ++done;
            }
        });
    for (auto& t : ts) t.join();
    r.ops = done;
    r.error = err;
    r.no_space = no_space;
    r.seconds = since(t0);
    return r;
}

struct Fd {
    int fd = -1;
    ~Fd() {
        if (fd >= 0) close(fd);
    }
};

std::string fs_magic_name(long magic) {
    switch (static_cast<unsigned long>(magic)) {
        case 0xEF53: return "ext2/3/4";
        case 0x58465342: return "xfs";
        case 0x9123683E: return "btrfs";
        case 0x01021994: return "tmpfs";
        case 0x794c7630: return "overlay";
        case 0x6969: return "nfs";
        case 0x2fc12fc1: return "zfs";
        case 0xF2F52010: return "f2fs";
        case 0x65735546: return "fuse";
        case 0x01021997: return "9p";
        case 0x00c36400: return "ceph";
        case 0x0BD00BD0: return "lustre";
    }
    std::ostringstream s;
    s << "unknown (magic 0x" << std::hex << magic << ")";
    return s.str();
}

}  // namespace

std::uint64_t storage_bytes_to_use(std::uint64_t cap, std::uint64_t free_bytes, std::size_t block) {
    std::uint64_t reserve = std::max<std::uint64_t>(free_bytes / 10, std::uint64_t(64) << 20);
    std::uint64_t room = free_bytes > reserve ? free_bytes - reserve : 0;
    std::uint64_t n = std::min(cap, room) / block * block;
    return n < kStorageMinBytes ? 0 : n;
}

std::string filesystem_type(const std::filesystem::path& dir) {
    std::error_code ec;
    auto canon = std::filesystem::canonical(dir, ec).string();
    std::ifstream mounts("/proc/mounts");
    std::string dev, mnt, type, rest, best_type;
    std::size_t best_len = 0;
    while (mounts >> dev >> mnt >> type && std::getline(mounts, rest)) {
        bool under = canon == mnt || (starts_with(canon, mnt) && (mnt == "/" || canon[mnt.size()] == '/'));
        if (under && mnt.size() >= best_len) best_len = mnt.size(), best_type = type;
    }
    if (!best_type.empty()) return best_type;
    struct statfs sf {};
    if (statfs(dir.c_str(), &sf) == 0) return fs_magic_name(long(sf.f_type));
    return "unknown";
}

void require_data_dir(const std::filesystem::path& dir) {
    std::error_code ec;
    if (!std::filesystem::exists(dir, ec))
        throw usage_error("data path " + dir.string() + " does not exist",
                          "pass --data-dir with the folder your training data will live in");
    if (!std::filesystem::is_directory(dir, ec))
        throw usage_error("data path " + dir.string() + " is not a folder",
                          "pass --data-dir with a folder on the data disk");
}

namespace {

// Fills free_bytes and file_bytes; false (skip_reason set) when the folder cannot hold the test.
bool size_test_file(const StorageOptions& o, StorageResult& res) {
    struct statfs sf {};
    if (statfs(o.dir.c_str(), &sf) != 0) {
        res.skip_reason = "cannot stat the filesystem of " + o.dir.string() + ": " + std::strerror(errno);
        return false;
    }
    res.free_bytes = std::uint64_t(sf.f_bavail) * std::uint64_t(sf.f_frsize ? sf.f_frsize : sf.f_bsize);
    if (access(o.dir.c_str(), W_OK) != 0) {
        res.skip_reason = "data path " + o.dir.string() + " is not writable (" + std::strerror(errno) +
                          "): pass --data-dir with a writable folder on the data disk";
        return false;
    }
    res.file_bytes = storage_bytes_to_use(o.max_bytes, res.free_bytes, o.block_bytes);
    if (res.file_bytes == 0) {
        res.skip_reason = "only " + format_bytes(double(res.free_bytes)) + " free on " + o.dir.string() +
                          "; the test needs at least " + format_bytes(double(kStorageMinBytes)) +
                          " beyond a 10% reserve";
        return false;
    }
    if (res.file_bytes < o.max_bytes)
        res.notes.push_back("test size reduced to " + format_bytes(double(res.file_bytes)) + " to fit the free space");
    return true;
}

// Creates `file` (O_DIRECT where the filesystem allows it) and unlinks it at once, so nothing is
// left behind whatever happens next; false (skip_reason set) when it cannot be created.
bool open_test_file(const std::filesystem::path& file, const std::filesystem::path& dir, StorageResult& res, Fd& f) {
    f.fd = open(file.c_str(), O_RDWR | O_CREAT | O_EXCL | O_DIRECT | O_CLOEXEC, 0600);
    if (f.fd < 0 && errno == EINVAL) {
        // tmpfs and some FUSE filesystems refuse O_DIRECT: measure through the page cache and say so.
        f.fd = open(file.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        res.direct = false;
        res.notes.push_back(res.fs_type +
                            " does not support O_DIRECT: figures are buffered, through the page "
                            "cache (memory speed, not disk speed)");
    }
    if (f.fd < 0) {
        res.skip_reason = "cannot create a test file in " + dir.string() + ": " + std::strerror(errno);
        return false;
    }
    unlink(file.c_str());
    return true;
}

// io_uring when the kernel allows it, else one pread/pwrite thread per slot; runs go to the
// test file through the shared buffers.
class IoEngine {
public:
    IoEngine(const StorageOptions& o, int fd, char* bufs, StorageResult& res) : o_(o), fd_(fd), bufs_(bufs) {
        int qrc = io_uring_queue_init(unsigned(std::max(o.seq_depth, o.rand_depth)), &ring_, 0);
        uring_ = qrc == 0;
        res.engine = uring_ ? "io_uring" : "pread/pwrite threads";
        if (!uring_)
            res.notes.push_back(std::string("the kernel refused io_uring (") + std::strerror(-qrc) +
                                "): measured with one pread/pwrite thread per slot instead, as fio --ioengine=psync "
                                "--numjobs does");
    }
    ~IoEngine() {
        if (uring_) io_uring_queue_exit(&ring_);
    }
    IoEngine(const IoEngine&) = delete;
    IoEngine& operator=(const IoEngine&) = delete;

    IoRun run(bool write, std::size_t block, int d, const std::function<std::uint64_t(std::uint64_t)>& next,
              std::uint64_t max_ops, double max_s) {
        return uring_ ? uring_run(ring_, fd_, write, bufs_, block, d, next, max_ops, max_s, o_.stop)
                      : thread_run(fd_, write, bufs_, block, d, next, max_ops, max_s, o_.stop);
    }

private:
    const StorageOptions& o_;
    int fd_;
    char* bufs_;
    io_uring ring_{};
    bool uring_ = false;
};

constexpr double kNoLimitS = 1e9;
constexpr std::size_t kRandBlockBytes = 4096;  // the random-read size fio's 4k IOPS figures use

bool stop_requested(const StorageOptions& o) { return o.stop && o.stop->load(); }

// Sequential write, then fdatasync inside the timing: data on the device, not in a cache. False
// when the later phases cannot run (both figures then absent with the reason).
bool measure_seq_write(const StorageOptions& o, IoEngine& io, int fd, StorageResult& res) {
    const std::size_t sblock = o.block_bytes;
    auto seq = [&](std::uint64_t i) { return i * sblock; };
    IoRun w = io.run(true, sblock, o.seq_depth, seq, res.file_bytes / sblock, kNoLimitS);
    auto t_sync = clk::now();
    // A stop skips the flush: the figure is not reported then, and a large flush can take seconds.
    const bool stopped = stop_requested(o);
    if (w.error.empty() && !stopped && fdatasync(fd) != 0) {
        w.no_space = errno == ENOSPC;
        w.error = std::string("fdatasync: ") + std::strerror(errno);
    }
    w.seconds += since(t_sync);
    if (!w.error.empty()) {
        res.seq_absent = res.rand_absent = "writing the test file failed: " + w.error;
        if (w.no_space)
            res.skip_reason = "the data path filled up while the test file was written (" + w.error +
                              "): free space on it, or pass a smaller --storage-bytes";
        return false;
    }
    if (stopped || stop_requested(o)) {
        res.seq_absent = res.rand_absent = "interrupted";
        return false;
    }
    res.seq_write_gbps = double(w.ops * sblock) / w.seconds / 1e9;
    return true;
}

void measure_seq_read(const StorageOptions& o, IoEngine& io, StorageResult& res) {
    const std::size_t sblock = o.block_bytes;
    const std::uint64_t nblocks = res.file_bytes / sblock;
    auto seq = [&](std::uint64_t i) { return i * sblock; };
    IoRun rd = io.run(false, sblock, o.seq_depth, seq, nblocks, kNoLimitS);
    if (!rd.error.empty()) res.seq_absent = "sequential read failed: " + rd.error;
    else if (rd.ops < nblocks) res.seq_absent = "interrupted";
    else res.seq_read_gbps = double(rd.ops * sblock) / rd.seconds / 1e9;
}

// Random 4 KiB reads for a fixed time; a fixed seed keeps runs comparable.
void measure_rand_read(const StorageOptions& o, IoEngine& io, StorageResult& res) {
    const std::size_t rblock = kRandBlockBytes;
    std::mt19937_64 rng(42);
    const std::uint64_t nrand = res.file_bytes / rblock;
    auto rnd = [&](std::uint64_t) { return (rng() % nrand) * rblock; };
    IoRun rr = io.run(false, rblock, o.rand_depth, rnd, ~std::uint64_t(0) >> 1, o.rand_seconds);
    if (!rr.error.empty()) res.rand_absent = "random read failed: " + rr.error;
    else if (stop_requested(o)) res.rand_absent = "interrupted";
    else if (rr.seconds > 0) res.rand_read_iops = double(rr.ops) / rr.seconds;
}

}  // namespace

StorageResult run_storage_bench(const StorageOptions& o) {
    StorageResult res;
    require_data_dir(o.dir);
    res.fs_type = filesystem_type(o.dir);
    if (!size_test_file(o, res)) return res;

    std::string name = ".gpuvet-storage-" + std::to_string(getpid()) + "-" + std::to_string(std::random_device{}());
    auto file = o.dir / name;
    CleanupPath on_second_signal(file);  // the file exists only between open and unlink
    Fd f;
    if (!open_test_file(file, o.dir, res, f)) return res;

    Buffer bufs = aligned_buffer(std::max(o.block_bytes * o.seq_depth, kRandBlockBytes * o.rand_depth));
    IoEngine io(o, f.fd, bufs.get(), res);
    if (!measure_seq_write(o, io, f.fd, res)) return res;
    if (!res.direct) posix_fadvise(f.fd, 0, 0, POSIX_FADV_DONTNEED);
    measure_seq_read(o, io, res);
    measure_rand_read(o, io, res);
    return res;
}

}  // namespace gpuvet
