// The PCI tree as sysfs lays it out: a function's place under its root complex (the chain of
// bridges above it), its NUMA node, its link against the link's maximum, and the ACS control of a
// bridge (PCIe base spec: extended capability 0x000D). Read through HostFs, so fixtures work.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/host_fs.hpp"

namespace gpuvet {

struct PciLink {
    std::optional<double> speed_gts, max_speed_gts;  // "32.0 GT/s PCIe" -> 32
    std::optional<int> width, max_width;             // lanes
};

struct PciFunction {
    std::string bdf;  // "0000:1b:00.0"
    // What is above it, from the root: "pci0000:17" (the host bridge), then the root port and any
    // switch ports, as the directories of /sys/devices name them. Empty when not resolvable.
    std::vector<std::string> ancestors;
    std::optional<int> numa_node;  // absent when sysfs says -1 (no NUMA, or the firmware did not tell)
    std::optional<unsigned> vendor, device, class_code;
    PciLink link;
};

// One function's facts; nullopt when /sys/bus/pci/devices/<bdf> does not exist.
std::optional<PciFunction> read_pci_function(const HostFs& fs, const std::string& bdf);
// The function that a sysfs device directory ("/sys/class/infiniband/mlx5_0/device") points to.
std::optional<PciFunction> read_pci_function_at(const HostFs& fs, const std::string& device_link);
// Every function whose class code starts with `class_prefix` (0x0302 = 3D controller), of `vendor`.
std::vector<PciFunction> find_pci_functions(const HostFs& fs, unsigned vendor, std::vector<unsigned> class_prefixes);

// "32.0 GT/s PCIe", "8 GT/s", "2.5 GT/s" -> GT/s; nullopt for "Unknown" or garbage.
std::optional<double> parse_link_speed_gts(std::string_view text);

// How far apart two functions are, in NCCL's and `nvidia-smi topo -m`'s terms.
enum class PciDistance {
    SameSwitch,       // a PCIe switch (a bridge below the root port) is common to both: PIX/PXB
    SameRootComplex,  // only the root complex is common: PHB
    SameNumaNode,     // different root complexes on one NUMA node: NODE
    CrossNuma,        // different NUMA nodes: SYS (the inter-socket link)
    Unknown,          // the tree or the NUMA node could not be read
};
const char* to_string(PciDistance d);  // "same PCIe switch", ...
const char* topo_word(PciDistance d);  // "PXB", "PHB", "NODE", "SYS", "?"
PciDistance pci_distance(const PciFunction& a, const PciFunction& b);
// The bridges a transfer between a and b passes (below and including their common ancestor).
std::vector<std::string> bridges_between(const PciFunction& a, const PciFunction& b);

// ACS (Access Control Services) of one bridge, read from its config space.
struct AcsReading {
    std::string bdf;
    std::optional<std::uint16_t> control;  // the ACS Control register
    bool has_acs = false;                  // the capability exists (control is then set)
    std::string absent_reason;             // when the extended config space could not be read
};
inline constexpr std::uint16_t kAcsRequestRedirect = 1u << 2, kAcsCompletionRedirect = 1u << 3;
// Walks the extended capability list of a config space dump (4096 bytes when read as root).
AcsReading parse_acs(std::string bdf, std::string_view config);
AcsReading read_acs(const HostFs& fs, const std::string& bdf);

}  // namespace gpuvet
