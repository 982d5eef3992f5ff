// Pure decoding of NVML answers (no library calls): bus ids, CPU masks, topology levels,
// architectures, process lists, clock-event reasons, NVLink versions.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gpuvet {

// "00000000:17:00.0", "0000:17:00.0" and "17:00.0" all become "0000:17:00.0"; "" when unparsable.
std::string normalize_pci_bus_id(std::string_view id);
// A CPU bitmask as NVML returns it (64-bit words, CPU 0 = bit 0 of word 0) as "0-31,64-95".
std::string cpu_list_from_mask(const std::uint64_t* words, std::size_t n_words);
// nvidia-smi topo -m label for an NVML common-ancestor level ("PIX", "PXB", "PHB", "NODE", "SYS").
std::string topology_label(int nvml_level);
std::string architecture_name(unsigned nvml_arch);  // "Hopper"; "unknown (N)" when unknown

struct RawProcess {
    std::uint32_t pid = 0;
    std::uint64_t used_memory_bytes = 0;
};
// Decodes `count` entries a process-list call wrote into `buf`. Entries are 24 bytes
// (nvmlProcessInfo_v2_t), but some R535 drivers write 32-byte entries through _v3; the stride
// whose entries look valid (nonzero pids, sane instance ids) wins. `buf` must hold count*32 bytes.
std::vector<RawProcess> decode_process_entries(const unsigned char* buf, std::size_t count);

// Names of the set bits of an NVML clock-event-reasons mask ("SW_POWER_CAP", "HW_SLOWDOWN"...).
std::vector<std::string> decode_clock_reasons(std::uint64_t mask);

// nvmlDeviceGetNvLinkVersion answers with nvml.h's nvmlNvlinkVersion_t codes, not the version
// itself: 4 is "3.0". "code N" for a code this build does not know.
std::string nvlink_version_name(int nvml_code);

}  // namespace gpuvet
