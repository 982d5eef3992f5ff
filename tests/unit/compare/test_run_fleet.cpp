// The fleet of runs: the median node, each node's gap to it and the stragglers.
#include <gtest/gtest.h>

#include "compare/run_compare.hpp"
#include "compare/run_fleet.hpp"
#include "core/error.hpp"

using namespace gpuvet;

namespace {

RunFleetNode node(const std::string& name, double wall_s, std::string problem = {}) {
    RunFleetNode n;
    n.name = name;
    n.path = name + "/gpuvet-run.json";
    n.wall_s = wall_s;
    n.problem = std::move(problem);
    return n;
}

}  // namespace

TEST(RunFleet, TheMedianIsANodesOwnRunAndOnlyNodesBeyondTheNoiseBandStraggle) {
    RunFleetAnalysis a =
        analyse_run_fleet({node("a", 100), node("b", 102), node("c", 101), node("d", 101 * (1 + kRunSameWithin) + 1)});
    EXPECT_EQ(a.nodes[a.centre].name, "c");  // the lower median of 100, 101, 102, 105.03
    EXPECT_EQ(a.nodes[a.slowest].name, "d");
    EXPECT_EQ(a.stragglers, std::vector<std::string>{"d"});
    EXPECT_FALSE(a.nodes[1].straggler);  // 1 % slower: noise
    EXPECT_NEAR(*a.nodes[3].gap_fraction, kRunSameWithin + 1.0 / 101, 1e-12);
    EXPECT_FALSE(a.any_problem);
}

TEST(RunFleet, ANodeWithAProblemIsNeitherTheMedianNorAStragglerButIsCounted) {
    RunFleetAnalysis a = analyse_run_fleet({node("a", 100), node("b", 1, "its job exited 1"), node("c", 100)});
    EXPECT_TRUE(a.any_problem);
    EXPECT_EQ(a.finished, 2u);
    EXPECT_FALSE(a.nodes[1].gap_fraction.has_value());
    EXPECT_FALSE(a.nodes[1].straggler);
    EXPECT_NE(a.nodes[a.centre].name, "b");
}

TEST(RunFleet, FewerThanTwoFinishedRunsIsAnInputError) {
    EXPECT_THROW(analyse_run_fleet({node("a", 100), node("b", 100, "report unusable")}), Error);
}
