// Fuzzes host.fabric's parsers (src/host/fabric.cpp, src/host/pci_tree.cpp): sysfs strings and a
// bridge's config space come from drivers and firmware, and a captured tree may be edited by hand.
// The first byte picks the parser; the rest is its input.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "host/fabric.hpp"
#include "host/pci_tree.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
    switch (data[0] % 4) {
        case 0:
            if (auto r = gpuvet::parse_port_rate(text)) {
                if (!(r->gbitps > 0) || (r->width_lanes && (*r->width_lanes < 0 || *r->width_lanes > 99))) std::abort();
            }
            break;
        case 1:
            if (auto s = gpuvet::parse_coded_state(text); s && s->code < 0) std::abort();
            break;
        case 2:
            if (auto v = gpuvet::parse_link_speed_gts(text); v && !(*v > 0)) std::abort();
            break;
        default: {
            gpuvet::AcsReading a = gpuvet::parse_acs("0000:00:00.0", text);
            if (a.control && !a.has_acs) std::abort();
            if (text.size() < 0x104 && (a.has_acs || a.absent_reason.empty())) std::abort();
            break;
        }
    }
    return 0;
}
