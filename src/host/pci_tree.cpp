#include "host/pci_tree.hpp"

#include <algorithm>
#include <charconv>
#include <cstdlib>

#include "core/strings.hpp"

namespace gpuvet {

namespace {

std::optional<unsigned> read_hex(const HostFs& fs, const std::string& file) {
    auto s = fs.read_line(file);  // "0x10de"
    if (!s || s->size() < 3 || !starts_with(*s, "0x")) return std::nullopt;
    unsigned v = 0;
    auto [p, ec] = std::from_chars(s->data() + 2, s->data() + s->size(), v, 16);
    if (ec != std::errc() || p != s->data() + s->size()) return std::nullopt;
    return v;
}

std::optional<int> read_small_int(const HostFs& fs, const std::string& file) {
    auto v = fs.read_int(file);
    if (!v || *v < -1 || *v > 4096) return std::nullopt;
    return int(*v);
}

// The system path (as HostFs takes it) that a path inside the root resolves to, following links.
std::optional<std::string> resolve(const HostFs& fs, const std::string& abs) {
    std::error_code ec;
    auto real = std::filesystem::canonical(fs.path(abs), ec);
    if (ec) return std::nullopt;
    auto root = std::filesystem::canonical(fs.root(), ec);
    if (ec) return std::nullopt;
    auto rel = real.lexically_relative(root);
    if (rel.empty() || *rel.begin() == "..") return std::nullopt;  // a link out of the fixture tree
    std::string out(1, '/');  // built in two steps: GCC 12 at -O3 warns falsely (-Wrestrict) on "/" + s
    out += rel.generic_string();
    return out;
}

PciFunction read_function_dir(const HostFs& fs, const std::string& dir) {
    PciFunction f;
    auto parts = split(dir, '/');  // "", "sys", "devices", "pci0000:17", ..., bdf
    std::vector<std::string> chain;
    for (auto& p : parts)
        if (!p.empty()) chain.push_back(p);
    f.bdf = chain.empty() ? std::string() : chain.back();
    if (chain.size() > 3 && chain[0] == "sys" && chain[1] == "devices")
        f.ancestors.assign(chain.begin() + 2, chain.end() - 1);
    f.vendor = read_hex(fs, dir + "/vendor");
    f.device = read_hex(fs, dir + "/device");
    f.class_code = read_hex(fs, dir + "/class");
    if (auto n = read_small_int(fs, dir + "/numa_node"); n && *n >= 0) f.numa_node = *n;
    if (auto s = fs.read_line(dir + "/current_link_speed")) f.link.speed_gts = parse_link_speed_gts(*s);
    if (auto s = fs.read_line(dir + "/max_link_speed")) f.link.max_speed_gts = parse_link_speed_gts(*s);
    if (auto w = read_small_int(fs, dir + "/current_link_width"); w && *w > 0) f.link.width = *w;
    if (auto w = read_small_int(fs, dir + "/max_link_width"); w && *w > 0) f.link.max_width = *w;
    return f;
}

bool is_bridge_name(const std::string& s) { return !starts_with(s, "pci"); }  // "pci0000:17" is the host bridge

}  // namespace

std::optional<double> parse_link_speed_gts(std::string_view text) {
    std::string t = trim(text);
    auto gt = t.find(" GT/s");
    if (gt == std::string::npos || gt == 0) return std::nullopt;
    double v = 0;
    auto [p, ec] = std::from_chars(t.data(), t.data() + gt, v);
    if (ec != std::errc() || p != t.data() + gt || !(v > 0) || v > 1000) return std::nullopt;
    return v;
}

std::optional<PciFunction> read_pci_function_at(const HostFs& fs, const std::string& device_link) {
    auto dir = resolve(fs, device_link);
    if (!dir || !starts_with(*dir, "/sys/devices/")) return std::nullopt;
    return read_function_dir(fs, *dir);
}

std::optional<PciFunction> read_pci_function(const HostFs& fs, const std::string& bdf) {
    if (bdf.empty() || bdf.find('/') != std::string::npos || bdf.find("..") != std::string::npos) return std::nullopt;
    return read_pci_function_at(fs, "/sys/bus/pci/devices/" + bdf);
}

std::vector<PciFunction> find_pci_functions(const HostFs& fs, unsigned vendor, std::vector<unsigned> class_prefixes) {
    std::vector<PciFunction> out;
    for (const std::string& bdf : fs.list("/sys/bus/pci/devices")) {
        auto v = read_hex(fs, "/sys/bus/pci/devices/" + bdf + "/vendor");
        auto c = read_hex(fs, "/sys/bus/pci/devices/" + bdf + "/class");
        if (!v || *v != vendor || !c) continue;
        bool want = std::any_of(class_prefixes.begin(), class_prefixes.end(),
                                [&](unsigned prefix) { return (*c >> 8) == prefix; });
        if (!want) continue;
        if (auto f = read_pci_function(fs, bdf)) out.push_back(*f);
    }
    return out;
}

const char* to_string(PciDistance d) {
    switch (d) {
        case PciDistance::SameSwitch: return "same PCIe switch";
        case PciDistance::SameRootComplex: return "same root complex";
        case PciDistance::SameNumaNode: return "same NUMA node, different root complexes";
        case PciDistance::CrossNuma: return "different NUMA nodes";
        case PciDistance::Unknown: return "unknown";
    }
    return "unknown";
}

const char* topo_word(PciDistance d) {
    switch (d) {
        case PciDistance::SameSwitch: return "PXB";
        case PciDistance::SameRootComplex: return "PHB";
        case PciDistance::SameNumaNode: return "NODE";
        case PciDistance::CrossNuma: return "SYS";
        case PciDistance::Unknown: return "?";
    }
    return "?";
}

namespace {
std::size_t common_depth(const PciFunction& a, const PciFunction& b) {
    std::size_t n = 0;
    while (n < a.ancestors.size() && n < b.ancestors.size() && a.ancestors[n] == b.ancestors[n]) ++n;
    return n;
}
}  // namespace

PciDistance pci_distance(const PciFunction& a, const PciFunction& b) {
    if (!a.ancestors.empty() && !b.ancestors.empty()) {
        const std::size_t n = common_depth(a, b);
        // [0] is the host bridge, [1] the root port; anything common below that is a switch.
        if (n >= 3) return PciDistance::SameSwitch;
        if (n >= 1) return PciDistance::SameRootComplex;
    }
    if (!a.numa_node || !b.numa_node) return PciDistance::Unknown;
    return *a.numa_node == *b.numa_node ? PciDistance::SameNumaNode : PciDistance::CrossNuma;
}

std::vector<std::string> bridges_between(const PciFunction& a, const PciFunction& b) {
    std::vector<std::string> out;
    const std::size_t n = common_depth(a, b);
    auto take = [&](const PciFunction& f, std::size_t from) {
        for (std::size_t i = from; i < f.ancestors.size(); ++i)
            if (is_bridge_name(f.ancestors[i]) && std::find(out.begin(), out.end(), f.ancestors[i]) == out.end())
                out.push_back(f.ancestors[i]);
    };
    take(a, n ? n - 1 : 0);  // the common ancestor routes the transfer: its ACS counts too
    take(b, n ? n - 1 : 0);
    return out;
}

AcsReading parse_acs(std::string bdf, std::string_view config) {
    AcsReading r;
    r.bdf = std::move(bdf);
    auto u32 = [&](std::size_t at) {
        return std::uint32_t(std::uint8_t(config[at])) | std::uint32_t(std::uint8_t(config[at + 1])) << 8 |
               std::uint32_t(std::uint8_t(config[at + 2])) << 16 | std::uint32_t(std::uint8_t(config[at + 3])) << 24;
    };
    if (config.size() < 0x104) {
        // Without CAP_SYS_ADMIN the kernel returns only the first 64 bytes of config space.
        r.absent_reason = "the extended PCI config space needs root to read (run as root to see ACS)";
        return r;
    }
    std::size_t at = 0x100;
    for (int guard = 0; guard < 1024 && at >= 0x100 && at + 8 <= config.size(); ++guard) {
        const std::uint32_t header = u32(at);
        if (header == 0 || header == 0xffffffffu) break;
        if ((header & 0xffffu) == 0x000d) {
            r.has_acs = true;
            r.control = std::uint16_t(u32(at + 4) >> 16);  // Capability (16 bits), then Control (16 bits)
            return r;
        }
        const std::size_t next = (header >> 20) & 0xffcu;
        if (next <= at) break;  // the list only moves forward; anything else is a loop
        at = next;
    }
    return r;  // no ACS capability: this bridge cannot redirect peer-to-peer traffic
}

AcsReading read_acs(const HostFs& fs, const std::string& bdf) {
    auto config = fs.read("/sys/bus/pci/devices/" + bdf + "/config");
    if (!config) {
        AcsReading r;
        r.bdf = bdf;
        r.absent_reason = "its PCI config space could not be read";
        return r;
    }
    return parse_acs(bdf, *config);
}

}  // namespace gpuvet
