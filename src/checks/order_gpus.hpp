// The GPU items of an order, each judged from the GPUs the driver shows (pure: no device is
// read). `absent`: why no GPU can be seen, when none can; every item then fails with it.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "core/result.hpp"
#include "gpu/inventory.hpp"

namespace gpuvet {

class SpecDb;
struct Order;

// order.gpu_count: PASS when exactly `ordered` boards' GPUs are seen (`devices_per_board` each: the
// driver lists each die of a multi-die board as a GPU).
CheckResult verify_gpu_count(int ordered, const std::vector<GpuInfo>& gpus, const std::optional<std::string>& absent,
                             int devices_per_board = 1);
// order.gpu_model: PASS when every GPU is identified as one of the order's SKUs.
CheckResult verify_gpu_model(const Order& o, const std::vector<GpuInfo>& gpus, const std::optional<std::string>& absent,
                             const SpecDb& db);
// order.nvlink: PASS when every GPU has an active link; WARN with one GPU (nothing to link to).
CheckResult verify_nvlink(const std::vector<GpuInfo>& gpus, const std::optional<std::string>& absent);
// order.mig: PASS when every GPU is in MIG mode (AMD: partitioned).
CheckResult verify_mig(const std::vector<GpuInfo>& gpus, const std::optional<std::string>& absent);

}  // namespace gpuvet
