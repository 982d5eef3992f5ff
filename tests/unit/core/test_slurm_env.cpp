// The Slurm GPU variables a task reads from its environment.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "compare/fleet_analysis.hpp"
#include "core/slurm_env.hpp"
#include "fleet/drain.hpp"

namespace gpuvet {
namespace {

TEST(SlurmEnv, GpusGivenButNoCudaVisibleDevicesIsAProblem) {
    auto env = [](std::map<std::string, std::string> m) {
        return [m](const char* k) -> std::optional<std::string> {
            auto it = m.find(k);
            if (it == m.end()) return std::nullopt;
            return it->second;
        };
    };
    EXPECT_FALSE(slurm_context(env({})));
    auto s = slurm_context(env({{"SLURM_JOB_ID", "7"}, {"SLURM_GPUS_ON_NODE", "2"}, {"SLURMD_NODENAME", "n5"}}));
    ASSERT_TRUE(s);
    auto p = slurm_gpu_problem(*s);
    ASSERT_TRUE(p);
    EXPECT_NE(p->find("SLURM_GPUS_ON_NODE=2"), std::string::npos);
    EXPECT_NE(p->find("CUDA_VISIBLE_DEVICES is unset on node n5"), std::string::npos);
    s->cuda_visible_devices = "0,1";
    EXPECT_FALSE(slurm_gpu_problem(*s));
    auto none = slurm_context(env({{"SLURM_JOB_ID", "7"}}));
    EXPECT_FALSE(slurm_gpu_problem(*none));  // no GPUs asked for
}

TEST(SlurmEnv, AReportOfOneOfSeveralTasksGoesIntoItsNodesFolder) {
    auto env = [](std::map<std::string, std::string> m) {
        return [m](const char* k) -> std::optional<std::string> {
            auto it = m.find(k);
            if (it == m.end()) return std::nullopt;
            return it->second;
        };
    };
    EXPECT_FALSE(slurm_report_subfolder(env({})));
    EXPECT_FALSE(slurm_report_subfolder(env({{"SLURMD_NODENAME", "n1"}, {"SLURM_STEP_NUM_TASKS", "1"}})));
    EXPECT_EQ(slurm_report_subfolder(
                  env({{"SLURMD_NODENAME", "gpu07"}, {"SLURM_STEP_NUM_TASKS", "4"}, {"SLURM_STEP_NUM_NODES", "4"}})),
              "gpu07");
    EXPECT_EQ(slurm_report_subfolder(env({{"SLURMD_NODENAME", "n/1"},
                                          {"SLURM_STEP_NUM_TASKS", "16"},
                                          {"SLURM_STEP_NUM_NODES", "2"},
                                          {"SLURM_LOCALID", "3"}})),
              "n_1-3");
}

}  // namespace
}  // namespace gpuvet
