// A rank's place in a multi-node job, from srun's environment or explicit options (host/rank_place).
#include <gtest/gtest.h>

#include <map>

#include "core/error.hpp"
#include "host/rank_place.hpp"

using namespace gpuvet;

namespace {
auto env_of(std::map<std::string, std::string> vars) {
    return [vars](const char* name) -> std::optional<std::string> {
        auto it = vars.find(name);
        if (it == vars.end()) return std::nullopt;
        return it->second;
    };
}
const std::map<std::string, std::string> kStep = {{"SLURM_PROCID", "11"},
                                                  {"SLURM_NTASKS", "16"},
                                                  {"SLURM_LOCALID", "3"},
                                                  {"SLURM_NODEID", "1"},
                                                  {"SLURM_NNODES", "2"}};
}  // namespace

TEST(RankPlace, FromSrunsEnvironment) {
    RankPlace p = rank_place({}, env_of(kStep));
    EXPECT_EQ(p.rank, 11);
    EXPECT_EQ(p.world, 16);
    EXPECT_EQ(p.local_rank, 3);
    EXPECT_EQ(p.node, 1);
    EXPECT_EQ(p.nodes, 2);
    EXPECT_NE(p.source.find("SLURM_PROCID"), std::string::npos);
}

TEST(RankPlace, OptionsWinAndStandAlone) {
    RankOptions o{2, 4, 0, 1, 2};
    RankPlace p = rank_place(o, env_of(kStep));
    EXPECT_EQ(p.rank, 2);
    EXPECT_EQ(p.world, 4);
    EXPECT_EQ(p.source, "options");
    EXPECT_EQ(rank_place(o, env_of({})).node, 1);
}

TEST(RankPlace, MissingOrInconsistentIsAnInputError) {
    try {
        rank_place({}, env_of({}));
        FAIL();
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::Input);
        EXPECT_NE(std::string(e.what()).find("SLURM_PROCID is not set and --rank was not given"), std::string::npos);
    }
    auto bad = kStep;
    bad["SLURM_NTASKS"] = "8x";
    EXPECT_THROW(rank_place({}, env_of(bad)), Error);
    bad = kStep;
    bad["SLURM_PROCID"] = "16";
    EXPECT_THROW(rank_place({}, env_of(bad)), Error);
    bad = kStep;
    bad["SLURM_NODEID"] = "2";
    EXPECT_THROW(rank_place({}, env_of(bad)), Error);
    bad = kStep;
    bad["SLURM_LOCALID"] = "-1";
    EXPECT_THROW(rank_place({}, env_of(bad)), Error);
}
