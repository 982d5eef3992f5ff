// PCIe link rates, once for every layer (checks, the planner, the run rules): what one lane carries
// per direction after the link's own coding, by generation.
#pragma once
#include <optional>

namespace gpuvet {

// GB/s (decimal) per lane and direction for generation `gen` (1 to 6); nullopt outside.
std::optional<double> pcie_lane_gbps(int gen);
// `pcie_lane_gbps(gen)` × `width`; nullopt for an unknown generation or a width below 1.
std::optional<double> pcie_gbps_per_direction(int gen, int width);

}  // namespace gpuvet
