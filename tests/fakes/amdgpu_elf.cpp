#include "amdgpu_elf.hpp"

#include <cstring>
#include <stdexcept>

namespace fake::amdgpu {
namespace {

[[noreturn]] void bad(const std::string& what) { throw std::runtime_error("code object: " + what); }

template <class T>
T at(std::string_view d, uint64_t off) {
    if (off > d.size() || d.size() - off < sizeof(T)) bad("read past the end at offset " + std::to_string(off));
    T v;
    std::memcpy(&v, d.data() + off, sizeof v);
    return v;
}

// The EF_AMDGPU_MACH values of the targets gpuvet builds (LLVM's AMDGPUUsage, "AMDGPU ELF
// Header"; llvm/include/llvm/BinaryFormat/ELF.h).
const std::pair<uint32_t, const char*> kMach[] = {
    {0x02f, "gfx906"}, {0x030, "gfx908"},  {0x03f, "gfx90a"},  {0x040, "gfx940"},  {0x04b, "gfx941"},
    {0x04c, "gfx942"}, {0x036, "gfx1030"}, {0x041, "gfx1100"}, {0x046, "gfx1101"}, {0x047, "gfx1102"},
};

// A minimal MessagePack reader for the metadata note: maps, arrays, strings, integers, booleans.
struct Msg {
    std::string_view d;
    size_t p = 0;
    uint8_t byte() {
        if (p >= d.size()) bad("metadata ends early");
        return static_cast<uint8_t>(d[p++]);
    }
    uint64_t be(int n) {
        uint64_t v = 0;
        for (int i = 0; i < n; ++i) v = v << 8 | byte();
        return v;
    }
    std::string_view raw(uint64_t n) {
        if (n > d.size() - p) bad("metadata string past the end");
        std::string_view s = d.substr(p, n);
        p += n;
        return s;
    }
    // Reads the next value; strings and integers are returned in `s`/`u`, containers give their size.
    enum Kind { Nil, Bool, Uint, Int, Str, Arr, Map, Other };
    Kind next(uint64_t& u, std::string_view& s) {
        uint8_t b = byte();
        if (b <= 0x7f) return u = b, Uint;
        if ((b & 0xf0) == 0x80) return u = b & 0x0f, Map;
        if ((b & 0xf0) == 0x90) return u = b & 0x0f, Arr;
        if ((b & 0xe0) == 0xa0) return s = raw(b & 0x1f), Str;
        if (b >= 0xe0) return u = static_cast<uint64_t>(static_cast<int8_t>(b)), Int;
        switch (b) {
            case 0xc0: return Nil;
            case 0xc2: return u = 0, Bool;
            case 0xc3: return u = 1, Bool;
            case 0xcc: return u = be(1), Uint;
            case 0xcd: return u = be(2), Uint;
            case 0xce: return u = be(4), Uint;
            case 0xcf: return u = be(8), Uint;
            case 0xd0: return u = be(1), Int;
            case 0xd1: return u = be(2), Int;
            case 0xd2: return u = be(4), Int;
            case 0xd3: return u = be(8), Int;
            case 0xd9: return s = raw(be(1)), Str;
            case 0xda: return s = raw(be(2)), Str;
            case 0xdb: return s = raw(be(4)), Str;
            case 0xdc: return u = be(2), Arr;
            case 0xdd: return u = be(4), Arr;
            case 0xde: return u = be(2), Map;
            case 0xdf: return u = be(4), Map;
            default: bad("metadata uses MessagePack type 0x" + std::to_string(b) + ", not expected here");
        }
    }
    void skip() {
        uint64_t u;
        std::string_view s;
        Kind k = next(u, s);
        if (k == Arr)
            for (uint64_t i = 0; i < u; ++i) skip();
        if (k == Map)
            for (uint64_t i = 0; i < 2 * u; ++i) skip();
    }
    std::string str() {
        uint64_t u;
        std::string_view s;
        if (next(u, s) != Str) bad("metadata: a string was expected");
        return std::string(s);
    }
    uint64_t num() {
        uint64_t u;
        std::string_view s;
        Kind k = next(u, s);
        if (k != Uint && k != Int) bad("metadata: a number was expected");
        return u;
    }
    uint64_t container(Kind want) {
        uint64_t u;
        std::string_view s;
        if (next(u, s) != want) bad(want == Map ? "metadata: a map was expected" : "metadata: an array was expected");
        return u;
    }
};

KernelArg read_arg(Msg& m) {
    KernelArg a;
    for (uint64_t n = m.container(Msg::Map); n; --n) {
        std::string k = m.str();
        if (k == ".size") a.size = static_cast<uint32_t>(m.num());
        else if (k == ".offset") a.offset = static_cast<uint32_t>(m.num());
        else if (k == ".value_kind") a.value_kind = m.str();
        else if (k == ".name") a.name = m.str();
        else m.skip();
    }
    return a;
}

Kernel read_kernel(Msg& m) {
    Kernel k;
    for (uint64_t n = m.container(Msg::Map); n; --n) {
        std::string key = m.str();
        if (key == ".name") k.name = m.str();
        else if (key == ".kernarg_segment_size") k.kernarg_segment_size = static_cast<uint32_t>(m.num());
        else if (key == ".args")
            for (uint64_t a = m.container(Msg::Arr); a; --a) k.args.push_back(read_arg(m));
        else m.skip();
    }
    return k;
}

void read_metadata(std::string_view desc, CodeObject& co) {
    Msg m{desc};
    for (uint64_t n = m.container(Msg::Map); n; --n) {
        std::string key = m.str();
        if (key == "amdhsa.target") co.target = m.str();
        else if (key == "amdhsa.kernels")
            for (uint64_t k = m.container(Msg::Arr); k; --k) {
                Kernel kern = read_kernel(m);
                co.kernels[kern.name] = kern;
            }
        else m.skip();
    }
}

}  // namespace

std::string gfx_of_mach(uint32_t mach) {
    for (auto [m, n] : kMach)
        if (m == mach) return n;
    return "";
}

std::optional<uint32_t> mach_of_gfx(std::string_view gfx) {
    for (auto [m, n] : kMach)
        if (gfx == n) return m;
    return std::nullopt;
}

std::string gfx_of_target_version(uint64_t v) {
    static const char kHex[] = "0123456789abcdef";
    if (v < 1000) return "gfx" + std::to_string(v);                         // 942, 908, 906
    const uint64_t major = v / 1000, minor = v / 100 % 10, step = v % 100;  // 9010 -> 9, 0, 10
    return "gfx" + std::to_string(major) + std::to_string(minor) + kHex[step % 16];
}

CodeObject parse(std::string_view d) {
    if (d.size() < 64 || std::memcmp(d.data(),
                                     "\x7f"
                                     "ELF",
                                     4) != 0)
        bad("not an ELF file");
    if (d[4] != 2 || d[5] != 1) bad("not a 64-bit little-endian ELF");
    CodeObject co;
    co.os_abi = static_cast<uint8_t>(d[7]);
    co.abi_version = static_cast<uint8_t>(d[8]);
    co.machine = at<uint16_t>(d, 18);
    co.e_flags = at<uint32_t>(d, 48);
    const uint64_t shoff = at<uint64_t>(d, 40);
    const uint16_t shentsize = at<uint16_t>(d, 58), shnum = at<uint16_t>(d, 60);
    if (shentsize != 64) bad("unexpected section header size");
    struct Sec {
        uint32_t type, link;
        uint64_t off, size, entsize;
    };
    std::vector<Sec> secs;
    for (uint16_t i = 0; i < shnum; ++i) {
        uint64_t h = shoff + uint64_t{i} * 64;
        secs.push_back({at<uint32_t>(d, h + 4), at<uint32_t>(d, h + 40), at<uint64_t>(d, h + 24),
                        at<uint64_t>(d, h + 32), at<uint64_t>(d, h + 56)});
    }
    for (const Sec& s : secs) {
        if (s.type == 8 /* SHT_NOBITS: no bytes in the file */) continue;
        if (s.off > d.size() || s.size > d.size() - s.off) bad("a section lies past the end of the file");
        if (s.type == 11 /* SHT_DYNSYM */) {
            if (s.link >= secs.size() || s.entsize != 24) bad("malformed dynamic symbol table");
            const Sec& strs = secs[s.link];
            for (uint64_t e = s.off + 24; e + 24 <= s.off + s.size; e += 24) {
                uint32_t name = at<uint32_t>(d, e);
                uint16_t shndx = at<uint16_t>(d, e + 6);
                if (shndx == 0 || name >= strs.size) continue;  // undefined
                co.symbols.emplace_back(d.data() + strs.off + name);
            }
        } else if (s.type == 7 /* SHT_NOTE */) {
            for (uint64_t p = s.off; p + 12 <= s.off + s.size;) {
                uint32_t namesz = at<uint32_t>(d, p), descsz = at<uint32_t>(d, p + 4), type = at<uint32_t>(d, p + 8);
                uint64_t name = p + 12, desc = name + ((namesz + 3) & ~3u);
                if (desc + descsz > d.size()) bad("a note lies past the end of the file");
                if (type == 32 /* NT_AMDGPU_METADATA */ && namesz == 7 &&
                    std::memcmp(d.data() + name, "AMDGPU", 6) == 0)
                    read_metadata(d.substr(desc, descsz), co);
                p = desc + ((descsz + 3) & ~3u);
            }
        }
    }
    for (auto& [name, k] : co.kernels)
        for (const auto& s : co.symbols)
            if (s == name + ".kd") k.has_descriptor = true;
    return co;
}

}  // namespace fake::amdgpu
