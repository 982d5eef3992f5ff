// The RDMA fabric of this host as sysfs shows it: every RDMA device and port
// (/sys/class/infiniband), the GPUs and NICs in the PCI tree, the GPUDirect RDMA prerequisites
// (nvidia-peermem, or DMA-BUF), the verbs device files of this container and the ACS state of
// the bridges between the GPUs and the NICs. No root needed except for ACS. Judged in
// checks/host_fabric_judge.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "host/pci_tree.hpp"
#include "core/host_fs.hpp"

namespace gpuvet {

// "400 Gb/sec (4X NDR)" as the kernel writes a port's rate.
struct PortRate {
    double gbitps = 0;
    std::optional<int> width_lanes;  // 4 for "4X"
    std::string speed_name;          // "NDR"; empty when the kernel gave none
};
std::optional<PortRate> parse_port_rate(std::string_view text);
// "4: ACTIVE" -> {4, "ACTIVE"}
struct CodedState {
    int code = 0;
    std::string name;
};
std::optional<CodedState> parse_coded_state(std::string_view text);

struct RdmaPort {
    std::string device;  // "mlx5_0"
    int port = 1;
    std::optional<CodedState> state;       // 4: ACTIVE
    std::optional<CodedState> phys_state;  // 5: LinkUp
    std::optional<PortRate> rate;
    std::string rate_text;              // as read, for the report
    std::string link_layer;             // "InfiniBand", "Ethernet"; empty when unreadable
    std::optional<std::string> netdev;  // RoCE: the Ethernet interface under the port
    std::optional<int> netdev_mtu;

    bool roce() const { return link_layer == "Ethernet"; }
    bool active() const { return state && state->code == 4; }
};

struct RdmaDevice {
    std::string name;                // "mlx5_0"
    std::optional<PciFunction> pci;  // absent for software devices (rxe, siw)
    std::string board_id;            // "MT_0000000838"; empty when absent
    std::string fw_ver;
    std::vector<RdmaPort> ports;
};

struct FabricFacts {
    std::vector<RdmaDevice> devices;
    std::vector<PciFunction> gpus;  // NVIDIA display and 3D controllers in the PCI tree

    // GPUDirect RDMA: what NCCL itself looks for (src/transport/net_ib/gdr.cc).
    std::string peermem_evidence;              // the first of NCCL's paths that exists; empty: none
    std::optional<std::string> nvidia_module;  // /proc/driver/nvidia/version's first line
    std::optional<std::string> kernel_release;

    // The verbs device files as this process (this container) sees them.
    bool dev_infiniband = false;
    std::vector<std::string> uverbs;         // "uverbs0", ...
    std::vector<std::string> uverbs_denied;  // those this process may not open read-write

    std::optional<std::string> libibverbs_error;  // set when libibverbs.so.1 could not be loaded
    bool libibverbs_probed = false;

    std::vector<AcsReading> acs;  // the bridges between each GPU and its nearest NIC
};

// The GPU–NIC pairs a job would use: with at least as many NICs (with an active port) as GPUs,
// each GPU gets a NIC of its own, nearest pairs first; with fewer, each GPU its nearest NIC.
struct GpuNicPair {
    std::size_t gpu = 0;             // index into FabricFacts::gpus
    std::optional<std::size_t> nic;  // index into FabricFacts::devices
    PciDistance distance = PciDistance::Unknown;
};
std::vector<GpuNicPair> pair_gpus_with_nics(const FabricFacts& f);

// Reads everything but the library probe and ACS (see read_fabric_acs).
FabricFacts read_fabric(const HostFs& fs);
// The ACS readings of the bridges between each pair.
void read_fabric_acs(const HostFs& fs, FabricFacts& f);

}  // namespace gpuvet
