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
// loaded), so they end in seconds, well inside Slurm 22.05's fixed 60 s health-check kill. A node
// drained for any other check (GEMM, burn, an outlier) is never resumed by them.
inline constexpr const char* kPassiveChecks = "gpu.driver,gpu.identity,gpu.health,gpu.pcie_link,gpu.nvlink";

int run_fleet_check(const GlobalOptions& g, const FleetCheckArgs& a, const std::string& self);
// health-check: 0 healthy, 1 a check failed (drained), 3 could not run. prolog: 1 only for a
// hardware FAIL; every tool error (bad option, unwritable --details, a wedged driver) is logged and 0.
int run_node_mode(const GlobalOptions& g, const NodeModeArgs& a, NodeMode mode, const std::string& self);
// The prolog's answer to an error that stopped it before or around the checks (main's boundary
// calls it for the errors its option parsing throws): logged (stderr, syslog), exit 0.
int prolog_tool_error(const std::string& what);
// True when argv asks for `gpuvet fleet prolog`: its errors never exit nonzero.
bool is_prolog_invocation(int argc, char** argv);

}  // namespace gpuvet
