// The runner's two stages: checks that read earlier results (Check::reads) run after all others,
// see only what they declared, and their results keep their place in the report.
#include <gtest/gtest.h>

#include "core/check.hpp"
#include "core/context.hpp"
#include "core/error.hpp"
#include "core/runner.hpp"

using namespace gpuvet;

namespace {

std::vector<std::string> g_ran;  // the order the checks ran in

class Probe final : public Check {
public:
    Probe(std::string key, std::vector<std::string> reads, std::string reads_at_run = "")
        : key_(std::move(key)), reads_(std::move(reads)), reads_at_run_(std::move(reads_at_run)) {}
    std::string_view key() const override { return key_; }
    std::string_view title() const override { return key_; }
    std::vector<std::string> reads() const override { return reads_; }
    std::vector<CheckResult> run(CheckContext& ctx) override {
        g_ran.push_back(key_);
        CheckResult r;
        r.verdict = Verdict::Pass;
        r.measurements.push_back(Measurement::number("x", "X", double(g_ran.size()), "count"));
        if (!reads_at_run_.empty()) {
            auto v = ctx.prior.value(reads_at_run_, "x");
            r.summary = v ? "saw " + std::to_string(int(*v)) : "saw nothing";
        }
        return {r};
    }

private:
    std::string key_;
    std::vector<std::string> reads_;
    std::string reads_at_run_;
};

}  // namespace

TEST(RunnerStages, ReadersRunLastButKeepTheirPlace) {
    g_ran.clear();
    Report report;
    CheckContext ctx;
    ctx.report = &report;
    CheckList list;
    list.push_back(std::make_unique<Probe>("a.first", std::vector<std::string>{}));
    list.push_back(std::make_unique<Probe>("a.reader", std::vector<std::string>{"a.last"}, "a.last"));
    list.push_back(std::make_unique<Probe>("a.last", std::vector<std::string>{}));
    run_checks(list, ctx);
    EXPECT_EQ(g_ran, (std::vector<std::string>{"a.first", "a.last", "a.reader"}));
    ASSERT_EQ(report.checks.size(), 3u);
    EXPECT_EQ(report.checks[1].key, "a.reader");   // registry order in the report
    EXPECT_EQ(report.checks[1].summary, "saw 2");  // a.last had run, second
}

TEST(RunnerStages, ReadingAnUndeclaredResultIsAnInternalError) {
    g_ran.clear();
    Report report;
    CheckContext ctx;
    ctx.report = &report;
    CheckList list;
    list.push_back(std::make_unique<Probe>("a.source", std::vector<std::string>{}));
    list.push_back(std::make_unique<Probe>("a.sneaky", std::vector<std::string>{"a.other"}, "a.source"));
    run_checks(list, ctx);
    ASSERT_EQ(report.checks.size(), 2u);
    EXPECT_EQ(report.checks[1].verdict, Verdict::Error);
    EXPECT_NE(report.checks[1].summary.find("without declaring"), std::string::npos) << report.checks[1].summary;
}
