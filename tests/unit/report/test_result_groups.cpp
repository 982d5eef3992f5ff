// report/result_groups: what every printer shows once. GPUs that gave the same result (each one's
// mention of itself aside) are one group; a finding or detail that repeats the summary is left out;
// and the faulty 8-GPU scorecard, terminal, Markdown and ticket text say nothing twice.
#include "report/result_groups.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <sstream>

#include "report/markdown.hpp"
#include "core/report_reader.hpp"
#include "report/terminal.hpp"

using namespace gpuvet;

namespace {

std::string claim(int gpu) {
    std::string s = "GPU ";
    s += std::to_string(gpu);
    s += " claims to be an H100 but reports 1 GiB";
    return s;
}

CheckResult identity_fail(int gpu) {
    CheckResult c;
    c.key = "gpu.identity";
    c.verdict = Verdict::Fail;
    c.gpu = gpu;
    c.summary = claim(gpu);
    c.summary += '.';
    c.findings.push_back({Verdict::Fail, claim(gpu)});
    c.details.push_back("seen next to GPU 31 on the same switch");
    Measurement m;
    m.key = "memory_total_gib";
    m.value = 1.0;
    c.measurements.push_back(m);
    return c;
}

std::string fixture(const std::string& name) {
    return std::string(GPUVET_TEST_DIR) + "/fixtures/reports/" + name + ".json";
}

}  // namespace

TEST(ResultGroups, GpusSayingTheSameOfThemselvesAreOneGroup) {
    std::vector<CheckResult> rs = {identity_fail(0), identity_fail(1), identity_fail(3)};
    rs[2].measurements[0].value = 2.0;  // a different figure: a group of its own
    std::vector<const CheckResult*> in;
    for (auto& c : rs) in.push_back(&c);
    auto groups = group_results(in);
    ASSERT_EQ(groups.size(), 2u);
    EXPECT_EQ(groups[0].gpus, (std::vector<int>{0, 1}));
    EXPECT_EQ(groups[0].result.summary, "Each GPU claims to be an H100 but reports 1 GiB.");
    // "GPU 31" is another GPU, not GPU 3's mention of itself.
    EXPECT_EQ(groups[0].result.details[0], "seen next to GPU 31 on the same switch");
    EXPECT_EQ(groups[1].gpus, (std::vector<int>{3}));
    EXPECT_EQ(groups[1].result.summary, rs[2].summary) << "a lone GPU keeps its own words";
    EXPECT_EQ(gpus_label(groups[0].gpus), "GPUs 0, 1");
    EXPECT_EQ(gpus_label({2, 3, 4, 7}), "GPUs 2-4, 7");
    EXPECT_EQ(gpus_label({5}), "GPU 5");
}

TEST(ResultGroups, TheDriversOwnWordsForAGpuGroupToo) {
    std::vector<CheckResult> rs;
    for (int gpu : {0, 1, 2}) {
        CheckResult c;
        c.key = "gpu.burn";
        c.verdict = Verdict::Error;
        c.gpu = gpu;
        c.summary = "CUDA device " + std::to_string(gpu) + ": cuLaunchKernel did not return in 300 s";
        rs.push_back(c);
    }
    std::vector<const CheckResult*> in;
    for (auto& c : rs) in.push_back(&c);
    auto groups = group_results(in);
    ASSERT_EQ(groups.size(), 1u);
    EXPECT_EQ(groups[0].result.summary, "CUDA device of each GPU: cuLaunchKernel did not return in 300 s");
}

TEST(ResultGroups, AMentionOfAnotherGpuKeepsResultsApart) {
    CheckResult a = identity_fail(0), b = identity_fail(1);
    a.details[0] = "slower than GPU 4";
    b.details[0] = "slower than GPU 5";
    EXPECT_FALSE(same_result(a, b));
    b.details[0] = "slower than GPU 4";
    EXPECT_TRUE(same_result(a, b));
}

TEST(ResultGroups, FindingsAndDetailsThatRepeatTheSummaryAreLeftOut) {
    CheckResult c = identity_fail(2);
    c.findings.push_back({Verdict::Warn, "a second, different finding"});
    c.details.push_back("GPU 2 claims to be an H100 but reports 1 GiB");
    auto left = findings_beyond_summary(c);
    ASSERT_EQ(left.size(), 1u);
    EXPECT_EQ(left[0]->text, "a second, different finding");
    EXPECT_TRUE(repeats_summary(c, c.details[1]));
    EXPECT_FALSE(repeats_summary(c, c.details[0]));
    EXPECT_FALSE(repeats_summary(c, ""));
}

std::string collapsed(const std::string& s) {
    std::string out;
    for (char ch : s) {
        bool space = ch == ' ' || ch == '\n';
        if (space && (out.empty() || out.back() == ' ')) continue;
        out += space ? ' ' : ch;
    }
    return out;
}

std::size_t occurrences(const std::string& hay, const std::string& needle) {
    std::size_t n = 0;
    for (auto p = hay.find(needle); p != std::string::npos; p = hay.find(needle, p + 1)) ++n;
    return n;
}

// The faulty 8-GPU box as a person reads it: within a screen and a half, and no finding said twice
// (not as a summary and again as its first bullet), in the terminal and in Markdown.
TEST(ResultGroups, TheFaultyEightGpuBoxSaysNothingTwice) {
    Report r = read_report_file(fixture("faulty-8gpu"));
    const std::string terminal = render_terminal(r, Style{false, 100, false});
    EXPECT_LE(std::count(terminal.begin(), terminal.end(), '\n'), 120) << terminal;
    const std::string markdown = render_markdown(r);
    const std::string flat = collapsed(terminal);
    std::size_t checked = 0;
    for (const CheckResult& c : r.checks) {
        if (c.verdict == Verdict::Pass) continue;
        for (const Finding& f : c.findings) {
            if (f.text.size() < 30) continue;
            ++checked;
            EXPECT_LE(occurrences(flat, collapsed(f.text)), 1u) << "said twice: " << f.text << "\n" << terminal;
            std::string cell;  // Markdown escapes the pipes of a table cell
            for (char ch : f.text) {
                if (ch == '|') cell.push_back('\\');
                cell.push_back(ch);
            }
            EXPECT_LE(occurrences(markdown, cell), 1u) << "said twice: " << f.text << "\n" << markdown;
        }
    }
    EXPECT_GE(checked, 4u) << "the fixture's faults carry findings";
}
