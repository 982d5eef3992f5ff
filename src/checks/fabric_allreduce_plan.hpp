// The multi-node all-reduce's plan and its figures, independent of any GPU: which communicators
// every rank takes part in (the whole job, one per rail, pairs of nodes), the message sizes, what
// one rank reports back to the launcher (a JSON document over the step's output) and how the
// launcher turns every rank's report into the judge's figures (fabric_allreduce_judge).
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "checks/fabric_allreduce_judge.hpp"
#include "checks/fabric_rdma.hpp"
#include "gpu/nccl_log.hpp"

namespace gpuvet::fabric_allreduce {

// A rank's place in the plan: node-major, slot = node * per_node + local rank (not SLURM_PROCID,
// which depends on srun's distribution).
inline int slot_of(int node, int local, int per_node) { return node * per_node + local; }

enum class CommKind { All, Rail, Pair };
const char* to_string(CommKind k);  // "all", "rail", "pair"

struct Comm {
    CommKind kind = CommKind::All;
    int index = 0;           // the rail (the local rank of its GPUs), or the pair's first node
    std::vector<int> slots;  // its ranks, in communicator-rank order
    std::vector<int> nodes;  // the node indexes it spans
};

// In the order every rank creates them: the whole job; then each rail (the k-th GPU of every node:
// each NIC rail alone, as nccl-tests' NCCL_TESTS_SPLIT "MOD <gpus>" does), all at once; then, with
// three nodes or more, each node paired with the next (the last with the first), so every node is
// in two pairs and a slow node is the one common to two slow pairs. Pairs run in rounds in which no
// node is in two pairs (even pairs, odd pairs, and for an odd count the closing pair alone).
std::vector<Comm> plan_comms(int nodes, int per_node);
// The round a pair runs in.
int pair_round(int pair, int nodes);

// 8 MiB, 16 MiB, ... doubling up to `max_bytes` (nccl-tests -b 8M -e 8G -f 2); a single smaller
// power of two (at least 1 MiB) when 8 MiB does not fit; empty below 1 MiB.
std::vector<std::uint64_t> sweep_sizes(std::uint64_t max_bytes);
inline constexpr std::uint64_t kSweepStartBytes = std::uint64_t(8) << 20;
inline constexpr std::uint64_t kDefaultMaxBytes = std::uint64_t(8) << 30;
// Timed passes per size: 20 up to 64 MiB, 5 above (the in-box all-reduce's counts).
int passes_for(std::uint64_t bytes);

// What the NIC side of a rank's node looks like (host.fabric), and what could make NCCL fall back.
struct RankFabric {
    int rdma_nics = 0;                      // RDMA devices with an active port
    std::optional<double> nic_gbitps;       // the slowest of their rates
    std::string rail_nic;                   // the NIC nearest this rank's GPU ("" when unknown)
    std::optional<double> rail_nic_gbitps;  // its port's rate
    std::vector<std::string> hints;         // "no verbs device in /dev/infiniband", "NCCL_IB_DISABLE=1 is set"...
};

struct SizeResult {
    std::uint64_t bytes = 0;
    int passes = 0;
    double ms_per_pass = 0;  // this rank's event time over the timed passes, divided by their number
    std::uint64_t checked = 0, wrong = 0;
};

struct CommResult {
    CommKind kind = CommKind::All;
    int index = 0;
    std::string error;  // set: this rank could not take part (NCCL's words)
    std::vector<SizeResult> sizes;
};

// One rank's report to the launcher.
struct RankReport {
    std::string node;
    int node_index = 0, nodes = 1, local_rank = 0, per_node = 1;
    int cuda_ordinal = -1;
    std::string gpu_name, gpu_bus_id;
    std::string nccl_path, nccl_version;
    std::optional<std::string> nccl_net;  // what gpuvet set NCCL_NET to (RDMA asked for explicitly)
    RankFabric fabric;
    std::string log_file;  // its NCCL_DEBUG_FILE
    NcclLog log;
    std::vector<CommResult> comms;
    std::optional<fabric_rdma::RdmaLink> rdma;  // the RDMA write from its rail's NIC to the next node's
    std::string error;                          // set: it measured nothing (no GPU, no NCCL, no rendezvous)
};

inline constexpr const char* kRankSchema = "gpuvet.fabric_rank/1";
nlohmann::ordered_json to_json(const RankReport& r);
// Throws an input error naming what is missing or malformed.
RankReport rank_report_from_json(const nlohmann::json& j);

// The whole job's sweep, for the report's table.
struct SweepRow {
    std::uint64_t bytes = 0;
    double busbw_gbps = 0, algbw_gbps = 0;
    std::uint64_t checked = 0, wrong = 0;
};

// What the launcher makes of the ranks' reports.
struct Collected {
    FabricRun run;                   // the judge's input
    std::vector<SweepRow> sweep;     // the whole job, every size every rank measured
    std::vector<std::string> notes;  // communicators that could not run, ranks that did not report
};
// `nodes`: the step's node names in node-index order; `per_node`: ranks per node.
Collected collect_ranks(const std::vector<RankReport>& reports, const std::vector<std::string>& nodes, int per_node);

}  // namespace gpuvet::fabric_allreduce
