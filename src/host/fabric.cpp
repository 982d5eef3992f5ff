#include "host/fabric.hpp"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <charconv>

#include "core/strings.hpp"

namespace gpuvet {

std::optional<PortRate> parse_port_rate(std::string_view text) {
    std::string t = trim(text);
    auto unit = t.find(" Gb/sec");
    if (unit == std::string::npos || unit == 0) return std::nullopt;
    PortRate r;
    auto [p, ec] = std::from_chars(t.data(), t.data() + unit, r.gbitps);
    if (ec != std::errc() || p != t.data() + unit || !(r.gbitps > 0) || r.gbitps > 1e5) return std::nullopt;
    auto open = t.find('(', unit), close = t.rfind(')');
    if (open == std::string::npos || close == std::string::npos || close < open) return r;
    std::string inside = trim(std::string_view(t).substr(open + 1, close - open - 1));  // "4X NDR"
    auto x = inside.find('X');
    if (x != std::string::npos && x > 0 && x <= 2 && std::all_of(inside.begin(), inside.begin() + long(x), [](char c) {
            return std::isdigit(static_cast<unsigned char>(c));
        })) {
        r.width_lanes = std::stoi(inside.substr(0, x));
        r.speed_name = trim(std::string_view(inside).substr(x + 1));
    }
    return r;
}

std::optional<CodedState> parse_coded_state(std::string_view text) {
    std::string t = trim(text);
    auto colon = t.find(':');
    if (colon == std::string::npos || colon == 0) return std::nullopt;
    CodedState s;
    auto [p, ec] = std::from_chars(t.data(), t.data() + colon, s.code);
    if (ec != std::errc() || p != t.data() + colon || s.code < 0) return std::nullopt;
    s.name = trim(std::string_view(t).substr(colon + 1));
    return s;
}

namespace {

bool all_digits(const std::string& s) {
    return !s.empty() &&
           std::all_of(s.begin(), s.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
}

// The Ethernet interface under a RoCE port: the port's GID table names it (gid_attrs/ndevs),
// else the PCI function's net/ folder.
std::optional<std::string> roce_netdev(const HostFs& fs, const std::string& dev_dir, const std::string& port_dir) {
    if (auto n = fs.read_line(port_dir + "/gid_attrs/ndevs/0"); n && !n->empty()) return n;
    auto nets = fs.list(dev_dir + "/device/net");
    if (!nets.empty()) return nets.front();
    return std::nullopt;
}

RdmaPort read_port(const HostFs& fs, const std::string& name, const std::string& port) {
    const std::string dev_dir = "/sys/class/infiniband/" + name, dir = dev_dir + "/ports/" + port;
    RdmaPort p;
    p.device = name;
    p.port = std::stoi(port);
    if (auto s = fs.read_line(dir + "/state")) p.state = parse_coded_state(*s);
    if (auto s = fs.read_line(dir + "/phys_state")) p.phys_state = parse_coded_state(*s);
    if (auto s = fs.read_line(dir + "/rate")) {
        p.rate_text = *s;
        p.rate = parse_port_rate(*s);
    }
    p.link_layer = fs.read_line(dir + "/link_layer").value_or("");
    if (p.roce()) {
        p.netdev = roce_netdev(fs, dev_dir, dir);
        if (p.netdev && p.netdev->find('/') == std::string::npos && p.netdev->find("..") == std::string::npos)
            if (auto mtu = fs.read_int("/sys/class/net/" + *p.netdev + "/mtu"); mtu && *mtu > 0 && *mtu < 1 << 20)
                p.netdev_mtu = int(*mtu);
    }
    return p;
}

RdmaDevice read_device(const HostFs& fs, const std::string& name) {
    const std::string dir = "/sys/class/infiniband/" + name;
    RdmaDevice d;
    d.name = name;
    d.pci = read_pci_function_at(fs, dir + "/device");
    d.board_id = fs.read_line(dir + "/board_id").value_or("");
    d.fw_ver = fs.read_line(dir + "/fw_ver").value_or("");
    std::vector<std::string> ports;
    for (auto& p : fs.list(dir + "/ports"))
        if (all_digits(p) && p.size() < 4) ports.push_back(p);
    std::sort(ports.begin(), ports.end(), [](auto& a, auto& b) { return std::stoi(a) < std::stoi(b); });
    for (auto& p : ports) d.ports.push_back(read_port(fs, name, p));
    return d;
}

// The paths NCCL checks before it uses GPUDirect RDMA through a peer-memory client.
constexpr const char* kPeermemPaths[] = {
    "/sys/kernel/mm/memory_peers/nv_mem/version",
    "/sys/kernel/mm/memory_peers/nv_mem_nc/version",
    "/sys/module/nvidia_peermem",
};

int distance_rank(PciDistance d) {
    switch (d) {
        case PciDistance::SameSwitch: return 0;
        case PciDistance::SameRootComplex: return 1;
        case PciDistance::SameNumaNode: return 2;
        case PciDistance::CrossNuma: return 3;
        case PciDistance::Unknown: return 4;
    }
    return 4;
}

}  // namespace

FabricFacts read_fabric(const HostFs& fs) {
    FabricFacts f;
    for (const std::string& name : fs.list("/sys/class/infiniband")) f.devices.push_back(read_device(fs, name));
    f.gpus = find_pci_functions(fs, 0x10de, {0x0302, 0x0300});
    for (const char* p : kPeermemPaths)
        if (fs.exists(p)) {
            f.peermem_evidence = p;
            break;
        }
    f.nvidia_module = fs.read_line("/proc/driver/nvidia/version");
    f.kernel_release = fs.read_line("/proc/sys/kernel/osrelease");
    f.dev_infiniband = fs.exists("/dev/infiniband");
    for (const std::string& e : fs.list("/dev/infiniband")) {
        if (!starts_with(e, "uverbs")) continue;
        f.uverbs.push_back(e);
        if (::access(fs.path("/dev/infiniband/" + e).c_str(), R_OK | W_OK) != 0) f.uverbs_denied.push_back(e);
    }
    return f;
}

std::vector<GpuNicPair> pair_gpus_with_nics(const FabricFacts& f) {
    std::vector<std::size_t> nics;
    for (std::size_t i = 0; i < f.devices.size(); ++i) {
        const RdmaDevice& d = f.devices[i];
        if (d.pci && std::any_of(d.ports.begin(), d.ports.end(), [](const RdmaPort& p) { return p.active(); }))
            nics.push_back(i);
    }
    std::vector<GpuNicPair> out(f.gpus.size());
    for (std::size_t g = 0; g < f.gpus.size(); ++g) out[g].gpu = g;
    if (nics.empty()) return out;
    // Rails: with a NIC for every GPU, each GPU gets a NIC of its own, nearest pairs first (the
    // rail-optimised layout NCCL's topology search finds). Fewer NICs: each GPU takes its nearest.
    struct Candidate {
        int rank;
        std::size_t gpu, nic;
        PciDistance distance;
    };
    std::vector<Candidate> all;
    for (std::size_t g = 0; g < f.gpus.size(); ++g)
        for (std::size_t n : nics) {
            PciDistance d = pci_distance(f.gpus[g], *f.devices[n].pci);
            all.push_back({distance_rank(d), g, n, d});
        }
    std::stable_sort(all.begin(), all.end(), [](const Candidate& a, const Candidate& b) { return a.rank < b.rank; });
    const bool own = nics.size() >= f.gpus.size();
    std::vector<bool> taken(f.devices.size(), false);
    for (const Candidate& c : all) {
        if (out[c.gpu].nic || (own && taken[c.nic])) continue;
        out[c.gpu].nic = c.nic;
        out[c.gpu].distance = c.distance;
        taken[c.nic] = true;
    }
    return out;
}

void read_fabric_acs(const HostFs& fs, FabricFacts& f) {
    for (const GpuNicPair& p : pair_gpus_with_nics(f)) {
        if (!p.nic) continue;
        for (const std::string& bdf : bridges_between(f.gpus[p.gpu], *f.devices[*p.nic].pci)) {
            bool seen = std::any_of(f.acs.begin(), f.acs.end(), [&](const AcsReading& a) { return a.bdf == bdf; });
            if (!seen) f.acs.push_back(read_acs(fs, bdf));
        }
    }
}

}  // namespace gpuvet
