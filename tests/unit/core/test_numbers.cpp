// The shared number reader (core/numbers), bounded file reads and the nesting guards.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstdio>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <string>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

#include "core/error.hpp"
#include "core/input_file.hpp"
#include "core/numbers.hpp"
#include "core/strings.hpp"
#include "core/text_limits.hpp"

using namespace gpuvet;

namespace {

constexpr NumberRule kRate{.min = 1, .max = 20, .what = "a rate", .suffix = "Hz", .example = "2"};
constexpr NumberRule kShare{.min = 0, .max = 1, .min_open = true, .what = "a share", .example = "0.9"};
constexpr NumberRule kWhole{.min = 1, .max = 64, .whole = true, .what = "a degree", .example = "8"};
constexpr NumberRule kSize{.min = 1024.0 * 1024,
                           .max = 16.0 * 1024 * 1024 * 1024 * 1024,
                           .whole = true,
                           .unit = NumberUnit::Bytes,
                           .what = "a size",
                           .example = "1G"};
constexpr NumberRule kTime{.min = 1, .max = 86400, .unit = NumberUnit::Seconds, .what = "a duration", .example = "10m"};
constexpr NumberRule kCount{
    .min = 1, .max = 1e15, .whole = true, .unit = NumberUnit::Count, .what = "a count", .example = "7B"};

std::string usage_message(std::string_view option, std::string_view text, const NumberRule& r) {
    try {
        parse_number_option(option, text, r);
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::Usage);
        return e.what();
    }
    ADD_FAILURE() << option << " accepted '" << text << "'";
    return "";
}

}  // namespace

TEST(Numbers, AcceptsPlainValuesAndUnits) {
    EXPECT_DOUBLE_EQ(parse_number_option("--sample-hz", "2", kRate), 2);
    EXPECT_DOUBLE_EQ(parse_number_option("--sample-hz", "20", kRate), 20);  // bounds are inclusive
    EXPECT_DOUBLE_EQ(parse_number_option("--sample-hz", "1.5e1", kRate), 15);
    EXPECT_DOUBLE_EQ(parse_number_option("--engine-fraction", "1", kShare), 1);
    EXPECT_EQ(parse_whole_option("--tp", "8", kWhole), 8);
    EXPECT_DOUBLE_EQ(parse_number_option("--storage-bytes", "1G", kSize), 1024.0 * 1024 * 1024);
    EXPECT_DOUBLE_EQ(parse_number_option("--storage-bytes", "512MiB", kSize), 512.0 * 1024 * 1024);
    EXPECT_DOUBLE_EQ(parse_number_option("--storage-bytes", "0.5G", kSize), 512.0 * 1024 * 1024);
    EXPECT_DOUBLE_EQ(parse_number_option("--duration", "10m", kTime), 600);
    EXPECT_DOUBLE_EQ(parse_number_option("--duration", "1.5h", kTime), 5400);
    EXPECT_DOUBLE_EQ(parse_number_option("--duration", "45", kTime), 45);
    EXPECT_DOUBLE_EQ(parse_number_option("--params", "7B", kCount), 7e9);
    EXPECT_DOUBLE_EQ(parse_number_option("--params", "70e9", kCount), 7e10);
    EXPECT_DOUBLE_EQ(parse_number_option("--params", "350M", kCount), 3.5e8);
}

