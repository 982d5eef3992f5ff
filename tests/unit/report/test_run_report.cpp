// A run's report written and read back, and two runs compared from their reports.
#include <gtest/gtest.h>

#include <algorithm>

#include <nlohmann/json.hpp>

#include "compare/run_compare.hpp"
#include "core/clock_reasons.hpp"
#include "core/error.hpp"
#include "core/result.hpp"
#include "report/run_json.hpp"
#include "report/run_report_reader.hpp"
#include "support/run_timelines.hpp"

using namespace gpuvet;
using namespace gpuvet::test;

namespace {

// A 100 s run on one GPU held at 1400 MHz by its power cap: F1.
RunResult power_capped_run() {
    RunResult r = judge(timeline(100, 1,
                                 [](int, RunPoint& p) {
                                     p.gpus[0].utilization_percent = 97;
                                     p.gpus[0].power_w = 690;
                                     p.gpus[0].sm_clock_mhz = 1400;
                                     p.gpus[0].clock_event_reasons = clock_reason::kSwPowerCap;
                                 }),
                        1);
    r.command = {"python", "train.py"};
    r.tag = "box-a";
    r.wall_s = 100;
    r.end = JobEnd{false, 0, 100};
    return r;
}

std::string report_of(const RunResult& r) {
    Envelope env;
    env.command = "run";
    return render_run_json(env, r);
}

}  // namespace

TEST(RunReport, ReadingBackKeepsTheTagTheDiagnosisAndTheFigures) {
    RunResult back = read_run_report(report_of(power_capped_run()), "a.json");
    EXPECT_EQ(back.tag, "box-a");
    EXPECT_DOUBLE_EQ(back.wall_s, 100);
    ASSERT_TRUE(back.diagnosis.primary);
    EXPECT_EQ(back.diagnosis.primary->id, "F1");
    ASSERT_EQ(back.gpus.size(), 1u);
    EXPECT_NEAR(back.gpus[0].sm_clock_mhz.mean, 1400, 1e-9);
}

TEST(RunReport, TheTimelineReadsBackAsOneSeriesPerSignalAndGpu) {
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

TEST(RunReport, AnotherCommandsReportOrTextThatIsNotJsonIsRefused) {
    EXPECT_THROW(read_run_report("{\"command\": \"check\"}", "x.json"), Error);
    EXPECT_THROW(read_run_report("not json", "x.json"), Error);
}

TEST(RunReport, AReportWithoutAReadableSchemaVersionIsRefusedWithTheVersionsThisBuildReads) {
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

TEST(RunCompare, TheFasterRunIsNamedWithTheRuleThatHeldTheOtherBack) {
    RunResult slow = read_run_report(report_of(power_capped_run()), "a.json");
    RunResult fast = judge(timeline(100, 1,
                                    [](int, RunPoint& p) {
                                        p.gpus[0].utilization_percent = 97;
                                        p.gpus[0].power_w = 600;
                                    }),
                           1);
    fast.command = slow.command;
    fast.wall_s = 80;
    fast.end = JobEnd{false, 0, 80};
    RunComparison c = compare_runs(slow, fast, "box-a", "box-b");
    ASSERT_TRUE(c.faster);
    EXPECT_EQ(*c.faster, 1);
    EXPECT_NEAR(c.speedup, 1.25, 1e-9);
    ASSERT_FALSE(c.reasons.empty());
    EXPECT_NE(c.reasons[0].find("F1"), std::string::npos) << c.reasons[0];
    EXPECT_NE(c.reasons[0].find("box-a"), std::string::npos);
}
