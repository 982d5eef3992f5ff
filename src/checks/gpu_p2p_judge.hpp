// The verdict of gpu.p2p as a pure function of what was measured: per directed pair, whether peer
// access was supported and enabled, the copy rates, the small-copy latency and the words the
// verification found wrong, with the rate expected of the pair's path. No GPU, no I/O.
// Rules (docs/checks.md, gpu.p2p):
//   wrong data copied, peer access supported but not enabled           -> FAIL
//   no peer access between NVLink-joined GPUs                          -> FAIL
//   no peer access between PCIe-only GPUs (staged through the host)    -> WARN
//   slowest enabled pair, one way or both ways: NVLink below 75% WARN, below 50% FAIL;
//   PCIe below 40% WARN
//   a stop before the end with nothing found                           -> SKIP (no verdict)
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

struct GpuInfo;
struct GpuSpec;

// The rate a pair's path should carry per direction, with where that figure comes from.
struct P2pExpectation {
    std::optional<double> gbps;  // absent when neither NVLink nor PCIe rate is known
    std::string source;
};

// One direction a -> b of a pair of GPUs.
struct P2pPairFigures {
    bool can_access = false, enabled = false;  // cuDeviceCanAccessPeer, cuCtxEnablePeerAccess
    std::string enable_error;                  // when supported but not enabled
    std::string path;                          // topology label ("NV18", "PXB", "?")
    int nvlinks = 0;                           // links joining the pair, 0 over PCIe
    // Absent until measured: a stop can leave any of them unmeasured (bidir: the (lower, higher)
    // entry only).
    std::optional<double> uni_gbps, latency_us, bidir_gbps;
    std::uint64_t wrong_words = 0;  // words the verification found wrong, both phases
    P2pExpectation expected;        // per direction
};

using P2pPairs = std::map<std::pair<int, int>, P2pPairFigures>;

struct P2pMeasured {
    std::vector<int> gpus;  // GPU indices, in the order the matrices list them
    P2pPairs pairs;         // every directed pair of `gpus`
    std::size_t buffer_bytes = 0;
    bool interrupted = false;  // a stop ended the measurement before every pair was measured
    double duration_s = 0;
};

// What a pair's path should carry per direction: NVLink pairs half the SKU's total NVLink rate
// scaled to the pair's share of the links (the slower GPU's), PCIe pairs the slower GPU's link at
// its maximum generation and width. Any argument may be null (unknown).
P2pExpectation p2p_expectation(const std::string& path, const GpuSpec* a, const GpuSpec* b, const GpuInfo* ia,
                               const GpuInfo* ib);

// The result of gpu.p2p (key and title left to the caller): verdict, summary, measurements,
// findings and the matrices in details.
CheckResult judge_p2p(const P2pMeasured& in);

}  // namespace gpuvet
