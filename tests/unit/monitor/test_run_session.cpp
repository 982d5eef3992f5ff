// The facts a run reads once per GPU before its rules judge.
#include <gtest/gtest.h>

#include "monitor/run_session.hpp"

using namespace gpuvet;

TEST(RunSession, NoNvlinkIsTheFactsFlagNotTheWordingOfItsReason) {
    MonitoredGpu g;
    g.facts.nvlink_absent_reason = "the driver reports no links on this board";  // any wording
    g.facts.nvlink_none = true;
    EXPECT_EQ(run_gpu_facts(g, nullptr).nvlink_active.value, 0);  // D1 may judge a PCIe-only box
    g.facts.nvlink_none = false;
    g.facts.nvlink_absent_reason = "this GPU has no NVLink";  // the words alone decide nothing
    Fact<int> unknown = run_gpu_facts(g, nullptr).nvlink_active;
    EXPECT_FALSE(unknown.has_value());
    EXPECT_EQ(unknown.absent_reason, "this GPU has no NVLink");  // carried to the report, not decided on
    g.facts.nvlink_absent_reason.clear();                        // links read: counted
    g.facts.nvlinks.resize(2);
    g.facts.nvlinks[0].active = true;
    EXPECT_EQ(run_gpu_facts(g, nullptr).nvlink_active.value, 1);
}
