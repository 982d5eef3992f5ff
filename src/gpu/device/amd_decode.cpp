#include "gpu/device/amd_decode.hpp"

#include <cstdio>
#include <cstring>
#include <limits>

namespace gpuvet::amd_decode {

namespace {

constexpr char kHex[] = "0123456789abcdef";

// Known majors: 9 (GCN 5 and CDNA), 10 to 12 (RDNA).
bool plausible_major(std::uint64_t m) { return m >= 9 && m <= 12; }

}  // namespace

std::optional<std::string> gfx_target_name(std::uint64_t v) {
    if (v == std::numeric_limits<std::uint64_t>::max() || v == 0) return std::nullopt;
    // minor 0: M*1000 + rev (rev up to 15, a hex digit in the name).
    if (std::uint64_t m = v / 1000, r = v % 1000; plausible_major(m) && r < 16)
        return "gfx" + std::to_string(m) + "0" + kHex[r];
    // minor 1..9: M*100 + minor*10 + rev.
    if (std::uint64_t m = v / 100, mi = v / 10 % 10, r = v % 10; plausible_major(m) && mi > 0)
        return "gfx" + std::to_string(m) + kHex[mi] + kHex[r];
    return std::nullopt;
}

std::optional<std::string> architecture_of(const std::string& t) {
    struct Row {
        const char* prefix;
        const char* arch;
    };
    // Longest prefixes first.
    static const Row rows[] = {
        {"gfx908", "CDNA"},   {"gfx90a", "CDNA 2"}, {"gfx940", "CDNA 3"},          {"gfx941", "CDNA 3"},
        {"gfx942", "CDNA 3"}, {"gfx950", "CDNA 4"}, {"gfx906", "GCN 5 (Vega 20)"}, {"gfx900", "GCN 5 (Vega 10)"},
        {"gfx103", "RDNA 2"}, {"gfx110", "RDNA 3"}, {"gfx115", "RDNA 3.5"},        {"gfx120", "RDNA 4"},
    };
    for (const auto& r : rows)
        if (t.rfind(r.prefix, 0) == 0) return r.arch;
    return std::nullopt;
}

std::optional<int> pcie_gen_of_mts(std::uint32_t mts) {
    switch (mts) {
        case 2500: return 1;
        case 5000: return 2;
        case 8000: return 3;
        case 16000: return 4;
        case 32000: return 5;
        case 64000: return 6;
        default: return std::nullopt;
    }
}

std::string pci_bus_id_of(std::uint64_t bdf) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%04x:%02x:%02x.%x", static_cast<unsigned>(bdf >> 32),
                  static_cast<unsigned>((bdf >> 8) & 0xff), static_cast<unsigned>((bdf >> 3) & 0x1f),
                  static_cast<unsigned>(bdf & 0x7));
    return buf;
}

std::string text_of(const char* buf, std::size_t size) {
    std::string s(buf, strnlen(buf, size));
    while (!s.empty() && (s.back() == ' ' || s.back() == '\n')) s.pop_back();
    return s;
}

}  // namespace gpuvet::amd_decode
