#include "checks/host_fabric_judge.hpp"

#include <algorithm>
#include <map>

#include "core/strings.hpp"

namespace gpuvet {

namespace {

constexpr const char* kWidthSource =
    "InfiniBand HCA ports (ConnectX, QSFP/OSFP cages) carry 4 lanes: the kernel's rate file names the active "
    "width (\"4X\"); a port of the same card model trained narrower than its peers carries that fraction of the "
    "bandwidth";
constexpr const char* kRateSource =
    "the fastest active port of the same card model on this host: a job using every rail runs at the slowest "
    "rail's speed (ring and tree all-reduce wait for the slowest link)";
constexpr const char* kMtuSource =
    "RoCE carries the largest InfiniBand MTU (256-4096 bytes) that fits the Ethernet MTU minus the RoCE headers: "
    "4096-byte RDMA messages need an Ethernet MTU of at least 4200 (NVIDIA/Mellanox, \"MTU Considerations for "
    "RoCE based Applications\"; jumbo frames of 9000 are the usual setting)";
constexpr int kRoceMtuWanted = 4200;

std::string hex4(unsigned v) {
    static const char* digits = "0123456789abcdef";
    std::string s = "0x0000";
    for (int i = 0; i < 4; ++i) s[5 - i] = digits[(v >> (4 * i)) & 0xf];
    return s;
}

void add(CheckResult& r, Verdict v, std::string text, std::string about = {}) {
    r.verdict = worst(r.verdict, v);
    r.findings.emplace_back(v, std::move(text), std::move(about));
}

std::string port_name(const RdmaPort& p) { return p.device + " port " + std::to_string(p.port); }
std::string port_key(const RdmaPort& p, const char* what) {
    return p.device + "_p" + std::to_string(p.port) + "_" + what;
}

// Ports of one card model and link layer are the rails that should match one another.
std::string model_of(const FabricFacts& f, const RdmaPort& p) {
    for (const RdmaDevice& d : f.devices)
        if (d.name == p.device) {
            std::string id = !d.board_id.empty()      ? d.board_id
                             : d.pci && d.pci->device ? hex4(*d.pci->device)
                                                      : std::string("?");
            return p.link_layer + "/" + id;
        }
    return p.link_layer;
}

std::vector<const RdmaPort*> all_ports(const FabricFacts& f) {
    std::vector<const RdmaPort*> out;
    for (const RdmaDevice& d : f.devices)
        for (const RdmaPort& p : d.ports) out.push_back(&p);
    return out;
}

void judge_port_state(CheckResult& r, const RdmaPort& p, int active_peers) {
    const std::string state = p.state ? std::to_string(p.state->code) + ": " + p.state->name : "unreadable";
    const std::string phys =
        p.phys_state ? std::to_string(p.phys_state->code) + ": " + p.phys_state->name : "unreadable";
    const bool link_up = p.phys_state && p.phys_state->code == 5;
    if (link_up && !p.roce())
        add(r, Verdict::Fail,
            port_name(p) + " has a physical link but its state is " + state +
                ": no subnet manager has configured it, so it carries no traffic. Fix: start opensm on the fabric "
                "(or check the managed switch's subnet manager) and confirm with `ibstat`");
    else if (active_peers > 0)
        add(r, Verdict::Warn,
            port_name(p) + " is down (state " + state + ", physical state " + phys + ") while " +
                std::to_string(active_peers) +
                " port(s) of the same card model are up: a rail without a link (cable, transceiver or switch port). "
                "A job that expects every rail loses this one's bandwidth. Fix: reseat or replace the cable, "
                "check the switch port; `ibstat " +
                p.device + "` shows the state");
    else
        r.details.push_back(port_name(p) + ": down (state " + state + ", physical state " + phys +
                            "), as every port of its card model here: not cabled");
}

void judge_port_width(CheckResult& r, const RdmaPort& p, int widest) {
    if (p.roce() || !p.rate || !p.rate->width_lanes) return;
    const int w = *p.rate->width_lanes;
    if (w < widest)
        add(r, Verdict::Fail,
            port_name(p) + " trained at " + std::to_string(w) + "X while its peers run " + std::to_string(widest) +
                "X (" + p.rate_text + "): " + format_number(100.0 * w / widest, 3) +
                "% of the bandwidth, one slow rail that every all-reduce waits for. Fix: reseat or replace the cable "
                "or transceiver; a lane that does not train is a hardware fault",
            port_key(p, "rate_gbitps"));
}

void judge_port_rate(CheckResult& r, const RdmaPort& p, double fastest) {
    if (!p.rate || p.rate->gbitps >= fastest) return;
    add(r, Verdict::Fail,
        port_name(p) + " runs at " + p.rate_text + " while the fastest port of the same card model here runs " +
            format_number(fastest) + " Gb/s: this rail carries " + format_number(100.0 * p.rate->gbitps / fastest, 3) +
            "% of its peers' bandwidth. Fix: check the cable's rating and the switch port's speed setting",
        port_key(p, "rate_gbitps"));
}

void judge_roce(CheckResult& r, const RdmaPort& p) {
    if (!p.roce()) return;
    if (!p.netdev) {
        add(r, Verdict::Warn,
            port_name(p) +
                " is RoCE but names no Ethernet interface (gid_attrs/ndevs, device/net): without one it "
                "has no IP address, and NCCL finds no RoCE v2 GID to use. Fix: bring the interface up with "
                "an address");
        return;
    }
    if (!p.netdev_mtu) {
        r.measurements.push_back(Measurement::absent(port_key(p, "mtu_bytes"),
                                                     "MTU " + *p.netdev + " (" + p.device + ")", "bytes",
                                                     "/sys/class/net/" + *p.netdev + "/mtu unreadable"));
        return;
    }
    Reference ref;
    ref.warn_below = kRoceMtuWanted;
    ref.source = kMtuSource;
    r.measurements.push_back(Measurement::number(port_key(p, "mtu_bytes"), "MTU " + *p.netdev + " (" + p.device + ")",
                                                 *p.netdev_mtu, "bytes")
                                 .against(ref));
    if (*p.netdev_mtu < kRoceMtuWanted)
        add(r, Verdict::Warn,
            port_name(p) + " runs RoCE over " + *p.netdev + " with an MTU of " + std::to_string(*p.netdev_mtu) +
                ": RDMA messages shrink to " + (*p.netdev_mtu >= 2200 ? "2048" : "1024") +
                " bytes, more headers and packets per byte. Fix: `ip link set " + *p.netdev +
                " mtu 9000` (and the same on the switch ports)",
            port_key(p, "mtu_bytes"));
}

// Each port: its rate as a measurement, then state, width, rate against its peers, RoCE's MTU.
void judge_ports(CheckResult& r, const FabricFacts& f) {
    std::map<std::string, int> active, widest;
    std::map<std::string, double> fastest;
    for (const RdmaPort* p : all_ports(f)) {
        if (!p->active()) continue;
        const std::string m = model_of(f, *p);
        ++active[m];
        if (p->rate) {
            fastest[m] = std::max(fastest[m], p->rate->gbitps);
            if (p->rate->width_lanes) widest[m] = std::max(widest[m], *p->rate->width_lanes);
        }
    }
    for (const RdmaPort* p : all_ports(f)) {
        const std::string m = model_of(f, *p);
        const std::string label = port_name(*p) + ", " +
                                  (p->roce()                       ? "RoCE"
                                   : p->link_layer == "InfiniBand" ? "IB"
                                                                   : p->link_layer);
        if (!p->active()) {
            judge_port_state(r, *p, active[m]);
            continue;
        }
        if (p->rate) {
            Reference ref;
            ref.warn_below = fastest[m];
            ref.source = kRateSource;
            r.measurements.push_back(
                Measurement::number(port_key(*p, "rate_gbitps"), label, p->rate->gbitps, "Gbit/s").against(ref));
        } else
            r.measurements.push_back(Measurement::absent(port_key(*p, "rate_gbitps"), label, "Gbit/s",
                                                         "the rate file reads \"" + p->rate_text + "\""));
        judge_port_width(r, *p, widest[m]);
        if (!(p->rate && p->rate->width_lanes && *p->rate->width_lanes < widest[m])) judge_port_rate(r, *p, fastest[m]);
        judge_roce(r, *p);
    }
}

// /dev/infiniband and libibverbs: without them NCCL finds no IB device and uses TCP, silently.
void judge_access(CheckResult& r, const FabricFacts& f, int pci_devices) {
    const std::string fallback =
        "NCCL then finds no IB device and falls back to TCP sockets without an error, at a fraction of the speed "
        "(NVIDIA/nccl#451)";
    if (!f.dev_infiniband)
        add(r, Verdict::Fail,
            "the RDMA devices are in /sys but /dev/infiniband is not visible here (a container started without "
            "them): " +
                fallback +
                ". Fix: `docker run --device=/dev/infiniband` (or --privileged); on Kubernetes, "
                "an RDMA device plugin and the rdma/<resource> request");
    else if (f.uverbs.empty())
        add(r, Verdict::Fail,
            "/dev/infiniband has no uverbs device files: user-space verbs cannot open the NICs; " + fallback +
                ". Fix: load ib_uverbs (`modprobe ib_uverbs`) and pass /dev/infiniband/uverbs* into the container");
    else if (!f.uverbs_denied.empty())
        add(r, Verdict::Fail,
            "this user may not open /dev/infiniband/" + f.uverbs_denied.front() + " read-write (" +
                std::to_string(f.uverbs_denied.size()) + " of " + std::to_string(f.uverbs.size()) +
                " denied): " + fallback + ". Fix: the rdma group or a udev rule giving the device files mode 0666");
    else if (int(f.uverbs.size()) < pci_devices)
        add(r, Verdict::Warn,
            std::to_string(f.uverbs.size()) + " uverbs device files for " + std::to_string(pci_devices) +
                " RDMA devices: the container sees only some NICs, so a job uses only some rails. Fix: pass every "
                "/dev/infiniband/uverbs* into the container");
    if (f.libibverbs_error)
        add(r, Verdict::Fail,
            "libibverbs.so.1 cannot be loaded (" + *f.libibverbs_error + "): " + fallback +
                ". Fix: install libibverbs1 and ibverbs-providers (rdma-core) in this image");
}

// GPUDirect RDMA: the NIC reads and writes GPU memory directly, or every byte bounces through host RAM.
void judge_gdr(CheckResult& r, const FabricFacts& f) {
    if (f.gpus.empty()) return;
    if (!f.nvidia_module) {
        r.details.push_back(
            "GPUDirect RDMA not judged: the NVIDIA kernel module is not loaded (no /proc/driver/nvidia/version)");
        return;
    }
    if (!f.peermem_evidence.empty()) {
        r.measurements.push_back(Measurement::textual("gpudirect_rdma", "GPUDirect RDMA", "nvidia-peermem"));
        r.details.push_back("GPUDirect RDMA: the peer-memory client is loaded (" + f.peermem_evidence + ")");
        return;
    }
    if (dmabuf_possible(f)) {
        r.measurements.push_back(Measurement::textual("gpudirect_rdma", "GPUDirect RDMA", "DMA-BUF"));
        add(r, Verdict::Pass,
            "nvidia-peermem is not loaded; GPUDirect RDMA can go through DMA-BUF instead (the open NVIDIA kernel "
            "module on Linux " +
                *f.kernel_release +
                ", 5.12 or later), which NCCL uses where the CUDA driver reports "
                "DMA-BUF support");
        return;
    }
    r.measurements.push_back(
        Measurement::absent("gpudirect_rdma", "GPUDirect RDMA", "", "neither nvidia-peermem nor DMA-BUF is available"));
    add(r, Verdict::Fail,
        "no GPUDirect RDMA: nvidia-peermem is not loaded (none of /sys/kernel/mm/memory_peers/nv_mem*, "
        "/sys/module/nvidia_peermem) and DMA-BUF needs the open kernel module on Linux 5.12+. Every inter-node byte "
        "is copied through host memory: NCCL's channels lack /GDRDMA, and one report went from 33 to 93 GB/s once "
        "GDR was on (NVIDIA/nccl#1412). Fix: `modprobe nvidia-peermem`, and list it in /etc/modules-load.d",
        "gpudirect_rdma");
}

// A NIC's own PCIe link: a card trained narrower than it can, or a link slower than its ports.
void judge_nic_pcie(CheckResult& r, const RdmaDevice& d) {
    if (!d.pci) return;
    const PciLink& l = d.pci->link;
    if (!l.width || !l.speed_gts) return;
    const std::string link = "x" + std::to_string(*l.width) + " at " + format_number(*l.speed_gts) + " GT/s";
    if (l.max_width && *l.width < *l.max_width)
        add(r, Verdict::Fail,
            d.name + "'s PCIe link (" + d.pci->bdf + ") trained at " + link + " of x" + std::to_string(*l.max_width) +
                ": the card moves at most " + format_number(100.0 * *l.width / *l.max_width, 3) +
                "% of what it can between the fabric and memory. Fix: reseat the card or its riser, or move it to a "
                "full-width slot");
    double ports_gbitps = 0;
    for (const RdmaPort& p : d.ports)
        if (p.active() && p.rate) ports_gbitps += p.rate->gbitps;
    const double carries = pcie_payload_gbitps(*l.speed_gts, *l.width);
    if (ports_gbitps > 0 && carries < ports_gbitps)
        add(r, Verdict::Warn,
            d.name + "'s PCIe link (" + link + ", about " + format_number(carries) +
                " Gbit/s after encoding) is slower than its active ports (" + format_number(ports_gbitps) +
                " Gbit/s): the slot, not the network, limits it" +
                (l.max_speed_gts && *l.speed_gts < *l.max_speed_gts
                     ? std::string(" (the card supports ") + format_number(*l.max_speed_gts) +
                           " GT/s; check the BIOS "
                           "slot setting)"
                     : std::string()));
}

std::string where(const PciFunction& f) {
    return f.bdf + (f.numa_node ? ", NUMA " + std::to_string(*f.numa_node) : std::string(", NUMA ?"));
}

// Each GPU with the NIC a job would pair it with; far pairs lose GPUDirect RDMA or cross sockets.
void judge_pairing(CheckResult& r, const FabricFacts& f, const std::vector<GpuNicPair>& pairs) {
    int near = 0;
    for (const GpuNicPair& p : pairs) {
        const PciFunction& g = f.gpus[p.gpu];
        if (!p.nic) continue;
        const RdmaDevice& n = f.devices[*p.nic];
        r.details.push_back("GPU " + g.bdf + " (" + where(g).substr(g.bdf.size() + 2) + ") -> " + n.name + " (" +
                            where(*n.pci) + "): " + to_string(p.distance) + " (" + topo_word(p.distance) + ")");
        if (p.distance == PciDistance::SameSwitch || p.distance == PciDistance::SameRootComplex) ++near;
        if (p.distance == PciDistance::CrossNuma)
            add(r, Verdict::Warn,
                "GPU " + g.bdf + " (NUMA " + std::to_string(g.numa_node.value_or(-1)) +
                    ") has no RDMA NIC of its own on "
                    "its NUMA node: its NIC, " +
                    n.name + ", is on NUMA node " + std::to_string(n.pci->numa_node.value_or(-1)) +
                    ", so its traffic crosses the inter-socket link, and GPUDirect RDMA needs the HCA and the GPU on "
                    "one "
                    "PCIe root complex (NVIDIA GPUDirect RDMA user manual, system requirements). Fix: move the NIC to "
                    "a "
                    "slot on the GPU's socket (the server's "
                    "block diagram names them)");
    }
    Reference ref;
    ref.source = "a GPU and a NIC under one PCIe switch or root complex: the GPUDirect RDMA path (NCCL's PIX/PXB/PHB)";
    r.measurements.push_back(
        Measurement::number("gpus_with_near_nic", "GPUs with a near NIC", near, "count").against(ref));
}

// ACS redirecting peer-to-peer requests sends GPU<->NIC traffic up to the root complex and back.
void judge_acs(CheckResult& r, const FabricFacts& f) {
    int unreadable = 0;
    std::string why;
    for (const AcsReading& a : f.acs) {
        if (!a.absent_reason.empty()) {
            ++unreadable;
            why = a.absent_reason;
            continue;
        }
        if (!a.control || !(*a.control & (kAcsRequestRedirect | kAcsCompletionRedirect))) continue;
        add(r, Verdict::Fail,
            "PCIe ACS redirects peer-to-peer traffic on bridge " + a.bdf +
                " (between a GPU and its NIC): GPUDirect RDMA transfers go up to the root complex and back, about "
                "half the bandwidth (NVIDIA/nccl-tests#112, NVIDIA/nccl#489). Fix: disable ACS in the BIOS (on bare "
                "metal), or `setpci -s " +
                a.bdf + " ECAP_ACS+6.w=0000` until the next boot");
    }
    if (unreadable > 0)
        r.details.push_back("ACS not read on " + std::to_string(unreadable) +
                            " bridge(s) between GPUs and NICs: " + why);
}

}  // namespace

double pcie_payload_gbitps(double speed_gts, int width) {
    const double encoding = speed_gts <= 5.0 ? 8.0 / 10.0 : speed_gts < 64.0 ? 128.0 / 130.0 : 242.0 / 256.0;
    return speed_gts * width * encoding;
}

bool dmabuf_possible(const FabricFacts& f) {
    if (!f.nvidia_module || f.nvidia_module->find("Open Kernel Module") == std::string::npos) return false;
    if (!f.kernel_release) return false;
    auto parts = split(*f.kernel_release, '.');
    if (parts.size() < 2) return false;
    try {
        const int major = std::stoi(parts[0]), minor = std::stoi(parts[1]);
        return major > 5 || (major == 5 && minor >= 12);
    } catch (...) {
        return false;
    }
}

namespace {

std::string summary_of(const CheckResult& r, const FabricFacts& f, int active, double total_gbitps) {
    std::map<std::string, int> kinds;  // "400 Gb/s InfiniBand" -> ports
    for (const RdmaPort* p : all_ports(f))
        if (p->active() && p->rate)
            ++kinds[format_number(p->rate->gbitps) + " Gb/s " + (p->roce() ? "RoCE" : p->link_layer)];
    std::string s = std::to_string(active) + " of " + std::to_string(all_ports(f).size()) + " RDMA port(s) active";
    std::string list;
    for (auto& [k, n] : kinds) list += (list.empty() ? "" : ", ") + std::to_string(n) + " x " + k;
    if (!list.empty()) s += " (" + list + ", " + format_number(total_gbitps) + " Gbit/s in all)";
    int fails = 0, warns = 0;
    const Finding* first = nullptr;
    for (const Finding& x : r.findings) {
        fails += x.verdict == Verdict::Fail;
        warns += x.verdict == Verdict::Warn;
        if (!first && x.verdict == r.verdict && x.verdict != Verdict::Pass) first = &x;
    }
    if (!first) return s + "; no fault found.";
    // The first finding of the worst kind names the problem; its words before the first ':' say what.
    const std::string what = first->text.substr(0, first->text.find(": "));
    return s + "; " + std::to_string(fails) + " fault(s), " + std::to_string(warns) + " warning(s), first: " + what +
           ".";
}

}  // namespace

CheckResult judge_fabric(const FabricFacts& f) {
    CheckResult r;
    r.key = "host.fabric";
    r.title = "RDMA fabric (NICs, ports, GPUDirect)";
    r.verdict = Verdict::Pass;
    int pci_devices = 0, active = 0;
    double total = 0;
    for (const RdmaDevice& d : f.devices) pci_devices += d.pci.has_value();
    for (const RdmaPort* p : all_ports(f))
        if (p->active()) ++active, total += p->rate ? p->rate->gbitps : 0;
    r.measurements.push_back(Measurement::number("rdma_devices", "RDMA devices", double(f.devices.size()), "count"));
    r.measurements.push_back(Measurement::number("active_ports", "Active RDMA ports", active, "count"));
    r.measurements.push_back(Measurement::number("gpus", "NVIDIA GPUs (PCI tree)", double(f.gpus.size()), "count"));
    if (f.devices.empty()) {
        r.measurements.clear();  // no device: the summary says it all, three zeros would only repeat it
        r.verdict = Verdict::Skip;
        r.summary =
            "No RDMA device (/sys/class/infiniband is empty or absent): jobs across hosts would use TCP sockets.";
        return r;
    }
    if (active == 0)
        add(r, Verdict::Fail,
            "no RDMA port is active: nothing can carry RDMA traffic and NCCL falls back to TCP sockets. Fix: check "
            "cables, switch ports and the subnet manager (`ibstat`)");
    r.measurements.push_back(Measurement::number("rdma_total_gbitps", "RDMA line rate, total", total, "Gbit/s"));
    judge_access(r, f, pci_devices);
    judge_ports(r, f);
    for (const RdmaDevice& d : f.devices) judge_nic_pcie(r, d);
    judge_gdr(r, f);
    if (!f.gpus.empty()) judge_pairing(r, f, pair_gpus_with_nics(f));
    judge_acs(r, f);
    r.summary = summary_of(r, f, active, total);
    return r;
}

}  // namespace gpuvet
