// The CLI11 adapter: a numeric option's range in --help, a refused value kept until main's boundary.
#include <gtest/gtest.h>

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cli/number_option.hpp"
#include "core/error.hpp"

using namespace gpuvet;

namespace {

constexpr NumberRule kHz{.min = 1, .max = 20, .what = "a rate", .suffix = "Hz", .example = "2"};
constexpr NumberRule kTp{.min = 1, .max = 64, .whole = true, .what = "a degree", .example = "8"};

struct Parsed {
    double hz = 1;
    int tp = 1;
    std::optional<std::uint64_t> bytes;
};

// Parses argv as main does; returns the kept usage error's message, or "" when every value passed.
std::string parse(std::vector<std::string> args, Parsed& out) {
    CLI::App app{"t"};
    add_number_option(app, "--sample-hz", out.hz, kHz, "telemetry rate");
    add_number_option(app, "--tp", out.tp, kTp, "");
    constexpr NumberRule kBytes{.min = 1024.0 * 1024,
                                .max = 1099511627776.0,
                                .whole = true,
                                .unit = NumberUnit::Bytes,
                                .what = "a size",
                                .example = "1G"};
    add_number_option(app, "--storage-bytes", out.bytes, kBytes, "cap");
    std::vector<const char*> argv{"t"};
    for (auto& a : args) argv.push_back(a.c_str());
    app.parse(int(argv.size()), argv.data());
    try {
        rethrow_option_error();
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::Usage);
        return e.what();
    }
    return "";
}

}  // namespace

TEST(NumberOption, GoodValuesAreStored) {
    Parsed p;
    EXPECT_EQ(parse({"--sample-hz", "2.5", "--tp=8", "--storage-bytes", "512M"}, p), "");
    EXPECT_DOUBLE_EQ(p.hz, 2.5);
    EXPECT_EQ(p.tp, 8);
    EXPECT_EQ(p.bytes, std::uint64_t(512) << 20);
}

TEST(NumberOption, ARefusedValueIsKeptAndThrownOnceAtTheBoundary) {
    for (const char* bad : {"nan", "inf", "-inf", "-1", "0", "1e300", "0x10", "ten"}) {
        Parsed p;
        std::string m = parse({std::string("--sample-hz=") + bad, "--tp", "4"}, p);
        EXPECT_EQ(m.rfind("--sample-hz ", 0), 0u) << bad << ": " << m;
        EXPECT_NE(m.find("between 1 and 20 Hz"), std::string::npos) << m;
        EXPECT_DOUBLE_EQ(p.hz, 1) << bad;  // the default stays
    }
    Parsed p;
    EXPECT_NE(parse({"--tp", "0.5"}, p).find("not a whole number"), std::string::npos);
    EXPECT_NO_THROW(rethrow_option_error());  // nothing left over from the last parse
}

TEST(NumberOption, HelpShowsTheRange) {
    CLI::App app{"t"};
    double hz = 1;
    add_number_option(app, "--sample-hz", hz, kHz, "telemetry rate (default 1)");
    std::string help = app.help();
    EXPECT_NE(help.find("telemetry rate (default 1); between 1 and 20 Hz"), std::string::npos) << help;
}
