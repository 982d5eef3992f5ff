// Golden outputs of the compact scorecard for reports the driver test doubles produced
// (tests/fixtures/reports/regenerate): 1, 2 and 8 GPUs, healthy and faulty, at 100 and 60 columns.
// Regenerate after an intended change: GPUVET_UPDATE_GOLDEN=1 ./gpuvet_unit_tests --gtest_filter='CompactGolden*'
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "report/markdown.hpp"
#include "core/report_reader.hpp"
#include "report/terminal.hpp"
#include "report/text_layout.hpp"

using namespace gpuvet;

namespace {

std::string fixture(const std::string& name) {
    return std::string(GPUVET_TEST_DIR) + "/fixtures/reports/" + name + ".json";
}

void compare_golden(const std::string& name, const std::string& actual) {
    std::string path = std::string(GPUVET_TEST_DIR) + "/golden/compact/" + name;
    if (std::getenv("GPUVET_UPDATE_GOLDEN")) {
        std::ofstream(path, std::ios::binary) << actual;
        GTEST_SKIP() << "updated " << path;
    }
    std::ifstream in(path, std::ios::binary);
    ASSERT_TRUE(in) << "missing golden file " << path << " (run with GPUVET_UPDATE_GOLDEN=1)";
    std::stringstream ss;
    ss << in.rdbuf();
    EXPECT_EQ(ss.str(), actual) << "golden file " << path << " differs";
}

std::size_t lines(const std::string& s) { return std::size_t(std::count(s.begin(), s.end(), '\n')); }

std::size_t widest_line(const std::string& s) {
    std::size_t w = 0;
    std::istringstream in(s);
    for (std::string l; std::getline(in, l);) w = std::max(w, visible_width(l));
    return w;
}

class CompactGolden : public ::testing::TestWithParam<std::tuple<const char*, int>> {};

TEST_P(CompactGolden, MatchesAndFitsTheWidth) {
    auto [name, width] = GetParam();
    Report r = read_report_file(fixture(name));
    std::string out = render_terminal(r, Style{false, width, false});
    compare_golden(std::string(name) + "-" + std::to_string(width) + ".txt", out);
    // A word longer than a line (a library path, "HW_SLOWDOWN|SW_THERMAL|HW_THERMAL") may run past
    // the edge; the matrix and the wrapped text do not.
    std::istringstream in(out);
    for (std::string l; std::getline(in, l);) {
        std::istringstream words(l);
        std::size_t longest = 0;
        for (std::string w; words >> w;) longest = std::max(longest, visible_width(w));
        if (longest < 24) {
            EXPECT_LE(visible_width(l), std::size_t(width)) << l;
        }
    }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, CompactGolden,
                         ::testing::Combine(::testing::Values("healthy-1gpu", "healthy-2gpu", "faulty-2gpu",
                                                              "healthy-8gpu", "faulty-8gpu", "faulty-8gpu-pcie"),
                                            ::testing::Values(100, 60)),
                         [](const auto& info) {
                             std::string n = std::get<0>(info.param);
                             std::replace(n.begin(), n.end(), '-', '_');
                             return n + "_" + std::to_string(std::get<1>(info.param));
                         });

TEST(CompactScorecard, HealthyEightGpusFitOneScreen) {
    Report r = read_report_file(fixture("healthy-8gpu"));
    std::string compact = render_terminal(r, Style{false, 100, false});
    std::string full = render_terminal(r, Style{false, 100, true});
    EXPECT_LE(lines(compact), 50u) << compact;
    EXPECT_GT(lines(full), 3 * lines(compact));  // --verbose keeps the full view
    EXPECT_NE(compact.find("CHECK          GPU 0   GPU 1"), std::string::npos) << compact;
}

TEST(CompactScorecard, FaultyGpuIsMarkedInItsColumnAndExpanded) {
    Report r = read_report_file(fixture("faulty-8gpu"));
    std::string out = render_terminal(r, Style{false, 100, false});
    // throttling.toml: GPU 1 is hot and clocked down: its health cell fails, the others pass.
    auto row = out.find("\ngpu.health");
    ASSERT_NE(row, std::string::npos) << out;
    std::string line = out.substr(row + 1, out.find('\n', row + 1) - row - 1);
    EXPECT_NE(line.find("✓ 100%  ✗ 91°C  ✓"), std::string::npos) << line;
    EXPECT_NE(out.find("Not passing\nFAIL   gpu.health              1"), std::string::npos) << out;
    EXPECT_EQ(out.find("Uncorrectable ECC errors"), std::string::npos) << "passing figures of a failed result stay out";
}

TEST(CompactScorecard, NarrowTerminalDropsFiguresThenSplitsColumns) {
    Report r = read_report_file(fixture("healthy-8gpu"));
    EXPECT_NE(render_terminal(r, Style{false, 60, false}).find("CHECK           0   1   2   3   4   5   6   7"),
              std::string::npos);
    std::string tiny = render_terminal(r, Style{false, 40, false});
    EXPECT_LE(widest_line(tiny.substr(tiny.find("CHECK"), 400)), 40u) << tiny;
    EXPECT_NE(tiny.find("CHECK           6"), std::string::npos) << tiny;  // a second block of GPUs
}

TEST(CompactScorecard, GpusWithTheSameResultPrintOnce) {
    Report r = read_report_file(fixture("healthy-8gpu"));
    // Every GPU's GEMM result is the same (the fakes give each the same rates): made a WARN, the
    // eight results expand once, with their GPUs, not eight times.
    for (auto& c : r.checks)
        if (c.key == "gpu.gemm") c.verdict = Verdict::Warn;
    std::string out = render_terminal(r, Style{false, 100, false});
    EXPECT_NE(out.find("WARN   gpu.gemm GPUs 0-7\n"), std::string::npos) << out;
    std::size_t n = 0;
    for (auto p = out.find("WARN   gpu.gemm"); p != std::string::npos; p = out.find("WARN   gpu.gemm", p + 1)) ++n;
    EXPECT_EQ(n, 1u) << out;
    // One GPU that differs in a figure keeps its own block.
    for (auto& c : r.checks)
        if (c.key == "gpu.gemm" && c.gpu == 5) c.measurements[0].value = *c.measurements[0].value * 0.9;
    out = render_terminal(r, Style{false, 100, false});
    EXPECT_NE(out.find("WARN   gpu.gemm GPUs 0-4, 6, 7\n"), std::string::npos) << out;
    EXPECT_NE(out.find("WARN   gpu.gemm                5"), std::string::npos) << out;
}

TEST(MarkdownGolden, FaultyEightGpus) {
    std::string md = render_markdown(read_report_file(fixture("faulty-8gpu")));
    compare_golden("faulty-8gpu.md", md);
    EXPECT_NE(md.find("# gpuvet check: NO-GO"), std::string::npos);
    EXPECT_NE(md.find("| `gpu.health` | ✓ 100% | **✗ 91°C** |"), std::string::npos) << md;
    EXPECT_NE(md.find("### FAIL `gpu.health` GPU 1"), std::string::npos) << md;
}

TEST(MarkdownGolden, HealthyTwoGpus) {
    compare_golden("healthy-2gpu.md", render_markdown(read_report_file(fixture("healthy-2gpu"))));
}

}  // namespace
