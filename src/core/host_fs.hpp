// The root-path seam: every read of /proc, /sys and /etc goes through a HostFs, so tests can
// point it at a fixture tree (GPUVET_ROOT or CheckOptions::root).
#pragma once
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace gpuvet {

class HostFs {
public:
    explicit HostFs(std::filesystem::path root = "/") : root_(std::move(root)) {}
    const std::filesystem::path& root() const { return root_; }
    // Maps an absolute system path ("/proc/cpuinfo") into the root.
    std::filesystem::path path(std::string_view abs) const;
    std::optional<std::string> read(std::string_view abs) const;       // whole file
    std::optional<std::string> read_line(std::string_view abs) const;  // first line, trimmed
    std::optional<long long> read_int(std::string_view abs) const;
    bool exists(std::string_view abs) const;
    std::vector<std::string> list(std::string_view abs_dir) const;  // sorted entry names

private:
    std::filesystem::path root_;
};

// Parses a Linux CPU list such as "0-3,8,10-11" into a count; nullopt if malformed.
std::optional<int> count_cpu_list(std::string_view list);

}  // namespace gpuvet
