// The RDMA NICs of the node a double stands for, read from the sysfs fixture tree under GPUVET_ROOT
// (the tree host.fabric reads, written by tests/fixtures/hosts/make_fabric.py): so the NCCL and
// libibverbs doubles open exactly the devices and ports gpuvet's own reading finds.
#pragma once
#include <string>
#include <vector>

namespace fake {

struct FabricPort {
    std::string device;  // "mlx5_0"
    int port = 1;
    bool active = false;     // state "4: ACTIVE"
    double rate_gbitps = 0;  // "400 Gb/sec (4X NDR)" -> 400
    double data_gbitps = 0;  // after the line encoding: 0.8 of it for SDR, DDR, QDR (8b/10b), 64/66 for FDR
    bool roce = false;       // link_layer "Ethernet"
    std::string netdev;      // RoCE: the Ethernet interface (gid_attrs/ndevs/0)
};

// The root the doubles read: GPUVET_ROOT, else "/".
std::string fabric_root();
// Every port of every device under <root>/sys/class/infiniband, devices in natural name order
// (mlx5_2 before mlx5_10), ports in number order.
std::vector<FabricPort> read_fabric_ports(const std::string& root);
// The ports that are ACTIVE, one per device (the first active port).
std::vector<FabricPort> active_nics(const std::vector<FabricPort>& ports);
// What NCCL looks for before it registers GPU memory with a NIC: the peer-memory client
// (/sys/kernel/mm/memory_peers/nv_mem*/version, /sys/module/nvidia_peermem), or DMA-BUF through
// the open kernel module (its /proc/driver/nvidia/version says "Open Kernel Module").
bool gdr_available(const std::string& root);
// True when <root>/dev/infiniband holds a verbs device file (uverbsN): what opening a device needs.
bool verbs_devices_present(const std::string& root);
// "mlx5_2" < "mlx5_10".
bool natural_less(const std::string& a, const std::string& b);

}  // namespace fake
