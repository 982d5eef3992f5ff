// Builds small SMBIOS structure tables for tests: type 17 (Memory Device) structures with their
// strings, laid out as DMTF DSP0134 7.18 places the fields.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace smbios_test {

struct Dimm {
    std::string device = "DIMM_A1";
    std::string bank = "P0";
    std::string part = "M321R8GA0BB0-CQKZJ";
    std::uint16_t size_word = 0x7FFF;  // 0 empty, 0x7FFF: see ext_size_mib
    std::uint32_t ext_size_mib = 65536;
    std::uint16_t data_width = 64;
    std::uint8_t type = 0x22;  // DDR5
    std::uint16_t speed = 4800;
    std::uint16_t configured = 4800;
    std::uint32_t ext_speed = 0;
    std::uint32_t ext_configured = 0;
    std::uint8_t length = 0x5C;  // SMBIOS 3.3 and later; 0x1C for 2.6, 0x22 for 2.7
};

inline void put(std::string& s, std::size_t off, std::uint64_t v, int n) {
    for (int i = 0; i < n; ++i) s[off + i] = char((v >> (8 * i)) & 0xFF);
}

// One structure: formatted area of `length` bytes (fields beyond it dropped), then strings.
inline std::string type17(const Dimm& d, std::uint16_t handle) {
    std::string f(0x5C, '\0');
    f[0] = char(17);
    put(f, 2, handle, 2);
    put(f, 0x04, 0x1000, 2);
    put(f, 0x06, 0xFFFE, 2);
    put(f, 0x08, d.data_width + 8, 2);  // total width with ECC
    put(f, 0x0A, d.data_width, 2);
    put(f, 0x0C, d.size_word, 2);
    f[0x0E] = char(0x09);  // DIMM
    std::vector<std::string> strings;
    auto str = [&](std::size_t off, const std::string& v) {
        if (v.empty()) return;
        strings.push_back(v);
        f[off] = char(strings.size());
    };
    str(0x10, d.device);
    str(0x11, d.bank);
    f[0x12] = char(d.type);
    put(f, 0x15, d.speed, 2);
    str(0x1A, d.part);
    put(f, 0x1C, d.ext_size_mib, 4);
    put(f, 0x20, d.configured, 2);
    put(f, 0x54, d.ext_speed, 4);
    put(f, 0x58, d.ext_configured, 4);
    f.resize(d.length);
    f[1] = char(d.length);
    std::string out = f;
    for (auto& s : strings) out += s + std::string(1, '\0');
    out += std::string(strings.empty() ? 2 : 1, '\0');
    return out;
}

// Type 0 (BIOS), a structure the walk must step over, with one string.
inline std::string bios_info() {
    std::string f(0x18, '\0');
    f[0] = 0;
    f[1] = char(0x18);
    f[4] = 1;
    return f + "Vendor BIOS 1.2" + std::string(2, '\0');
}

inline std::string end_of_table() { return std::string("\x7F\x04\xFF\xFE", 4) + std::string(2, '\0'); }

inline std::string table(const std::vector<Dimm>& dimms) {
    std::string t = bios_info();
    std::uint16_t h = 0x1100;
    for (auto& d : dimms) t += type17(d, h++);
    return t + end_of_table();
}

}  // namespace smbios_test
