// The verdict of gpu.h2d_d2h on one GPU as a pure function of what was measured: the pinned copy
// rates alone and with every GPU copying, the words found wrong, and the PCIe link read under
// load (else at idle). No GPU, no I/O. Rules (docs/checks.md, gpu.h2d_d2h):
//   any wrong word                                                      -> FAIL
//   the slower of H2D and D2H below 72% of the link's rate WARN, below 50% FAIL
//   the link below its maximum generation during the copies            -> WARN
//   with all GPUs copying, below 70% of its rate alone (shares an uplink) -> WARN
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/result.hpp"

namespace gpuvet {

// Median rates of one run of the copies (H2D, D2H, both at once) and the words found wrong.
struct HostCopyRates {
    double h2d_gbps = 0, d2h_gbps = 0, bidir_gbps = 0;
    std::uint64_t wrong_words = 0;
};

// The link state NVML reported while the copies ran (idle links drop their generation).
struct PcieLinkReading {
    std::optional<int> gen, width;
    std::string why;  // when either is unknown
};

// One GPU measured alone (and, when that phase completed, with every GPU copying).
struct HostCopyMeasured {
    int gpu = 0;
    HostCopyRates alone;
    std::optional<HostCopyRates> all;  // with every GPU copying at once
    PcieLinkReading under_load;
    std::string link_reader = "NVML";         // the management library that read it
    std::optional<int> idle_gen, idle_width;  // the inventory's reading, before the copies
    std::optional<int> max_gen;               // the most both ends of the link can do
    double duration_s = 0;
};

// Topology labels between GPUs ("PIX", "PXB", "PHB", "SYS"), keyed (lower, higher) index.
using TopologyLabels = std::map<std::pair<int, int>, std::string>;

// What the GPUs measured together share.
struct HostCopyGroup {
    int gpus_measured = 0;  // GPUs measured alone without error: the all-at-once phase ran with them
    std::size_t buffer_bytes = 0;
    std::vector<int> shared;  // the GPUs that slowed down together (gpus_sharing_uplink)
    std::string shared_path;  // what they share (shared_path)
};

// The GPUs whose H2D or D2H rate with all copying fell below kSharedBelow of their rate alone.
std::vector<int> gpus_sharing_uplink(const std::vector<HostCopyMeasured>& gpus);
// What the topology says a group of GPUs that slowed down together shares.
std::string shared_path(const std::vector<int>& group, const TopologyLabels& labels);

// The result of gpu.h2d_d2h for one GPU (key and title left to the caller).
CheckResult judge_host_copies(const HostCopyMeasured& g, const HostCopyGroup& group);

}  // namespace gpuvet
