// Two recorded runs of one box compared: replaced GPUs, another driver, figures that moved.
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "history/diff.hpp"
#include "history/drift_input.hpp"
#include "history/queries.hpp"
#include "history/schema.hpp"
#include "history/store.hpp"
#include "host/persistent_ids.hpp"
#include "support/history_fixtures.hpp"

namespace gpuvet {
namespace {

using namespace history;
using test::at_day;
using test::box_report;
using test::BoxSpec;
using test::count;
using test::integrity;
using test::record;
using test::TempDb;

TEST(HistoryDiff, NamesReplacedGpusAnotherDriverAndMovedFigures) {
    TempDb t;
    Store st(t.file, true);
    record(st, BoxSpec{});
    BoxSpec now = at_day(BoxSpec{}, 2);
    now.serials[1] = "1658888888888";
    now.copy_gbps = 2700;
    Report r = box_report(now);
    r.machine.driver.driver_version = "580.65.06";
    st.record(record_of(r), "recorded");
    auto runs = runs_of_box(st.db(), *find_box(st.db(), "node-a"));
    ASSERT_EQ(runs.size(), 2u);
    RunDiff d = diff_runs(snapshot(st.db(), runs[0].id), snapshot(st.db(), runs[1].id),
                          [](const std::string&, const std::string&) { return std::vector<double>{}; });
    ASSERT_EQ(d.hardware.size(), 2u);
    EXPECT_NE(d.hardware[0].find("replaced in slot 00000000:11:00.0: serial 1650000000002"), std::string::npos)
        << d.hardware[0];
    EXPECT_EQ(d.hardware[1], "driver: 570.86.15 -> 580.65.06");
    ASSERT_EQ(d.figures.size(), 1u);  // GPU 0's bandwidth; GPU 1 is another card
    EXPECT_EQ(d.figures[0].metric, "gpu.memory_bandwidth.copy_gbps");
    EXPECT_NEAR(d.figures[0].change_percent, -10, 1e-9);
    EXPECT_TRUE(d.figures[0].worse);
}

}  // namespace
}  // namespace gpuvet
