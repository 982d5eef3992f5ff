#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/strings.hpp"
#include "core/host_fs.hpp"
#include "report/text_layout.hpp"

using namespace gpuvet;

TEST(Strings, FormatNumberKeepsTheSignificantDigitsAskedFor) {
    EXPECT_EQ(format_number(3350), "3350");
    EXPECT_EQ(format_number(1.4328, 3), "1.43");
    EXPECT_EQ(format_number(989.4, 4), "989.4");
    EXPECT_EQ(format_number(0.0123, 2), "0.012");
    EXPECT_EQ(format_number(0), "0");
}

TEST(Strings, FormatBytesUsesBinaryUnits) {
    EXPECT_EQ(format_bytes(80.0 * 1024 * 1024 * 1024), "80.0 GiB");
    EXPECT_EQ(format_bytes(512), "512 B");
}

TEST(Strings, EditDistanceCountsSingleEditsAndBoundsAHugeNameAtOnce) {
    EXPECT_EQ(edit_distance("check", "chek"), 1u);
    EXPECT_EQ(edit_distance("", "abc"), 3u);
    // A crafted 4 MiB name is compared by its first 256 characters plus the excess, at once.
    std::string huge(4u << 20, 'x');
    EXPECT_EQ(edit_distance(huge, "h100"), 256u + (huge.size() - 256));
    EXPECT_EQ(edit_distance("h100", huge), edit_distance(huge, "h100"));
}

TEST(CpuList, RangesAndSinglesCountEachCpuOnceAndMalformedListsHaveNoCount) {
    EXPECT_EQ(count_cpu_list("0-3,8,10-11"), 7);
    EXPECT_EQ(count_cpu_list("0"), 1);
    EXPECT_FALSE(count_cpu_list("3-1").has_value());
    EXPECT_FALSE(count_cpu_list("a").has_value());
    EXPECT_FALSE(count_cpu_list("").has_value());
}

TEST(Wrap, KeepsPrefixAndWidth) {
    std::string out = wrap("PREFIX  ", "one two three four five six seven eight nine ten", 24, 8);
    EXPECT_EQ(out.rfind("PREFIX  one", 0), 0u);
    for (auto& line : split(out, '\n')) EXPECT_LE(visible_width(line), 24u) << line;
}

TEST(AtomicFile, WritesWholeFileAndReplaces) {
    auto dir = std::filesystem::temp_directory_path() / "gpuvet-atomic-test";
    std::filesystem::create_directories(dir);
    auto p = dir / "r.json";
    write_file_atomically(p, "first");
    write_file_atomically(p, "second");
    std::ifstream in(p);
    std::string s((std::istreambuf_iterator<char>(in)), {});
    EXPECT_EQ(s, "second");
    // No temporary files left behind.
    int n = 0;
    for (auto& e : std::filesystem::directory_iterator(dir)) (void)e, ++n;
    EXPECT_EQ(n, 1);
    std::filesystem::remove_all(dir);
    EXPECT_THROW(write_file_atomically("/nonexistent-dir/x.json", "x"), Error);
}
