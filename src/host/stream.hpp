// STREAM-style host memory bandwidth (McCalpin's copy, scale, add, triad), multi-threaded and
// NUMA-aware: threads are spread over the nodes and each first-touches the part of the arrays it
// works on, so pages live on the node that uses them.
#pragma once
#include <atomic>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace gpuvet {

struct StreamPlan {
    std::size_t elements = 0;      // doubles per array (three arrays)
    std::vector<int> thread_cpus;  // one thread per entry, pinned there
    int repeats = 5;               // best of N, as STREAM reports
};

struct StreamResult {
    double copy_gbps = 0, scale_gbps = 0, add_gbps = 0, triad_gbps = 0;  // decimal GB/s, best run
    bool verified = false;
    std::string verify_error;  // set when results were wrong
    int threads = 0;
    std::size_t array_bytes = 0;
};

// Array size: at least 4x the last-level cache and 256 MiB per array (STREAM's rule: each array
// well beyond all caches), bounded so the three arrays use at most half of the available memory.
// nullopt when even the minimum does not fit; `why` then says so.
std::optional<std::size_t> stream_array_bytes(std::optional<std::size_t> llc_bytes,
                                              std::optional<std::size_t> available_bytes, std::string& why);

// Threads: one per usable CPU, ordered so consecutive threads go to different NUMA nodes.
std::vector<int> spread_over_nodes(const std::vector<std::vector<int>>& node_cpus, const std::vector<int>& allowed,
                                   int max_threads);

StreamResult run_stream(const StreamPlan& plan, const std::atomic<bool>* stop);

}  // namespace gpuvet
