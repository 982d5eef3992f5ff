// The judge of an all-reduce across nodes: the measured bus bandwidth of the whole job, of each rail
// (the k-th GPU of every node in one communicator) and of each pair of nodes, held against the
// fabric found (RDMA NICs per node x the per-NIC figure for their rate), and each node's NCCL log
// read for the transport, the NICs and GPUDirect RDMA. Pure: plain figures in, a result out. The
// launcher that measures them (one process per GPU on every node) hands its figures here.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/result.hpp"
#include "gpu/nccl_log.hpp"

namespace gpuvet::fabric_allreduce {

// What one node brought: its RDMA NICs as host.fabric found them, and its ranks' NCCL logs merged.
struct NodeFabric {
    std::string node;                    // "gpu-node-07"
    int rdma_nics = 0;                   // NICs with an active port
    std::optional<double> nic_gbitps;    // their rate (the slowest, when they differ)
    int gpus = 0;                        // ranks (GPUs) the run had on it; 0: unknown
    std::vector<std::string> rail_nics;  // the NIC nearest the k-th GPU, per rail ("" unknown)
    std::vector<std::string> hints;      // host.fabric's causes of a fallback on this node
    std::vector<NcclLog> logs;           // one per rank on this node
};

// A GPU drives one NIC at a time (its nearest: the rail), so a node's NICs count up to its GPUs.
int nics_in_use(const NodeFabric& n);

// One measured communicator: the whole job, one rail, or one pair of nodes.
struct Measured {
    std::vector<std::string> nodes;        // the nodes it spans
    std::optional<int> rail;               // set for a per-rail run
    std::uint64_t bytes = 0;               // the message size the figure is for (the largest measured)
    double busbw_gbps = 0;                 // nccl-tests' bus bandwidth: algbw x 2(n-1)/n
    std::uint64_t checked = 0, wrong = 0;  // result elements compared, and those that were wrong
};

struct FabricRun {
    std::vector<NodeFabric> nodes;
    std::optional<Measured> all;
    std::vector<Measured> rails, pairs;
};

// The inter-node busbw one NIC of that rate gives in NCCL's all-reduce at large sizes, GB/s:
// 12 for 100G, 24 for 200G (sjeaugey, NVIDIA/nccl-tests#119), 47 for 400G NDR (46-48,
// AddyLaddy, NVIDIA/nccl-tests#290 and #267); other rates 94% of the line rate in bytes (the
// ratio of those figures), said so in the source.
double per_nic_busbw_gbps(double nic_gbitps);
std::string per_nic_source(double nic_gbitps);

inline constexpr double kPassFraction = 0.90;  // nccl-tests' NCCL_TESTS_MIN_BW: FAILED below 0.9x
inline constexpr double kWarnFraction = 0.67;  // Azure ND H100 v5: ~450 GB/s, GHR below 300 (0.67)

// The judged result, and the nodes its findings name as at fault (the culprit of the slow pairs, a
// node on sockets, without GPUDirect RDMA, or whose RDMA did not initialise), each with the finding.
struct Judged {
    CheckResult result;
    std::vector<std::pair<std::string, std::string>> blamed;  // node, finding text
};
Judged judge_run(const FabricRun& run);
CheckResult judge(const FabricRun& run);

}  // namespace gpuvet::fabric_allreduce
