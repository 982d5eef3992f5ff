// The all-reduce check's arithmetic, independent of any GPU: message sizes per tier, bus
// bandwidth as nccl-tests defines it, the fill pattern and the floors per SKU.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/context.hpp"

namespace gpuvet::allreduce {

// 1 MiB, 4 MiB, ... x4 up to 256 MiB (quick), 1 GiB (standard) or 4 GiB (full), bounded by
// `max_bytes` (two buffers per GPU must fit).
std::vector<std::uint64_t> sizes(Tier tier, std::uint64_t max_bytes);

// nccl-tests: busbw = algbw * 2(n-1)/n for all-reduce.
inline double bus_bandwidth(double algbw_gbps, int ranks) { return algbw_gbps * 2.0 * (ranks - 1) / ranks; }

// Rank r's float element i before the sum: small integers, so every sum is exact in float.
inline float pattern(int rank, std::uint64_t i) { return float(rank + 1) + float(i % 7); }
inline float expected_sum(int ranks, std::uint64_t i) {
    return float(ranks * (ranks + 1) / 2) + float(ranks) * float(i % 7);
}

struct Floor {
    double busbw_gbps;
    std::string source;
};
// The busbw floor for `ranks` GPUs of SKU `spec_key` linked by NVLink; nullopt when no published
// floor applies. Rule: floors are for 8 GPUs on an NVSwitch board; with 2-7 GPUs NCCL cannot use
// NVLS, so the floor is scaled by the ring/NVLS ratio 0.76 (8xH200 ring 368 vs NVLS 482 GB/s).
std::optional<Floor> floor_for(const std::string& spec_key, int ranks, bool nvlink);

// "NCCL_ALGO=Ring" when the variable is set, else the default label.
std::string algorithm_label(const char* nccl_algo_env);

}  // namespace gpuvet::allreduce
