// Storage throughput of the data path: sequential write and read with O_DIRECT (1 MiB blocks,
// several in flight through io_uring) and random 4 KiB reads at queue depth 32 through io_uring.
// The test file is unlinked right after it is created: the open descriptor keeps it alive while
// measuring, and the space returns the moment it closes — also on errors, Ctrl-C or a crash.
#pragma once
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace gpuvet {

inline constexpr std::uint64_t kStorageDefaultBytes = std::uint64_t(1) << 30;  // 1 GiB
inline constexpr std::uint64_t kStorageMinBytes = std::uint64_t(64) << 20;     // below: not worth measuring

struct StorageOptions {
    std::filesystem::path dir = ".";
    std::uint64_t max_bytes = kStorageDefaultBytes;  // cap on bytes written
    std::size_t block_bytes = 1 << 20;               // sequential block
    int seq_depth = 8;                               // sequential blocks in flight
    int rand_depth = 32;                             // random reads in flight
    double rand_seconds = 2;                         // random-read duration
    const std::atomic<bool>* stop = nullptr;
};

struct StorageResult {
    std::string fs_type;  // "ext4", "xfs", "tmpfs", ...
    std::uint64_t free_bytes = 0;
    std::uint64_t file_bytes = 0;  // bytes written and read back
    bool direct = true;            // O_DIRECT used (false: buffered, page-cache figures)
    std::string engine;            // "io_uring" or "pread/pwrite threads"
    std::optional<double> seq_write_gbps, seq_read_gbps, rand_read_iops;
    std::string seq_absent, rand_absent;  // why a figure is absent
    std::string skip_reason;              // set when nothing could be measured (read-only, full, ...)
    std::vector<std::string> notes;
};

// --data-dir must name an existing folder: a usage error (exit 2) otherwise. Commands call it
// before anything runs; run_storage_bench calls it too.
void require_data_dir(const std::filesystem::path& dir);

StorageResult run_storage_bench(const StorageOptions& o);

// Bytes to write: the cap, reduced to leave a tenth of the free space (at least 64 MiB) free;
// 0 when that leaves less than kStorageMinBytes. Rounded down to whole blocks.
std::uint64_t storage_bytes_to_use(std::uint64_t cap, std::uint64_t free_bytes, std::size_t block);

// Filesystem type of `dir` from /proc/mounts (longest mount prefix), else from statfs's magic.
std::string filesystem_type(const std::filesystem::path& dir);

}  // namespace gpuvet
