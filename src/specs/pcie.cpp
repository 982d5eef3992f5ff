#include "specs/pcie.hpp"

namespace gpuvet {

namespace {

// GB/s per lane and direction. Gen1/2: 2.5 and 5 GT/s with 8b/10b coding; Gen3/4/5: 8, 16 and 32
// GT/s with 128b/130b (0.985, 1.969, 3.938: PCI-SIG's figures, as DCGM and nvidia-smi quote them).
// Gen6: 64 GT/s (PAM4) in 256-byte FLITs, of which 236 bytes carry TLPs and 6 the data link layer,
// the other 14 CRC and FEC: 8 GB/s × 242/256 = 7.5625 (PCI Express Base Specification 6.0's FLIT
// layout, as summarised at glennklockwood.com/garden/PCIe-Gen6). That is the figure comparable with
// the earlier ones, which count line coding only; TLP headers are left out of every generation alike.
constexpr double kLaneGbps[] = {0, 0.25, 0.5, 0.985, 1.969, 3.938, 7.5625};

}  // namespace

std::optional<double> pcie_lane_gbps(int gen) {
    if (gen < 1 || gen > 6) return std::nullopt;
    return kLaneGbps[gen];
}

std::optional<double> pcie_gbps_per_direction(int gen, int width) {
    auto lane = pcie_lane_gbps(gen);
    if (!lane || width < 1) return std::nullopt;
    return *lane * width;
}

}  // namespace gpuvet
