// The inventory's RDMA fabric section, as host.fabric read and judged it: a row per RDMA port, per
// GPU and its nearest NIC, and for the GPUDirect prerequisites. Filled by the inventory command
// (checks/host_fabric), printed by report/inventory_view.
#pragma once
#include <string>
#include <utility>
#include <vector>

namespace gpuvet {

struct FabricInventory {
    std::string absent_reason;  // when the host has no RDMA device
    std::string verdict;        // "PASS", "WARN", "FAIL", "SKIP"
    std::string summary;
    std::vector<std::pair<std::string, std::string>> rows;  // "mlx5_0 port 1", "InfiniBand, 4: ACTIVE, ..."
    std::vector<std::string> findings;                      // "FAIL: ..."
};

}  // namespace gpuvet
