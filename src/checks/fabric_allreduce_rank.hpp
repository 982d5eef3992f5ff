// One rank of the multi-node all-reduce: the process srun starts for one GPU of one node. It reads
// its node's fabric (host.fabric), asks NCCL for RDMA explicitly where there are RDMA NICs
// (NCCL_NET=IB, so a broken RDMA setup fails to initialise instead of running over TCP), has NCCL
// log to a file of its own (NCCL_DEBUG=INFO), gets the communicators' ids from the launcher's
// rendezvous board (rank 0 puts them there), runs every communicator of the plan it belongs to
// (fabric_allreduce_plan.hpp), checks every result against the exact sums and reports its times.
#pragma once
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <string>

#include "checks/fabric_allreduce_plan.hpp"
#include "host/rank_place.hpp"

namespace gpuvet::fabric_allreduce {

struct RankSettings {
    RankPlace place;                // rank, node index, local rank (srun's environment)
    std::string node;               // SLURMD_NODENAME
    std::string board_host, token;  // the launcher's rendezvous board
    int board_port = 0;
    std::uint64_t max_bytes = kDefaultMaxBytes;
    bool allow_fallback = false;       // leave NCCL_NET alone: see what NCCL does by itself
    bool rdma_write = true;            // the RDMA write per NIC after the all-reduce (two nodes or more)
    std::filesystem::path root = "/";  // host.fabric's sysfs root (GPUVET_ROOT)
    std::string log_dir;               // where NCCL_DEBUG_FILE goes (TMPDIR or /tmp)
    std::string job_tag;               // job and step ids, for the log file's name
    double rendezvous_s = 600;         // how long to wait for the ids (other nodes may start late)
};

// Never throws for a measurement problem: what went wrong is in the report (error, or a
// communicator's error); throws only Interrupted when `stop` is set.
RankReport run_rank(const RankSettings& s, const std::atomic<bool>* stop);

// The fill pattern of the rank in `slot`, and the exact sum over a communicator's slots: small
// integers, so every float sum is exact, and a rank's missing contribution changes each element.
inline float rank_pattern(int slot, std::uint64_t i) { return float(1 + slot % 7) + float(i % 5); }
float expected_sum(const std::vector<int>& slots, std::uint64_t i);

}  // namespace gpuvet::fabric_allreduce
