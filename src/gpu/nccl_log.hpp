// What NCCL's own log (NCCL_DEBUG=INFO, NCCL_DEBUG_SUBSYS=INIT,NET, one NCCL_DEBUG_FILE per rank)
// says about the network it chose: the plugin ("Using network IB" or "Socket"), the NICs it opened,
// GPUDirect RDMA switched off per HCA, and the transport of every channel. The lines are NCCL's
// (src/transport/net_ib, src/transport.cc, src/init.cc); a reading, not a judgement.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpuvet {

struct NcclNic {
    std::string name;  // "mlx5_0"
    int port = 0;      // 1
    std::string link;  // "IB", "RoCE"
};

// One "Channel 00/0 : 0[0] -> 8[0] [send] via NET/IB/0/GDRDMA" line.
struct NcclChannel {
    int channel = 0;
    int from_rank = 0, to_rank = 0;
    std::string direction;  // "send", "receive"; empty for intra-node lines
    std::string via;        // "NET/IB/0/GDRDMA", "P2P/IPC", "NET/Socket/0"
    bool network() const { return via.rfind("NET/", 0) == 0; }
    bool socket() const { return via.rfind("NET/Socket", 0) == 0; }
    bool gdr() const { return via.find("/GDRDMA") != std::string::npos; }
};

struct NcclLog {
    std::optional<std::string> network;     // "IB", "Socket", as "Using network X" names it
    std::vector<NcclNic> nics;              // "NET/IB : Using [0]mlx5_0:1/IB ..."
    bool ib_no_device = false;              // "NET/IB : No device found."
    std::vector<std::string> gdr_disabled;  // HCAs of "GPU Direct RDMA Disabled for HCA n 'mlx5_0'"
    bool no_net_plugin = false;             // "Failed to initialize any NET plugin"
    std::vector<NcclChannel> channels;
    std::vector<std::string> warnings;  // the text after "NCCL WARN"
};

// Reads a whole log; lines it does not know are ignored. Bounded: at most 100000 lines are read.
NcclLog parse_nccl_log(std::string_view text);

}  // namespace gpuvet
