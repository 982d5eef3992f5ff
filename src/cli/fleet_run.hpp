// What gpuvet fleet's subcommands do, apart from their option parsing (cli/fleet_cmd.cpp).
#pragma once
#include <optional>
#include <string>

#include "cli/history_record.hpp"
#include "cli/common.hpp"
#include "fleet/step.hpp"
#include "compare/fleet_analysis.hpp"

namespace gpuvet {

struct FleetCheckArgs {
    bool quick = false, full = false;
    std::string only;
    std::optional<std::string> expect, order, burn_duration;
    std::optional<std::string> nodes, partition, nodelist, reservation, time, gpus_per_node, node_timeout;
    std::optional<std::string> out;
    bool nhc = false, drain = false, resume = false;
    std::optional<std::string> gpuvet;
    // The all-reduce across nodes (fleet allreduce, and fleet check --allreduce).
    bool allreduce = false;
    std::optional<std::string> max_size;         // largest message, e.g. 8G
    bool allow_fallback = false;                 // do not ask NCCL for RDMA (NCCL_NET=IB)
    bool no_rdma_write = false;                  // leave out the RDMA write per NIC
    std::optional<std::string> rendezvous_host;  // the address the ranks reach this host at
    HistoryOptions history;                      // the fleet's history, kept where fleet check runs
};

// The all-reduce between the nodes of the allocation (src/cli/fleet_allreduce.cpp).
int run_fleet_allreduce(const GlobalOptions& g, const FleetCheckArgs& a, const std::string& self);
// The node side: one rank (srun starts one per GPU), its report as JSON on stdout.
struct FleetRankArgs {
    std::optional<std::string> board_host, max_size;
    int board_port = 0;
    std::string token;
    bool allow_fallback = false;
    bool no_rdma_write = false;
};
int run_fleet_rank(const FleetRankArgs& a);
// The all-reduce's own options (the size, the GPUs per node), checked before any step starts.
void check_allreduce_args(const FleetCheckArgs& a, const char* size_option);

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

// Shared by fleet check and fleet allreduce (fleet_run.cpp).
std::string file_stem(const std::string& node);
// The nodes a step should start on, when known before it starts (--nodelist, else the allocation's):
// a node that never starts is still named.
std::vector<std::string> expected_nodes(const FleetCheckArgs& a);
// srun's options for the allocation asked for (or the one gpuvet runs in); a usage error outside
// an allocation when no nodes are asked for.
std::vector<std::string> srun_options(const FleetCheckArgs& a);
std::string last_line(const std::string& text);
std::string unfinished_problem(const StepOutcome& o, const NodeOutput& n, double deadline_s);
void write_fleet_files(const Fleet& f, const std::filesystem::path& dir, const Envelope& env);
inline constexpr double kDefaultNodeTimeoutS = 1800;
// The all-reduce step on the allocation of `a` (nodes `nodelist` when given: the nodes a check step
// just ran on), its fabric section and one summary per node; written under `out` (ranks/<node>.json).
struct FabricStep {
    std::optional<FleetFabric> fabric;
    std::vector<FleetNodeInput> nodes;
    std::vector<std::string> notes;
    bool stopped = false;
};
FabricStep run_fabric_step(const FleetCheckArgs& a, const std::string& self, const std::vector<std::string>& nodelist,
                           const std::optional<std::filesystem::path>& out);
// health-check: 0 healthy, 1 a check failed (drained), 3 could not run. prolog: 1 only for a
// hardware FAIL; every tool error (bad option, unwritable --details, a wedged driver) is logged and 0.
int run_node_mode(const GlobalOptions& g, const NodeModeArgs& a, NodeMode mode, const std::string& self);
// The prolog's answer to an error that stopped it before or around the checks (main's boundary
// calls it for the errors its option parsing throws): logged (stderr, syslog), exit 0.
int prolog_tool_error(const std::string& what);
// True when argv asks for `gpuvet fleet prolog`: its errors never exit nonzero.
bool is_prolog_invocation(int argc, char** argv);

}  // namespace gpuvet
