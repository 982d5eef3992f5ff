#include "host/rank_place.hpp"

#include <charconv>

#include "core/error.hpp"

namespace gpuvet {

namespace {

struct Field {
    const char* variable;
    const char* option;
    const std::optional<int>& given;
    int& out;
    int minimum;
};

int read_field(const Field& f, const std::function<std::optional<std::string>(const char*)>& env, bool& from_env) {
    if (f.given) return *f.given;
    auto text = env(f.variable);
    if (!text)
        throw input_error(std::string(f.variable) + " is not set and " + f.option + " was not given",
                          "run each rank as a task of `srun`, or pass " + std::string(f.option));
    int v = 0;
    auto [p, ec] = std::from_chars(text->data(), text->data() + text->size(), v);
    if (ec != std::errc() || p != text->data() + text->size() || v < f.minimum)
        throw input_error(std::string(f.variable) + "='" + *text + "' is not a count gpuvet can use",
                          "it must be a whole number of at least " + std::to_string(f.minimum));
    from_env = true;
    return v;
}

}  // namespace

RankPlace rank_place(const RankOptions& given, const std::function<std::optional<std::string>(const char*)>& env) {
    RankPlace p;
    bool from_env = false;
    const Field fields[] = {
        {"SLURM_PROCID", "--rank", given.rank, p.rank, 0},
        {"SLURM_NTASKS", "--world", given.world, p.world, 1},
        {"SLURM_LOCALID", "--local-rank", given.local_rank, p.local_rank, 0},
        {"SLURM_NODEID", "--node", given.node, p.node, 0},
        {"SLURM_NNODES", "--nodes", given.nodes, p.nodes, 1},
    };
    for (const Field& f : fields) f.out = read_field(f, env, from_env);
    if (p.rank >= p.world)
        throw input_error("rank " + std::to_string(p.rank) + " is outside a world of " + std::to_string(p.world),
                          "ranks run from 0 to the world size - 1");
    if (p.node >= p.nodes || p.nodes > p.world)
        throw input_error("node " + std::to_string(p.node) + " of " + std::to_string(p.nodes) + " for " +
                              std::to_string(p.world) + " ranks does not add up",
                          "nodes run from 0 to the node count - 1, with at least one rank each");
    if (p.local_rank > p.rank)
        throw input_error(
            "local rank " + std::to_string(p.local_rank) + " is above the global rank " + std::to_string(p.rank),
            "the local rank counts the ranks on this node only");
    p.source = from_env ? "srun's environment (SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID, SLURM_NODEID, SLURM_NNODES)"
                        : "options";
    return p;
}

}  // namespace gpuvet
