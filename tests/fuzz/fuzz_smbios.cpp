// Fuzzes the SMBIOS table walk and the DIMM summary (src/host/smbios.cpp): the table comes from
// firmware and is untrusted. Any input must parse without reading out of bounds, and the summary
// must stay consistent with what was parsed.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "host/smbios.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::string_view table(reinterpret_cast<const char*>(data), size);
    gpuvet::SmbiosMemory mem = gpuvet::parse_smbios_memory(table);
    // Every structure takes at least a 4-byte header and two NULs.
    if (mem.devices.size() * 6 > size) std::abort();
    gpuvet::MemoryLayout l = gpuvet::summarize_memory(mem.devices);
    if (l.populated > l.slots || l.channels > l.populated) std::abort();
    if (l.theoretical_gbps && !(*l.theoretical_gbps >= 0)) std::abort();
    for (auto& d : mem.devices) (void)gpuvet::channel_of(d);
    return 0;
}
