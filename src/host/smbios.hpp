// The host's DIMMs from the raw SMBIOS structure table (/sys/firmware/dmi/tables/DMI), read
// without dmidecode, and the memory system's theoretical bandwidth inferred from them.
// Field offsets and codes: DMTF DSP0134 "System Management BIOS (SMBIOS) Reference Specification"
// (3.x), section 6.1 (structure header, string set) and 7.18 (Memory Device, type 17).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/fact.hpp"
#include "core/host_fs.hpp"

namespace gpuvet {

// One type 17 structure: a DIMM slot, populated or not. Absent optionals: not stated by the
// firmware (unknown, or a field beyond the structure's length in an older SMBIOS version).
struct MemoryDevice {
    std::uint16_t handle = 0;
    bool populated = false;                       // size != 0
    std::optional<std::uint64_t> size_bytes;      // populated and known
    std::optional<int> data_width_bits;           // 64 for a DIMM (ECC bits excluded)
    std::optional<std::uint8_t> memory_type;      // code from DSP0134 7.18.2
    std::optional<std::uint32_t> rated_mts;       // "Speed": the DIMM's rated rate, MT/s
    std::optional<std::uint32_t> configured_mts;  // "Configured Memory Speed": what it runs at
    std::string device_locator;                   // "DIMM_A1", "P0_Node0_Channel0_Dimm1"
    std::string bank_locator;                     // "P0 CHANNEL A", "NODE 1"
    std::string part_number;
};

// What was walked: the memory devices found, and why the walk stopped early (empty when it
// reached type 127 or the end of the data cleanly).
struct SmbiosMemory {
    std::vector<MemoryDevice> devices;
    int structures = 0;   // structures walked
    std::string problem;  // "structure at offset 120 has length 2 (< 4)", ...
};

// Walks an SMBIOS structure table. Never reads out of bounds: the input is untrusted.
SmbiosMemory parse_smbios_memory(std::string_view table);

// "DDR4", "DDR5", "LPDDR5", ...; "type 0x.." for codes without a name here.
std::string memory_type_name(std::uint8_t code);

// How the memory channels were counted (SMBIOS does not state them).
enum class ChannelRule {
    Locators,    // each populated DIMM's channel read from its locators
    OnePerDimm,  // the locators did not show channels: one DIMM per channel assumed
};

struct MemoryLayout {
    int slots = 0;
    int populated = 0;
    std::optional<std::uint64_t> total_bytes;  // absent if any populated size is unknown
    std::optional<std::string> type;           // "DDR5", or "DDR4 + DDR5" when mixed
    std::optional<std::uint32_t> min_configured_mts;
    std::optional<std::uint32_t> min_rated_mts;
    int slower_than_rated = 0;      // populated DIMMs configured below their rating
    int channels = 0;               // populated channels, per `rule`
    int max_dimms_per_channel = 1;  // slots per channel seen in the locators
    ChannelRule rule = ChannelRule::OnePerDimm;
    Fact<double> theoretical_gbps;  // decimal GB/s, or why it cannot be computed
    std::vector<MemoryDevice> devices;
};

// Totals and the theoretical peak: sum over populated channels of (lowest configured MT/s of the
// channel's DIMMs) x (data width / 8) bytes, in decimal GB/s. See channel_of() for the rule.
MemoryLayout summarize_memory(const std::vector<MemoryDevice>& devices);

// A DIMM's channel and its position in the channel, read from its locators, e.g.
//   "P0_Node0_Channel0_Dimm1"          -> channel "P0_NODE0_CHANNEL0", dimm 1
//   bank "P0 CHANNEL A", "DIMM 1"      -> channel "P0 CHANNEL A", dimm 1
//   "CPU1_DIMM_A2", "DIMM_A1"          -> channel "CPU1_DIMM_A", dimm 2 / "DIMM_A", dimm 1
// nullopt when the locators follow no such pattern.
struct ChannelSlot {
    std::string channel;
    int dimm = 0;
};
std::optional<ChannelSlot> channel_of(const MemoryDevice& d);

// The raw table through the root seam, or why it could not be read: EACCES -> needs root,
// ENOENT -> no table (virtual machine?).
Fact<std::string> read_smbios_table(const HostFs& fs);
std::string smbios_absent_reason(int err);

}  // namespace gpuvet
