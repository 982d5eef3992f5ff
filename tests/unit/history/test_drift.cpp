// The drift and swap findings, judged against runs recorded in a real history file.
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

TEST(HistoryDrift, OneCardSwappedKeepsTheBoxAndIsFound) {
    TempDb t;
    Store st(t.file, true);
    BoxSpec b;
    b.serials = {"1650000000001", "1650000000002", "1650000000003", "1650000000004"};
    Recorded first = record(st, b);
    BoxSpec swapped = at_day(b, 3);
    swapped.serials[2] = "1657777777777";
    RunRecord now = record_of(box_report(swapped));
    CheckResult r = judge_drift(drift_input(st.db(), now));
    ASSERT_EQ(r.verdict, Verdict::Warn) << r.summary;
    ASSERT_EQ(r.findings.size(), 1u);
    const std::string& text = r.findings[0].text;
    EXPECT_NE(text.find("slot 00000000:12:00.0"), std::string::npos) << text;
    EXPECT_NE(text.find("serial 1650000000003 on 2026-11-01"), std::string::npos) << text;
    EXPECT_NE(text.find("serial 1657777777777"), std::string::npos) << text;
    EXPECT_NE(text.find("replaced"), std::string::npos) << text;
    EXPECT_EQ(st.record(now, "recorded").box, first.box);
}

TEST(HistoryDrift, ADegradingBandwidthSeriesIsDriftAboveTheFloor) {
    TempDb t;
    Store st(t.file, true);
    const double series[] = {3010, 2995, 3004, 2990, 3001};
    for (int i = 0; i < 5; ++i) {
        BoxSpec b = at_day(BoxSpec{}, i + 1);
        b.copy_gbps = series[i];
        record(st, b);
    }
    BoxSpec now = at_day(BoxSpec{}, 10);
    now.copy_gbps = 2740;  // 8.6% below the median, still above the 2345 floor
    CheckResult r = judge_drift(drift_input(st.db(), record_of(box_report(now))));
    ASSERT_EQ(r.verdict, Verdict::Warn);
    ASSERT_EQ(r.findings.size(), 2u);  // both GPUs
    const std::string& text = r.findings[0].text;
    EXPECT_NE(text.find("GPU 0 (serial 1650000000001): gpu.memory_bandwidth.copy_gbps 2740 GB/s is 8.7"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("median of 3001 GB/s over 5 runs (2026-11-01 to 2026-11-05; margin 5%)"), std::string::npos)
        << text;
}

TEST(HistoryDrift, NoiseWithinTheGpusOwnSpreadDoesNotAlarm) {
    TempDb t;
    Store st(t.file, true);
    // A GPU whose own figures scatter by about 4%: a 6% dip is inside 3 robust deviations.
    const double series[] = {3000, 2880, 3120, 2900, 3100, 2950};
    for (int i = 0; i < 6; ++i) {
        BoxSpec b = at_day(BoxSpec{}, i + 1);
        b.copy_gbps = series[i];
        record(st, b);
    }
    BoxSpec now = at_day(BoxSpec{}, 10);
    now.copy_gbps = 2800;
    CheckResult r = judge_drift(drift_input(st.db(), record_of(box_report(now))));
    EXPECT_EQ(r.verdict, Verdict::Pass) << (r.findings.empty() ? r.summary : r.findings[0].text);
    EXPECT_GT(drift_margin({3000, 2880, 3120, 2900, 3100, 2950}), 0.066);
    EXPECT_DOUBLE_EQ(drift_margin({3000, 3000, 3000}), kDriftMargin);
}

TEST(HistoryDrift, TooFewEarlierRunsAreNoDrift) {
    TempDb t;
    Store st(t.file, true);
    record(st, BoxSpec{});
    BoxSpec now = at_day(BoxSpec{}, 2);
    now.copy_gbps = 2500;
    CheckResult r = judge_drift(drift_input(st.db(), record_of(box_report(now))));
    EXPECT_EQ(r.verdict, Verdict::Pass);  // compared, but one earlier run is no baseline
}

TEST(HistoryDrift, ARisingThermalPeakIsNamedWithDates) {
    TempDb t;
    Store st(t.file, true);
    const double peaks[] = {71, 71, 75, 80};
    for (int i = 0; i < 4; ++i) {
        BoxSpec b = at_day(BoxSpec{}, i + 1);
        b.peak_c = peaks[i];
        record(st, b);
    }
    BoxSpec now = at_day(BoxSpec{}, 5);
    now.peak_c = 86;
    CheckResult r = judge_drift(drift_input(st.db(), record_of(box_report(now))));
    ASSERT_EQ(r.verdict, Verdict::Warn);
    const std::string& text = r.findings.at(0).text;
    EXPECT_NE(text.find("peak temperature rose run after run: 75 C on 2026-11-03, 80 C on 2026-11-04, 86 C on "
                        "2026-11-05 (+11 C)"),
              std::string::npos)
        << text;
}

TEST(HistoryDrift, AFlatThermalPeakIsNotRising) {
    TempDb t;
    Store st(t.file, true);
    const double peaks[] = {75, 71, 72};
    for (int i = 0; i < 3; ++i) {
        BoxSpec b = at_day(BoxSpec{}, i + 1);
        b.peak_c = peaks[i];
        record(st, b);
    }
    BoxSpec now = at_day(BoxSpec{}, 5);
    now.peak_c = 73;  // 71, 72, 73: rising, but by 2 C only
    EXPECT_EQ(judge_drift(drift_input(st.db(), record_of(box_report(now)))).verdict, Verdict::Pass);
}

TEST(HistoryDrift, NewRemappedRowsSinceTheLastRunWarn) {
    TempDb t;
    Store st(t.file, true);
    BoxSpec b;
    b.remapped_rows = 2;
    record(st, b);
    BoxSpec now = at_day(b, 4);
    now.remapped_rows = 5;
    CheckResult r = judge_drift(drift_input(st.db(), record_of(box_report(now))));
    ASSERT_EQ(r.verdict, Verdict::Warn);
    EXPECT_NE(
        r.findings.at(0).text.find("gpu.health.remapped_rows_correctable rose from 2 on 2026-11-01 to 5 now (+3)"),
        std::string::npos)
        << r.findings.at(0).text;
}

TEST(HistoryDrift, TheFirstRunHasNothingToCompare) {
    TempDb t;
    Store st(t.file, true);
    CheckResult r = judge_drift(drift_input(st.db(), record_of(box_report(BoxSpec{}))));
    EXPECT_EQ(r.verdict, Verdict::Skip);
    EXPECT_NE(r.summary.find("first reference"), std::string::npos);
}

}  // namespace
}  // namespace gpuvet
