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

struct Identification {
    const GpuSpec* spec = nullptr;   // the SKU, or null when none fits
    const GpuSpec* named = nullptr;  // the SKU the driver's name says, when the database knows the name
    std::string how;                 // "pci-device-id", "name+memory", "name"
    // Disagreements, each one a FAIL finding, written as whole sentences: "GPU 4 claims to be an
    // H100 SXM5 80GB (its name 'NVIDIA H100 80GB HBM3') but its PCI device id 0x2324 is an H800 SXM5 80GB".
    std::vector<std::string> conflicts;
    std::vector<std::string> unknowns;  // not in the database: WARN findings
    bool memory_matches = false;        // driver memory within the SKU's figure for its ECC state
    // An AMD GPU split into compute partitions (not SPX): each listed GPU holds a share, so compute
    // units and memory were not held to the whole GPU's figures.
    bool partitioned = false;
};

// An AMD GPU whose compute partition is not SPX (the driver lists each partition as a GPU).
bool amd_partitioned(const DeviceFacts& g);

Identification identify_gpu(const GpuInfo& gpu, const SpecDb& specs);

// "0x2330"
std::string hex_device_id(std::uint32_t id);
// "an H100 SXM5 80GB", "a GeForce RTX 4090": the article as the name is spoken.
std::string with_article(const std::string& name);

}  // namespace gpuvet
