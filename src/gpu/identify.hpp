// Which SKU a GPU is, from what the driver reports: PCI device id first, then the driver's name and
// the memory size. Disagreements are findings, never silently resolved (a re-badged or cut-down card).
// Used by gpu.identity, the other gpu.* checks, order.* and the inventory collector.
#pragma once
#include <string>
#include <vector>

#include "gpu/inventory.hpp"

namespace gpuvet {

class SpecDb;
struct GpuSpec;

// Memory the driver reports may fall short of the size as sold by what firmware and ECC reserve:
// H100 SXM 79.6 of 80 GiB, H200 139.8 of 141 GiB. Below this fraction it is a different (or cut) part.
inline constexpr double kMemoryReserveFraction = 0.04;

struct Identification {
    const GpuSpec* spec = nullptr;      // the SKU, or null when none fits
    std::string how;                    // "pci-device-id", "name+memory", "name"
    std::vector<std::string> conflicts; // disagreements: each one is a FAIL finding
    std::vector<std::string> unknowns;  // not in the database: WARN findings
};

Identification identify_gpu(const GpuInfo& gpu, const SpecDb& specs);

// "0x2330"
std::string hex_device_id(std::uint32_t id);

}  // namespace gpuvet
