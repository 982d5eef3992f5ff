// gpu.allreduce's judge: the bandwidth and verification of each message size, as measured, turned
// into the result: bus bandwidth at the largest size against the SKU's floor, FAIL for any wrong
// sum whatever the speed, no verdict on speed when a stop came first. No GPU, no I/O.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/result.hpp"

namespace gpuvet {

struct GpuSpec;

namespace allreduce {

// One message size, timed and verified.
struct SizeOutcome {
    std::uint64_t bytes = 0;
    double algbw_gbps = 0, busbw_gbps = 0;
    std::uint64_t checked = 0;  // result elements compared with the expected sums, all ranks
    std::uint64_t wrong = 0;
};

struct AllReduceRun {
    int ranks = 0;
    bool all_nvlink = false;         // every GPU has an active NVLink
    std::uint64_t max_bytes = 0;     // the largest size planned: its figures carry the verdict
    std::vector<SizeOutcome> sizes;  // in the order measured, smallest first
    bool interrupted = false;        // a stop came before the largest size was measured
    std::string algorithm;           // allreduce::algorithm_label
    std::string nccl_path, nccl_version;
    std::string library = "NCCL";  // "RCCL" on AMD GPUs
    std::string unjudged_reason;   // set: no floor applies, and this says why (AMD's xGMI boards)
};

// "256 MiB", "1 GiB".
std::string size_text(std::uint64_t bytes);

// Below the floor FAIL, within 5% above it WARN; no floor (no spec, PCIe): no verdict on speed.
CheckResult judge_allreduce(const AllReduceRun& run, const GpuSpec* spec);

}  // namespace allreduce
}  // namespace gpuvet
