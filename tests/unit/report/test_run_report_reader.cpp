// A run's report written and read back.
#include <gtest/gtest.h>

#include <algorithm>

#include <nlohmann/json.hpp>

#include "compare/run_compare.hpp"
#include "core/clock_reasons.hpp"
#include "core/error.hpp"
#include "core/result.hpp"
#include "report/run_json.hpp"
#include "report/run_report_reader.hpp"
#include "support/run_reports.hpp"
#include "support/run_timelines.hpp"

using namespace gpuvet;
using namespace gpuvet::test;

TEST(RunReportReader, ReadingBackKeepsTheTagTheDiagnosisAndTheFigures) {
    RunResult back = read_run_report(report_of(power_capped_run()), "a.json");
    EXPECT_EQ(back.tag, "box-a");
    EXPECT_DOUBLE_EQ(back.wall_s, 100);
    ASSERT_TRUE(back.diagnosis.primary);
    EXPECT_EQ(back.diagnosis.primary->id, "F1");
    ASSERT_EQ(back.gpus.size(), 1u);
    EXPECT_NEAR(back.gpus[0].sm_clock_mhz.mean, 1400, 1e-9);
}

TEST(RunReportReader, TheTimelineReadsBackAsOneSeriesPerSignalAndGpu) {
    RunResult run = power_capped_run();
    std::string text = report_of(run);
    EXPECT_NE(text.find("\"series\""), std::string::npos);
    RunReportDoc doc = read_run_report_doc(text, "a.json");
    EXPECT_EQ(doc.run.tag, "box-a");
    EXPECT_EQ(doc.series.size(), run_series(run).size());
    auto util = std::find_if(doc.series.begin(), doc.series.end(),
                             [](const TimeSeries& s) { return s.key == "utilization_percent"; });
    ASSERT_NE(util, doc.series.end());
    ASSERT_TRUE(util->gpu);
    EXPECT_EQ(util->t_s.size(), util->values.size());
    EXPECT_EQ(util->t_s.size(), run.timeline.size());
}

TEST(RunReportReader, AnotherCommandsReportOrTextThatIsNotJsonIsRefused) {
    EXPECT_THROW(read_run_report("{\"command\": \"check\"}", "x.json"), Error);
    EXPECT_THROW(read_run_report("not json", "x.json"), Error);
}

TEST(RunReportReader, AReportWithoutAReadableSchemaVersionIsRefusedWithTheVersionsThisBuildReads) {
    Json j = Json::parse(report_of(power_capped_run()));
    j["schema_version"] = kSchemaVersion + 1;
    try {
        read_run_report(j.dump(), "new.json");
        ADD_FAILURE() << "a newer schema was read";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("schema_version " + std::to_string(kSchemaVersion + 1)), std::string::npos)
            << e.what();
        EXPECT_NE(e.advice().find("newer"), std::string::npos) << e.advice();
    }
    j.erase("schema_version");
    EXPECT_THROW(read_run_report(j.dump(), "old.json"), Error);
    j["schema_version"] = kSchemaVersion;
    EXPECT_NO_THROW(read_run_report(j.dump(), "same.json"));
}
