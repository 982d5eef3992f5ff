// host.storage: filesystem, free space and throughput of the data path (--data-dir).
#pragma once
#include <cstdint>
#include <filesystem>
#include <optional>

#include "core/check.hpp"

namespace gpuvet {

// What `--data-dir` and `--storage-bytes` asked for.
struct StorageSettings {
    std::filesystem::path data_dir = ".";
    std::optional<std::uint64_t> max_bytes;  // cap on the bytes written (default: the bench's 1 GiB)
};

class HostStorageCheck final : public Check {
public:
    explicit HostStorageCheck(StorageSettings s = {}) : settings_(std::move(s)) {}
    std::string_view key() const override { return "host.storage"; }
    std::string_view title() const override { return "Host storage (data path)"; }
    std::vector<CheckResult> run(CheckContext& ctx) override;

private:
    StorageSettings settings_;
};

}  // namespace gpuvet
