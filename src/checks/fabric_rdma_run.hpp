// The measuring side of the RDMA write bandwidth (fabric_rdma.hpp): one rank of the all-reduce
// step, on its rail's NIC, through libibverbs loaded at run time. The rank writes to the same rail
// of the next node and is written to by the previous one (each an RC queue pair), the queue pairs'
// details handed over on the launcher's rendezvous board. It writes large messages from GPU memory
// where GPUDirect RDMA is there (through nvidia-peermem, else through DMA-BUF), else from host
// memory, and says which and why.
#pragma once
#include <atomic>
#include <filesystem>
#include <string>

#include "checks/fabric_rdma.hpp"

namespace gpuvet {
class GpuSession;
}

namespace gpuvet::fabric_rdma {

struct RunSettings {
    std::string node;  // this rank's node
    int node_index = 0, nodes = 2, rail = 0;
    std::string gpu_bus_id;  // "" when unknown: the node's rail-th GPU in PCI order
    std::string board_host, token;
    int board_port = 0;
    std::filesystem::path root = "/";  // host.fabric's sysfs root (GPUVET_ROOT)
    double measure_s = 1.0;            // timed writing, after the warm-up
    double wait_s = 600;               // how long to wait for the other ends on the board
};

inline constexpr std::uint64_t kMessageBytes = std::uint64_t(1) << 20;  // ib_write_bw -s 1M class
inline constexpr std::uint64_t kBufferBytes = std::uint64_t(8) << 20;   // the slots the writes cycle over
inline constexpr int kQueueDepth = 16;                                  // writes in flight

// The link this rank wrote (its error or reason when it could not), after taking the reading end of
// the previous node's link. `gpu`: this rank's GPU, nullptr when it has none. Throws only
// Interrupted when `stop` is set; needs nodes >= 2.
RdmaLink run_links(const RunSettings& s, GpuSession* gpu, const std::atomic<bool>* stop);

// The byte the writer of rail `rail` on node `node` puts at `offset`: the reader checks it.
inline unsigned char fill_byte(int node, int rail, std::uint64_t offset) {
    return static_cast<unsigned char>(
        (offset * 131 + offset / 4096 + std::uint64_t(node) * 13 + std::uint64_t(rail) * 7) & 0xff);
}

}  // namespace gpuvet::fabric_rdma
