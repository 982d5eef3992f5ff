// gpu.memory_bandwidth: STREAM copy, read, write and triad over buffers many times the L2, with
// the data verified on the device, graded against the SKU's memory bandwidth (docs/checks.md).
#pragma once
#include "checks/gpu_measurement.hpp"

namespace gpuvet {

class GpuMemoryBandwidthCheck : public GpuKernelCheck {
public:
    std::string_view key() const override { return "gpu.memory_bandwidth"; }
    std::string_view title() const override { return "GPU memory bandwidth"; }
    std::vector<CheckResult> run(CheckContext& ctx) override;
};

namespace measure {
// Healthy HBM/GDDR reaches 83-93% of the datasheet bandwidth (REFERENCES.md).
inline constexpr double kMemExpected = 0.88, kMemWarn = 0.80, kMemFail = 0.70;
// Bytes per buffer: max(32 x L2, 1 GiB), at most a third of 90% of free memory, 16-byte multiple.
std::uint64_t stream_buffer_bytes(std::uint64_t l2_bytes, std::uint64_t free_bytes);
}  // namespace measure

}  // namespace gpuvet
