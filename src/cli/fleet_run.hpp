// What gpuvet fleet's subcommands do, apart from their option parsing (cli/fleet_cmd.cpp).
#pragma once
#include <optional>
#include <string>

#include "cli/common.hpp"

namespace gpuvet {

struct FleetCheckArgs {
    bool quick = false, full = false;
    std::string only;
    std::optional<std::string> expect, order, burn_duration;
    std::optional<std::string> nodes, partition, nodelist, reservation, time, gpus_per_node, node_timeout;
    std::optional<std::string> out;
    bool nhc = false, drain = false, resume = false;
    std::optional<std::string> gpuvet;
};

enum class NodeMode { HealthCheck, Prolog };

struct NodeModeArgs {
    bool dry_run = false;
    std::optional<std::string> details;
    std::optional<std::string> timeout;
};

// The checks the node modes run: passive ones only (they read the driver and the links; nothing is
// loaded), so they end in seconds, well inside Slurm 22.05's fixed 60 s health-check kill.
inline constexpr const char* kPassiveChecks = "gpu.driver,gpu.identity,gpu.health,gpu.pcie_link,gpu.nvlink";

int run_fleet_check(const GlobalOptions& g, const FleetCheckArgs& a, const std::string& self);
int run_node_mode(const GlobalOptions& g, const NodeModeArgs& a, NodeMode mode, const std::string& self);

}  // namespace gpuvet
