// A report read once: its kind, its checks and the Slurm context it was made under.
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "core/report_reader.hpp"
#include "core/slurm_context.hpp"
#include "report/json.hpp"
#include "report/slurm_json.hpp"
#include "support/result_fixtures.hpp"

using namespace gpuvet;
using namespace gpuvet::test;

namespace {

std::string check_report(const std::optional<SlurmContext>& slurm) {
    Report r;
    r.command = "check";
    r.checks.push_back(result_of("host.cpu", Verdict::Pass, "64 cores"));
    r.finalize();
    return with_slurm_context(render_json(r), slurm);
}

}  // namespace

TEST(ReportReader, OneReadGivesTheKindTheChecksAndTheSlurmNode) {
    SlurmContext s;
    s.job_id = "4242";
    s.node = "gpu-07";
    s.step_gpus = "0,1";
    ReportDocument d = read_document(check_report(s), "n7.json");
    EXPECT_EQ(d.kind, "check");
    ASSERT_TRUE(d.report);
    ASSERT_EQ(d.report->checks.size(), 1u);
    EXPECT_EQ(d.report->checks[0].key, "host.cpu");
    ASSERT_TRUE(d.report->slurm);
    EXPECT_EQ(d.report->slurm->job_id, "4242");
    EXPECT_EQ(d.report->slurm->node, "gpu-07");
    EXPECT_FALSE(d.report->slurm->procid.has_value());  // null in the file: absent
}

TEST(ReportReader, AReportMadeOutsideSlurmHasNoSlurmContext) {
    ReportDocument d = read_document(check_report(std::nullopt), "a.json");
    ASSERT_TRUE(d.report);
    EXPECT_FALSE(d.report->slurm);
}

TEST(ReportReader, ASlurmObjectOfTheWrongShapeIsAnErrorNamingTheKey) {
    std::string text = check_report(std::nullopt);
    text.replace(text.find("\"slurm\": null"), 13, "\"slurm\": {\"job_id\": 7}");
    try {
        read_document(text, "bad.json");
        ADD_FAILURE() << "a numeric job_id was read";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("slurm"), std::string::npos) << e.what();
    }
}

TEST(ReportReader, ADocumentWithoutChecksGivesItsKindAndNoReport) {
    ReportDocument d = read_document(R"({"tool": "gpuvet", "schema_version": 3, "command": "plan"})", "p.json");
    EXPECT_EQ(d.kind, "plan");
    EXPECT_FALSE(d.report);
}
