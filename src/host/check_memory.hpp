// host.memory: size and STREAM-style bandwidth (copy, scale, add, triad; decimal GB/s).
#pragma once
#include <optional>

#include "core/check.hpp"
#include "host/sysfs.hpp"

namespace gpuvet {

class HostMemoryCheck final : public Check {
public:
    std::string_view key() const override { return "host.memory"; }
    std::string_view title() const override { return "Host memory"; }
    std::vector<CheckResult> run(CheckContext& ctx) override;
};

// Size of the largest CPU cache (the last level), from /sys/devices/system/cpu/cpu0/cache.
std::optional<std::size_t> read_llc_bytes(const HostFs& fs);
// MemAvailable from /proc/meminfo.
std::optional<std::size_t> read_mem_available_bytes(const HostFs& fs);
// CPU list of each NUMA node; empty without /sys/devices/system/node.
std::vector<std::vector<int>> read_node_cpus(const HostFs& fs);

}  // namespace gpuvet
