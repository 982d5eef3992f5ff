// Each order item held against what the machine shows: one CheckResult per item, keyed
// order.<item>, with the expected and the found value. Items the order does not name are absent.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "core/fact.hpp"
#include "core/result.hpp"

namespace gpuvet {

struct CheckContext;
struct Order;

// Capacities as the OS reports them fall short of sizes as sold: MemTotal excludes what firmware and
// the kernel reserve (1-3%), a filesystem's size excludes its metadata (1-5%).
inline constexpr double kRamAllowance = 0.05;
inline constexpr double kDiskAllowance = 0.05;
// TCP through iperf3 reaches about 94% of an Ethernet line rate (headers at 1500-byte MTU): below
// 90% of the ordered speed warns, below half fails.
inline constexpr double kNetworkWarnFraction = 0.9;
inline constexpr double kNetworkFailFraction = 0.5;

// order.gpu_count, order.gpu_model, order.gpu_memory, order.nvlink, order.mig
std::vector<CheckResult> verify_gpu_items(const Order& o, const CheckContext& ctx);
// order.cpu_cores, order.ram, order.disk, order.network
// `data_dir`: the data path whose filesystem order.disk measures (--data-dir).
std::vector<CheckResult> verify_host_items(const Order& o, const CheckContext& ctx,
                                           const Fact<std::uint64_t>& disk_capacity_bytes, const std::string& data_dir);

// An empty result for one order item ("order.gpu_count", "Order: GPU count").
inline CheckResult order_item(const char* key, const char* title) {
    CheckResult r;
    r.key = key;
    r.title = title;
    return r;
}

// Size of the filesystem holding `path` (statvfs f_blocks * f_frsize).
Fact<std::uint64_t> filesystem_capacity_bytes(const std::string& path);

}  // namespace gpuvet
