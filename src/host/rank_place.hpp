// Where one process of a multi-node job stands: its rank, the world size, its rank on its node
// and the node's index, as srun hands them to every task of a step (SLURM_PROCID, SLURM_NTASKS,
// SLURM_LOCALID, SLURM_NODEID, SLURM_NNODES; srun(1)), or as explicit options give them.
#pragma once
#include <functional>
#include <optional>
#include <string>

namespace gpuvet {

struct RankPlace {
    int rank = 0, world = 1;  // global
    int local_rank = 0;       // on this node: the GPU it drives
    int node = 0, nodes = 1;  // the node's index, the number of nodes
    std::string source;       // "SLURM_PROCID...", "options"
};

// Explicit values (options) win over the environment, field by field; what neither gives is an
// input error naming the variable and the option. Values are checked against each other
// (rank < world, node < nodes, ...). `env` reads a variable (nullopt when unset).
struct RankOptions {
    std::optional<int> rank, world, local_rank, node, nodes;
};
RankPlace rank_place(const RankOptions& given, const std::function<std::optional<std::string>(const char*)>& env);

}  // namespace gpuvet
