// gpu.p2p: for every pair of selected GPUs, whether peer access is supported and enabled, the
// one-way and both-ways copy bandwidth and the small-copy latency, the copied data verified; NVLink
// pairs graded against the SKU's NVLink rate, PCIe pairs against the PCIe link (docs/checks.md).
#pragma once
#include <optional>
#include <string>

#include "checks/gpu_measurement.hpp"

namespace gpuvet {

class GpuP2pCheck : public GpuMeasureCheck {
public:
    std::string_view key() const override { return "gpu.p2p"; }
    std::string_view title() const override { return "GPU-to-GPU copies (P2P)"; }
    std::vector<CheckResult> run(CheckContext& ctx) override;
};

namespace measure {
// Healthy NVLink P2P reaches 83-87% of the per-direction NVLink rate (REFERENCES.md: H100 SXM
// 376-380 of 450 GB/s); Azure's floors sit at 74% (H100/H200 335) and 79% (A100 238).
inline constexpr double kNvlinkExpected = 0.85, kNvlinkWarn = 0.75, kNvlinkFail = 0.50;
// PCIe P2P depends on the path (switch, root complex, across sockets): only a warning when far off.
inline constexpr double kPcieP2pWarn = 0.40;
// NVLink links between two GPUs from a topology label ("NV18" -> 18), 0 for PCIe paths.
int nvlink_count_of(const std::string& topology_label);
// Per-direction NVLink rate of a pair joined by `links` of a GPU's `gpu_links`, from the SKU's
// total bidirectional NVLink bandwidth: total / 2 * links / gpu_links (all links when unknown).
double nvlink_pair_gbps(double nvlink_total_gbps, int links, int gpu_links);
}  // namespace measure

}  // namespace gpuvet