TEST(Numbers, RefusesWhatIsNotAFiniteDecimalInRange) {
    struct Case {
        const char* text;
        const NumberRule* rule;
        const char* why;
    };
    for (const Case& c : {Case{"nan", &kRate, "not a number"},
                          Case{"NaN", &kRate, "not a number"},
                          Case{"-nan", &kRate, "not a number"},
                          Case{"inf", &kRate, "not a finite number"},
                          Case{"-inf", &kRate, "not a finite number"},
                          Case{"infinity", &kRate, "not a finite"},
                          Case{"-1", &kRate, "too small"},
                          Case{"0", &kShare, "too small"},
                          Case{"2", &kShare, "too large"},
                          Case{"1e300", &kRate, "too large"},
                          Case{"1e999", &kRate, "out of any usable range"},
                          Case{"0x10", &kRate, "hexadecimal"},
                          Case{"0x10G", &kSize, "hexadecimal"},
                          Case{"0.5", &kWhole, "not a whole number"},
                          Case{"", &kRate, "no number"},
                          Case{"ten", &kRate, "not a number"},
                          Case{"5Hz", &kRate, "unknown unit"},
                          Case{"0.5", &kSize, "not a whole number"},
                          Case{"1e30T", &kSize, "too large"},
                          Case{"inf", &kSize, "not a finite"},
                          Case{"12Q", &kSize, "unknown unit"},
                          Case{"99999h", &kTime, "too large"},
                          Case{"5 s", &kTime, "unknown unit"},
                          Case{"0", &kTime, "too small"},
                          Case{"nan", &kCount, "not a number"},
                          Case{"1e16", &kCount, "too large"}}) {
        std::string m = usage_message("--opt", c.text, *c.rule);
        EXPECT_NE(m.find(c.why), std::string::npos) << c.text << ": " << m;
        EXPECT_NE(m.find("--opt"), std::string::npos) << m;
    }
}

TEST(Numbers, MessageNamesOptionValueRangeAndExample) {
    EXPECT_EQ(usage_message("--sample-hz", "nan", kRate),
              "--sample-hz nan: not a number; give a rate between 1 and 20 Hz, e.g. --sample-hz 2");
    EXPECT_EQ(usage_message("--engine-fraction", "2", kShare),
              "--engine-fraction 2: too large; give a share greater than 0 and at most 1, e.g. --engine-fraction 0.9");
    EXPECT_NE(usage_message("--storage-bytes", "1K", kSize).find("between 1 MiB and 16 TiB"), std::string::npos);
    EXPECT_NE(usage_message("--duration", "2d", kTime).find("between 1 s and 24 h"), std::string::npos);
    // A long value is cut, so one bad argument cannot flood the terminal.
    EXPECT_LT(usage_message("--sample-hz", std::string(5000, '9'), kRate).size(), 200u);
}

TEST(Numbers, FileFieldErrorsNameWhereFieldAndRange) {
    try {
        check_whole_field("c.json:3:5", "head_dim", 0, kWhole, "see docs");
        FAIL();
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::Input);
        EXPECT_EQ(
            std::string(e.what()),
            "c.json:3:5: head_dim = 0: too small; give a degree between 1 and 64, a whole number, e.g. head_dim = 8");
        EXPECT_EQ(e.advice(), "see docs");
    }
    EXPECT_THROW(check_number_field("p.toml:1:1", "price", std::nan(""), kShare, ""), Error);
    EXPECT_THROW(check_number_field("p.toml:1:1", "price", INFINITY, kShare, ""), Error);
    EXPECT_THROW(check_whole_field("p.toml:1:1", "n", 2.5, kWhole, ""), Error);
}

TEST(FormatNumber, HugeAndTinyValuesUseScientificNotation) {
    EXPECT_EQ(format_number(1e300), "1e+300");
    EXPECT_EQ(format_number(-2.5e20), "-2.5e+20");
    EXPECT_EQ(format_number(1.234e-9), "1.23e-09");
    EXPECT_LT(format_number(1.7976931348623157e308).size(), 12u);
    EXPECT_EQ(format_number(123456789), "123456789");  // ordinary magnitudes unchanged
    EXPECT_EQ(format_fixed(12.345, 1), "12.3");
    EXPECT_LT(format_fixed(1e300, 1).size(), 12u);
}

