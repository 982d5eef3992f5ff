// host.memory: size and STREAM-style bandwidth (copy, scale, add, triad; decimal GB/s).
#pragma once
#include <optional>

#include "core/check.hpp"
#include "core/fact.hpp"
#include "core/result.hpp"
#include "host/smbios.hpp"
#include "core/host_fs.hpp"

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

// The DIMMs from the SMBIOS table, or why they are unknown (no root, no table).
Fact<MemoryLayout> read_memory_layout(const HostFs& fs);

// STREAM triad against the theoretical rate: healthy servers reach about 70% or more; below
// half is a WARN (never a FAIL: the channel count is inferred). See docs/checks.md.
inline constexpr double kStreamExpectedFraction = 0.70;
inline constexpr double kStreamWarnFraction = 0.50;

// What the DIMMs add to host.memory: the reference STREAM is held against (when the theoretical
// rate is known) and the plain-words warnings (DIMMs below their rated speed, fewer than half the
// slots populated).
struct DimmFindings {
    std::optional<Reference> stream_reference;  // spec: the theoretical rate, when known
    std::vector<std::string> warnings;
};

// Adds the DIMM figures (dimm_slots, dimms_populated, dimm_total_bytes, memory_type,
// memory_configured_mts, memory_rated_mts, memory_channels, memory_theoretical_gbps) to r, each
// present or absent with the reason, and a line of detail. `virtualization` from MachineInfo: a
// VM's table describes the hypervisor's virtual DIMMs, so no rate is derived from it.
DimmFindings add_dimm_facts(CheckResult& r, const Fact<MemoryLayout>& layout,
                            const std::optional<std::string>& virtualization);

}  // namespace gpuvet
