#include "gpu/allreduce_plan.hpp"

namespace gpuvet::allreduce {

std::vector<std::uint64_t> sizes(Tier tier, std::uint64_t max_bytes) {
    std::uint64_t top = tier == Tier::Quick ? (256ull << 20) : tier == Tier::Full ? (4ull << 30) : (1ull << 30);
    std::vector<std::uint64_t> v;
    for (std::uint64_t s = 1ull << 20; s <= top && s <= max_bytes; s *= 4) v.push_back(s);
    return v;
}

std::optional<Floor> floor_for(const std::string& key, int ranks, bool nvlink) {
    if (!nvlink || ranks < 2) return std::nullopt;
    struct Row {
        const char* prefix;
        double gbps;
        const char* source;
    };
    static const Row rows[] = {
        {"h100-sxm5", 460, "Azure azurehpc-health-checks, 8xH100 all-reduce"},
        {"h200-sxm", 431, "Azure azurehpc-health-checks, 8xH200 all-reduce"},
        {"a100-sxm4", 228, "Azure azurehpc-health-checks, 8xA100 all-reduce"},
        {"b200", 600, "AWS p6-b200 NVLink-only all-reduce floor"},
    };
    for (const auto& r : rows) {
        if (key.rfind(r.prefix, 0) != 0) continue;
        if (ranks >= 8) return Floor{r.gbps, r.source};
        return Floor{r.gbps * 0.76,
                     std::string(r.source) + ", x0.76 for " + std::to_string(ranks) +
                         " GPUs (ring instead of NVLS: 8xH200 ring 368 vs NVLS 482 GB/s, ml-engineering)"};
    }
    return std::nullopt;
}

std::string algorithm_label(const char* env) {
    if (env && *env) return std::string("NCCL_ALGO=") + env;
    return "NCCL default (ring/tree/NVLS chosen by NCCL)";
}

}  // namespace gpuvet::allreduce