TEST(TextLimits, DeepJsonIsRefusedWithItsPlace) {
    std::string ok = std::string(kMaxJsonDepth, '[') + std::string(kMaxJsonDepth, ']');
    EXPECT_NO_THROW(check_json_nesting(ok, "x.json"));
    std::string deep = "{\n" + std::string(kMaxJsonDepth, '[');
    try {
        check_json_nesting(deep, "x.json");
        FAIL();
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::Input);
        EXPECT_NE(std::string(e.what()).find("x.json:2:64: nested deeper than 64"), std::string::npos) << e.what();
    }
    // Brackets inside strings are text, not nesting.
    EXPECT_NO_THROW(check_json_nesting("{\"a\": \"" + std::string(1000, '[') + "\\\"\"}", "x.json"));
}

TEST(TextLimits, LongDottedTomlKeysAreRefusedWithTheirLine) {
    auto key = [](int parts) {
        std::string k = "a";
        for (int i = 1; i < parts; ++i) k += ".a";
        return k;
    };
    EXPECT_NO_THROW(check_toml_nesting(key(kMaxTomlKeyParts) + " = 1\n", "x.toml"));
    EXPECT_NO_THROW(check_toml_nesting("x = [1.5, 2.5, 3.5]  # a.b.c\ns = \"" + key(200) + "\"\n", "x.toml"));
    for (std::string bad : {"\n" + key(kMaxTomlKeyParts + 1) + " = 1\n", "\n[" + key(50000) + "]\n",
                            "\n\"q\" . 'r' . " + key(kMaxTomlKeyParts) + " = 1\n"}) {
        try {
            check_toml_nesting(bad, "x.toml");
            FAIL() << bad.substr(0, 40);
        } catch (const Error& e) {
            EXPECT_EQ(e.kind(), ErrorKind::Input);
            EXPECT_NE(std::string(e.what()).find("x.toml:2:"), std::string::npos) << e.what();
        }
    }
    EXPECT_THROW(check_toml_nesting("a = " + std::string(40, '[') + std::string(40, ']'), "x.toml"), Error);
}

TEST(InputFile, ReadsWithinTheLimitAndRefusesMore) {
    auto dir = std::filesystem::temp_directory_path() / ("gpuvet-input-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    {
        std::ofstream(dir / "small.toml") << "a = 1\n";
        std::ofstream big(dir / "big.toml");
        big << std::string(kInputFileLimitBytes + 1, '#');
    }
    EXPECT_EQ(read_input_file(dir / "small.toml", "--specs"), "a = 1\n");
    for (auto p : {dir / "big.toml", std::filesystem::path("/dev/zero")}) {
        try {
            read_input_file(p, "--specs");
            FAIL() << p;
        } catch (const Error& e) {
            EXPECT_EQ(e.kind(), ErrorKind::Input);
            EXPECT_NE(std::string(e.what()).find("larger than the 4.0 MiB limit"), std::string::npos) << e.what();
        }
    }
    EXPECT_THROW(read_input_file(dir, "--specs"), Error);             // a folder
    EXPECT_THROW(read_input_file(dir / "absent", "--specs"), Error);  // missing
    std::filesystem::remove_all(dir);
}

TEST(InputFile, AStalledPipeEndsOnTheStopFlag) {
    auto fifo = std::filesystem::temp_directory_path() / ("gpuvet-fifo-" + std::to_string(::getpid()));
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    // A writer that never writes keeps the pipe open: without the stop flag the read would wait forever.
    int writer = ::open(fifo.c_str(), O_RDWR | O_NONBLOCK);
    ASSERT_GE(writer, 0);
    std::atomic<bool> stop{false};
    set_input_stop_flag(&stop);
    std::thread stopper([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        stop = true;
    });
    auto t0 = std::chrono::steady_clock::now();
    try {
        read_input_file(fifo, "--specs");
        ADD_FAILURE() << "the read ended without data or a stop";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::Runtime) << e.what();
        EXPECT_NE(std::string(e.what()).find("interrupted"), std::string::npos) << e.what();
    }
    EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(2));
    stopper.join();
    ::close(writer);
    set_input_stop_flag(nullptr);
    std::filesystem::remove(fifo);
}
