// SMBIOS facts from DMTF DSP0134 (SMBIOS Reference Specification 3.x):
//  6.1.2  structure header: Type BYTE, Length BYTE (formatted area incl. header), Handle WORD;
//         then the string set: NUL-terminated strings, ended by one more NUL (two NULs when
//         there are none). Strings are referred to by 1-based number; 0 means "none".
//  7.18   Memory Device (type 17) offsets: 0x0A Data Width, 0x0C Size, 0x10 Device Locator,
//         0x11 Bank Locator, 0x12 Memory Type, 0x15 Speed, 0x1A Part Number, 0x1C Extended Size,
//         0x20 Configured Memory Speed, 0x54 Extended Speed, 0x58 Extended Configured Speed.
//  7.18.2 Memory Type codes.  Type 127: end of table.
#include "host/smbios.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <map>
#include <set>

#include "core/strings.hpp"

namespace gpuvet {

namespace {

// A structure's formatted area: reads of fields beyond its length are absent, as DSP0134 says
// for fields added in later versions.
struct Formatted {
    std::string_view bytes;
    std::optional<std::uint32_t> le(std::size_t off, std::size_t n) const {
        if (off + n > bytes.size()) return std::nullopt;
        std::uint32_t v = 0;
        for (std::size_t i = 0; i < n; ++i) v |= std::uint32_t(static_cast<unsigned char>(bytes[off + i])) << (8 * i);
        return v;
    }
    std::optional<std::uint32_t> byte(std::size_t off) const { return le(off, 1); }
    std::optional<std::uint32_t> word(std::size_t off) const { return le(off, 2); }
    std::optional<std::uint32_t> dword(std::size_t off) const { return le(off, 4); }
};

std::string string_at(const Formatted& f, std::size_t off, const std::vector<std::string_view>& strings) {
    auto i = f.byte(off);
    if (!i || *i == 0 || *i > strings.size()) return {};
    std::string s = trim(strings[*i - 1]);
    // Keep what people can read: firmware strings are ASCII, anything else is damage.
    for (char& c : s)
        if (!std::isprint(static_cast<unsigned char>(c))) c = '?';
    return s;
}

// Speed WORD, with 0xFFFF meaning "see the extended DWORD" (bits 30:0, MT/s); 0 is unknown.
std::optional<std::uint32_t> speed(const Formatted& f, std::size_t off, std::size_t ext_off) {
    auto w = f.word(off);
    if (!w || *w == 0) return std::nullopt;
    if (*w != 0xFFFF) return *w;
    auto e = f.dword(ext_off);
    if (!e || (*e & 0x7FFFFFFFu) == 0) return std::nullopt;
    return *e & 0x7FFFFFFFu;
}

MemoryDevice decode_type17(const Formatted& f, const std::vector<std::string_view>& strings) {
    MemoryDevice d;
    d.handle = std::uint16_t(f.word(2).value_or(0));
    if (auto w = f.word(0x0A); w && *w != 0 && *w != 0xFFFF) d.data_width_bits = int(*w);
    if (auto w = f.word(0x0C)) {
        d.populated = *w != 0;
        if (*w == 0x7FFF) {
            // Extended Size: bits 30:0 in MiB.
            if (auto e = f.dword(0x1C); e && (*e & 0x7FFFFFFFu) != 0)
                d.size_bytes = std::uint64_t(*e & 0x7FFFFFFFu) << 20;
        } else if (*w != 0 && *w != 0xFFFF) {
            // Bit 15: granularity, 1 = KiB, 0 = MiB.
            d.size_bytes = std::uint64_t(*w & 0x7FFFu) << ((*w & 0x8000u) ? 10 : 20);
        }
    }
    if (auto t = f.byte(0x12)) d.memory_type = std::uint8_t(*t);
    d.rated_mts = speed(f, 0x15, 0x54);
    d.configured_mts = speed(f, 0x20, 0x58);
    d.device_locator = string_at(f, 0x10, strings);
    d.bank_locator = string_at(f, 0x11, strings);
    d.part_number = string_at(f, 0x1A, strings);
    return d;
}

std::string upper(std::string_view s) {
    std::string out(s);
    for (char& c : out) c = char(std::toupper(static_cast<unsigned char>(c)));
    return out;
}

bool is_sep(char c) { return c == ' ' || c == '_' || c == '-' || c == '.' || c == ':' || c == '/'; }

// "BANK 0", "BANK 2": numbering some firmware gives each DIMM, not a socket or a controller.
bool plain_bank_number(const std::string& bank) {
    std::string b = upper(bank);
    if (!starts_with(b, "BANK")) return false;
    std::string rest = trim(b.substr(4));
    return !rest.empty() &&
           std::all_of(rest.begin(), rest.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
}

std::optional<int> digits_at(const std::string& s, std::size_t pos, std::size_t* end = nullptr) {
    std::size_t e = pos;
    while (e < s.size() && std::isdigit(static_cast<unsigned char>(s[e])) && e - pos < 3) ++e;
    if (e == pos) return std::nullopt;
    if (end) *end = e;
    return std::stoi(s.substr(pos, e - pos));
}

}  // namespace

SmbiosMemory parse_smbios_memory(std::string_view t) {
    SmbiosMemory out;
    std::size_t off = 0;
    while (off < t.size()) {
        if (t.size() - off < 4) {
            out.problem = "table ends inside a structure header at offset " + std::to_string(off);
            break;
        }
        unsigned type = static_cast<unsigned char>(t[off]);
        std::size_t len = static_cast<unsigned char>(t[off + 1]);
        if (len < 4) {
            out.problem =
                "structure at offset " + std::to_string(off) + " has length " + std::to_string(len) + " (< 4)";
            break;
        }
        if (len > t.size() - off) {
            out.problem = "structure at offset " + std::to_string(off) + " (type " + std::to_string(type) +
                          ") runs past the end of the table";
            break;
        }
        // The string set ends at the first double NUL after the formatted area.
        std::size_t s = off + len;
        std::size_t dbl = t.find(std::string_view("\0\0", 2), s);
        if (dbl == std::string_view::npos) {
            out.problem = "strings of the structure at offset " + std::to_string(off) + " are not terminated";
            break;
        }
        std::vector<std::string_view> strings;
        for (std::size_t p = s; p < dbl;) {
            std::size_t nul = t.find('\0', p);
            if (nul == std::string_view::npos || nul > dbl) nul = dbl;
            strings.push_back(t.substr(p, nul - p));
            p = nul + 1;
        }
        ++out.structures;
        if (type == 17) out.devices.push_back(decode_type17(Formatted{t.substr(off, len)}, strings));
        if (type == 127) break;
        off = dbl + 2;
    }
    return out;
}

std::string memory_type_name(std::uint8_t code) {
    switch (code) {
        case 0x01: return "Other";
        case 0x02: return "Unknown";
        case 0x03: return "DRAM";
        case 0x07: return "RAM";
        case 0x0F: return "SDRAM";
        case 0x12: return "DDR";
        case 0x13: return "DDR2";
        case 0x14: return "DDR2 FB-DIMM";
        case 0x18: return "DDR3";
        case 0x19: return "FBD2";
        case 0x1A: return "DDR4";
        case 0x1B: return "LPDDR";
        case 0x1C: return "LPDDR2";
        case 0x1D: return "LPDDR3";
        case 0x1E: return "LPDDR4";
        case 0x1F: return "Logical non-volatile device";
        case 0x20: return "HBM";
        case 0x21: return "HBM2";
        case 0x22: return "DDR5";
        case 0x23: return "LPDDR5";
        case 0x24: return "HBM3";
        default: {
            char buf[16];
            std::snprintf(buf, sizeof buf, "type 0x%02X", unsigned(code));
            return buf;
        }
    }
}

std::optional<ChannelSlot> channel_of(const MemoryDevice& d) {
    std::string dev = upper(d.device_locator);
    std::string bank = plain_bank_number(d.bank_locator) ? std::string() : upper(d.bank_locator);
    // Pattern 1: the word CHANNEL names the channel ("P0_Node0_Channel0_Dimm1", bank "P0 CHANNEL A"
    // with "DIMM 1", "ChannelA-DIMM0"); the DIMM number follows the word DIMM.
    std::string both = bank + "|" + dev;
    if (auto c = both.find("CHANNEL"); c != std::string::npos) {
        std::size_t p = c + 7;
        while (p < both.size() && is_sep(both[p])) ++p;
        std::size_t id = p;
        while (p < both.size() && std::isalnum(static_cast<unsigned char>(both[p]))) ++p;
        if (p == id) return std::nullopt;
        auto m = both.find("DIMM", p);
        if (m == std::string::npos) return std::nullopt;
        std::size_t q = m + 4;
        while (q < both.size() && is_sep(both[q])) ++q;
        auto n = digits_at(both, q);
        if (!n) return std::nullopt;
        return ChannelSlot{both.substr(0, p), *n};
    }
    // Pattern 2: a channel letter and the DIMM number end the device locator ("DIMM_A1",
    // "CPU1_DIMM_B2", "P1-DIMMA1"). A bare "DIMM1" or "DIMM 3" names no channel.
    std::size_t e = dev.size();
    std::size_t ds = e;
    while (ds > 0 && std::isdigit(static_cast<unsigned char>(dev[ds - 1]))) --ds;
    if (ds == e || e - ds > 2) return std::nullopt;
    std::size_t ls = ds;
    while (ls > 0 && std::isalpha(static_cast<unsigned char>(dev[ls - 1]))) --ls;
    std::string letters = dev.substr(ls, ds - ls);
    bool channel_letter = letters.size() == 1 || (letters.size() == 5 && starts_with(letters, "DIMM"));
    if (!channel_letter) return std::nullopt;
    return ChannelSlot{bank + "|" + dev.substr(0, ds), std::stoi(dev.substr(ds))};
}

namespace {

// Counts, total size, types and speeds over the populated DIMMs.
void summarize_population(const std::vector<MemoryDevice>& devices, MemoryLayout& m) {
    std::uint64_t total = 0;
    bool total_known = true;
    std::set<std::string> types;
    for (auto& d : devices) {
        if (!d.populated) continue;
        ++m.populated;
        if (d.size_bytes) total += *d.size_bytes;
        else total_known = false;
        if (d.memory_type && *d.memory_type != 0x01 && *d.memory_type != 0x02)
            types.insert(memory_type_name(*d.memory_type));
        if (d.configured_mts)
            m.min_configured_mts = std::min(m.min_configured_mts.value_or(*d.configured_mts), *d.configured_mts);
        if (d.rated_mts) m.min_rated_mts = std::min(m.min_rated_mts.value_or(*d.rated_mts), *d.rated_mts);
        if (d.rated_mts && d.configured_mts && *d.configured_mts < *d.rated_mts) ++m.slower_than_rated;
    }
    if (total_known && m.populated > 0) m.total_bytes = total;
    if (!types.empty()) {
        std::string t;
        for (auto& x : types) t += (t.empty() ? "" : " + ") + x;
        m.type = t;
    }
}

// Channels: read from the locators when every slot names one and no channel holds more
// than 3 slots (servers have 1-2, older ones 3 DIMMs per channel; more means the pattern
// was misread, as with Dell's "A1".."A16" per socket). Otherwise one channel per DIMM.
// Sets the rule and max_dimms_per_channel; true when the locators are used.
bool choose_channel_rule(const std::vector<MemoryDevice>& devices, MemoryLayout& m) {
    std::map<std::string, std::set<int>> slots_of;
    bool readable = !devices.empty();
    for (auto& d : devices) {
        auto c = channel_of(d);
        if (!c || !slots_of[c->channel].insert(c->dimm).second) {
            readable = false;
            break;
        }
    }
    if (readable)
        for (auto& [ch, dimms] : slots_of)
            if (dimms.size() > 3) readable = false;
    m.rule = readable ? ChannelRule::Locators : ChannelRule::OnePerDimm;
    if (readable)
        for (auto& [ch, dimms] : slots_of)
            m.max_dimms_per_channel = std::max(m.max_dimms_per_channel, int(dimms.size()));
    return readable;
}

std::string dimm_name(const MemoryDevice& d, int index) {
    return d.device_locator.empty() ? std::to_string(index) : d.device_locator;
}

// The theoretical peak and the channel count; absent, naming the DIMM, when the firmware leaves
// out a rate or width it needs.
void compute_peak(const std::vector<MemoryDevice>& devices, bool by_locator, MemoryLayout& m) {
    // Per channel: the lowest configured rate and width of its DIMMs (a channel runs at one rate).
    struct Channel {
        std::uint32_t mts = 0;
        int width_bits = 0;
    };
    std::map<std::string, Channel> channels;
    int index = 0;
    for (auto& d : devices) {
        if (!d.populated) continue;
        if (!d.configured_mts) {
            m.theoretical_gbps =
                Fact<double>::absent("the firmware does not state the configured speed of DIMM " + dimm_name(d, index));
            return;
        }
        if (!d.data_width_bits) {
            m.theoretical_gbps =
                Fact<double>::absent("the firmware does not state the data width of DIMM " + dimm_name(d, index));
            return;
        }
        // Not `"#" + std::to_string()`: GCC 12 reports a false -Wrestrict on it.
        std::string key = by_locator ? channel_of(d)->channel : std::string("#").append(std::to_string(index));
        auto [it, fresh] = channels.try_emplace(key, Channel{*d.configured_mts, *d.data_width_bits});
        if (!fresh) {
            it->second.mts = std::min(it->second.mts, *d.configured_mts);
            it->second.width_bits = std::min(it->second.width_bits, *d.data_width_bits);
        }
        ++index;
    }
    double gbps = 0;
    for (auto& [k, c] : channels) gbps += double(c.mts) * 1e6 * (c.width_bits / 8.0) / 1e9;
    m.channels = int(channels.size());
    m.theoretical_gbps = gbps;
}

}  // namespace

MemoryLayout summarize_memory(const std::vector<MemoryDevice>& devices) {
    MemoryLayout m;
    m.devices = devices;
    m.slots = int(devices.size());
    summarize_population(devices, m);
    const bool by_locator = choose_channel_rule(devices, m);
    if (m.populated == 0) {
        m.theoretical_gbps = Fact<double>::absent("the SMBIOS table lists no populated DIMM");
        return m;
    }
    compute_peak(devices, by_locator, m);
    return m;
}

std::string smbios_absent_reason(int err) {
    if (err == EACCES || err == EPERM)
        return "SMBIOS table needs root: run as root to see DIMMs and the theoretical rate";
    if (err == ENOENT || err == ENOTDIR) return "no SMBIOS table (virtual machine?)";
    return std::string("SMBIOS table unreadable: ") + std::strerror(err);
}

Fact<std::string> read_smbios_table(const HostFs& fs) {
    // Opened here rather than with HostFs::read, which does not say why a read failed.
    std::string p = fs.path("/sys/firmware/dmi/tables/DMI").string();
    int fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return Fact<std::string>::absent(smbios_absent_reason(errno));
    std::string data;
    char buf[65536];
    // The table is at most a few hundred KiB; 16 MiB bounds a hostile or odd file.
    constexpr std::size_t kMax = std::size_t(16) << 20;
    while (data.size() < kMax) {
        ssize_t n = ::read(fd, buf, sizeof buf);
        if (n < 0) {
            if (errno == EINTR) continue;
            int e = errno;
            ::close(fd);
            return Fact<std::string>::absent(smbios_absent_reason(e));
        }
        if (n == 0) break;
        data.append(buf, std::size_t(n));
    }
    ::close(fd);
    if (data.empty()) return Fact<std::string>::absent("SMBIOS table is empty");
    return data;
}

}  // namespace gpuvet
