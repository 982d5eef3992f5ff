// The RDMA write bandwidth per NIC (the ib_write_bw class) between the nodes of an all-reduce run:
// the k-th rank of every node writes from its rail's NIC to the same rail of the next node (a ring,
// so every NIC writes once and is written to once), and each link's figure is held against the
// ports' data rate. Pure: the queue-pair details the ranks hand each other through the rendezvous
// board, a link's record in a rank's report, and the judge. The measuring side is fabric_rdma_run.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.hpp"

namespace gpuvet::fabric_rdma {

// One end of a link, as its rank puts it on the board for the other end.
struct QpInfo {
    std::string node, nic;           // "gpu-node-07", "mlx5_3"
    std::uint16_t lid = 0;           // InfiniBand: the port's LID
    std::string gid_hex;             // RoCE: the GID (32 hex digits); empty on InfiniBand
    std::uint32_t qpn = 0, psn = 0;  // the queue pair and its first packet sequence number
    std::uint32_t rkey = 0;          // the receiving end: its buffer's key, address and size
    std::uint64_t addr = 0, bytes = 0;
    std::optional<double> rate_gbitps;  // the port's rate as sysfs gives it
    std::string speed;                  // its speed name ("NDR"), for the encoding
    std::string skipped;                // set: this end takes no part, and why
};
// A line of key=value fields; parse_qp_info returns nullopt for anything malformed (a peer's
// words are input like any other).
std::string to_text(const QpInfo& q);
std::optional<QpInfo> parse_qp_info(std::string_view text);

// One link: an RC queue pair writing large messages from `from` to `to`.
struct RdmaLink {
    int rail = 0;
    std::string from_node, from_nic, to_node, to_nic;
    std::optional<double> from_gbitps, to_gbitps;  // the ports' rates (sysfs)
    std::string from_speed, to_speed;
    std::string memory;      // "GPU" or "host": what the writer wrote from and the reader received in
    std::string memory_why;  // why that memory
    std::uint64_t message_bytes = 0, bytes_written = 0;
    double seconds = 0;
    std::optional<double> gbps;  // bytes_written / seconds / 1e9
    std::uint64_t verified_bytes = 0, wrong_bytes = 0;
    std::string error;    // set: the link could not be measured (a finding)
    std::string skipped;  // set: not measured, and why (no libibverbs, no RDMA NIC: a reason)
};
nlohmann::ordered_json to_json(const RdmaLink& l);
// Throws an input error naming what is missing or malformed.
RdmaLink rdma_link_from_json(const nlohmann::json& j);

// The data rate of a port from the rate the kernel reports (lanes x signalling rate): SDR, DDR and
// QDR signal with 8b/10b (0.8 of it is data), FDR with 64b/66b; EDR and faster (and Ethernet) report
// the data rate itself (InfiniBand Architecture Specification Vol. 2, release 1.4, §5.2-5.3 and
// §6.3; the kernel's ib_rate_to_mbps, drivers/infiniband/core/verbs.c).
double data_rate_gbitps(double rate_gbitps, const std::string& speed);

// PASS from 90% of the ports' data rate: Azure's node health checks pass ib_write_bw at 180 of 200
// Gbit/s on HDR (and 380 of 400 on NDR), research notes fleet-slurm.md §3.
inline constexpr double kPassFraction = 0.90;
inline constexpr const char* kPassSource =
    "Azure HPC node health checks: ib_write_bw passes above 180 Gbit/s on a 200G HDR port (90%)";

struct Judged {
    Verdict verdict = Verdict::Skip;  // Skip: no link was measured or tried
    std::vector<Measurement> measurements;
    std::vector<Finding> findings;
    std::vector<std::pair<std::string, std::string>> blamed;  // node, finding text
    std::vector<std::string> notes;                           // links not measured, and why
};
Judged judge_links(const std::vector<RdmaLink>& links);

}  // namespace gpuvet::fabric_rdma
