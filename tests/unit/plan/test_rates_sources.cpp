// --measured (a gpuvet check JSON report) and --prices (TOML) readers.
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "plan/rates_sources.hpp"
#include "specs/spec_db.hpp"

using namespace gpuvet;

namespace {
const SpecDb& db() {
    static SpecDb d = SpecDb::embedded();
    return d;
}
const std::string kReport = std::string(GPUVET_SOURCE_DIR) + "/tests/fixtures/plan/measured_report.json";

// The message of the Input error `f` throws ("" if it throws nothing or something else).
template <class F>
std::string input_error_of(F f) {
    try {
        f();
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::Input) << e.what();
        return e.what();
    }
    return "";
}
}  // namespace

// Three H100s: triads 2950, 2500, 2900 -> median 2900; bf16 700, 650, 720 -> 700; fp8 only on one.
TEST(PlanMeasuredReport, MediansPerSkuFromTheFixture) {
    auto r = read_measured_report(kReport, db());
    ASSERT_TRUE(r.count("h100-sxm5-80gb"));
    auto& h = r.at("h100-sxm5-80gb");
    ASSERT_TRUE(h.bandwidth_gbps);
    EXPECT_DOUBLE_EQ(*h.bandwidth_gbps, 2900.0);  // triad preferred over the larger copy figure
    ASSERT_TRUE(h.bf16_tflops);
    EXPECT_DOUBLE_EQ(*h.bf16_tflops, 700.0);
    ASSERT_TRUE(h.fp8_tflops);
    EXPECT_DOUBLE_EQ(*h.fp8_tflops, 1300.0);
    EXPECT_FALSE(h.fp32_tflops);  // tf32 is not fp32
}
TEST(PlanMeasuredReport, CopyOrLargestWhenNoTriadAndFp32FromFpPeak) {
    auto r = read_measured_report(kReport, db());
    ASSERT_TRUE(r.count("a100-sxm4-80gb"));
    auto& a = r.at("a100-sxm4-80gb");
    ASSERT_TRUE(a.bandwidth_gbps);
    EXPECT_DOUBLE_EQ(*a.bandwidth_gbps, 1800.0);  // copy before the larger read figure
    ASSERT_TRUE(a.fp32_tflops);
    EXPECT_DOUBLE_EQ(*a.fp32_tflops, 18.5);
    EXPECT_FALSE(a.bf16_tflops);
}
TEST(PlanMeasuredReport, GpuWithoutSkuIsIgnored) {
    auto r = read_measured_report(kReport, db());
    EXPECT_EQ(r.size(), 2u);
}
TEST(PlanMeasuredReport, BadReportsAreInputErrors) {
    EXPECT_NE(input_error_of([] { (void)parse_measured_report("not json", "r.json", db()); }).find("r.json"),
              std::string::npos);
    EXPECT_NE(input_error_of([] {
                  (void)parse_measured_report("{\"schema_version\": 3, \"checks\": 3}", "r.json", db());
              }).find("checks"),
              std::string::npos);
    // The one report reader: the schema version is checked, and a key of the wrong type is named.
    EXPECT_NE(
        input_error_of([] { (void)parse_measured_report(R"({"checks":[]})", "r.json", db()); }).find("schema_version"),
        std::string::npos);
    EXPECT_NE(input_error_of([] {
                  (void)parse_measured_report(R"({"schema_version":3,"gpus":[{"index":"0","sku":5}],"checks":[]})",
                                              "r.json", db());
              }).find("gpus[0].index"),
              std::string::npos);
    EXPECT_NE(input_error_of([] { (void)read_measured_report("/nonexistent/r.json", db()); }).find("cannot read"),
              std::string::npos);
}

TEST(PlanPrices, ReadsNamesThroughTheSpecMatcher) {
    auto p =
        parse_prices("currency = \"EUR\"\n[prices]\n\"H100 SXM\" = 2.49\n\"A100 80GB SXM\" = 1.29\n", "p.toml", db());
    EXPECT_EQ(p.currency, "EUR");
    ASSERT_TRUE(p.per_card_hour.count("h100-sxm5-80gb"));
    EXPECT_DOUBLE_EQ(p.per_card_hour.at("h100-sxm5-80gb"), 2.49);
    EXPECT_EQ(p.per_card_hour.size(), 2u);
}
// "H100" fits every H100: each gets the price, a more specific name wins for its SKU, and the
// notes say which SKUs a broad name priced.
TEST(PlanPrices, BroadNamesPriceEverySkuTheyFit) {
    auto p = parse_prices("[prices]\n\"H100\" = 2.5\n\"H100 SXM\" = 3.0\n", "p.toml", db());
    EXPECT_DOUBLE_EQ(p.per_card_hour.at("h100-sxm5-80gb"), 3.0);  // specific beats broad, in any order
    ASSERT_TRUE(p.per_card_hour.count("h100-pcie-80gb"));
    EXPECT_DOUBLE_EQ(p.per_card_hour.at("h100-pcie-80gb"), 2.5);
    bool said = false;
    for (auto& n : p.notes)
        said |= n.find("'H100' fits") != std::string::npos && n.find("H100 PCIe 80GB") != std::string::npos &&
                n.find("H100 SXM5 80GB") == std::string::npos;
    EXPECT_TRUE(said) << "the note lists the SKUs the broad name priced, not the one a specific name took";
    auto q = parse_prices("[prices]\n\"H100 SXM\" = 3.0\n\"H100\" = 2.5\n", "p.toml", db());
    EXPECT_DOUBLE_EQ(q.per_card_hour.at("h100-sxm5-80gb"), 3.0);
    // Two spellings of one SKU with different prices: which one holds is the user's call.
    std::string clash =
        input_error_of([] { (void)parse_prices("[prices]\n\"H100 SXM\" = 3\n\"H100 SXM5\" = 4\n", "p.toml", db()); });
    EXPECT_NE(clash.find("different prices"), std::string::npos) << clash;
    EXPECT_NE(clash.find("p.toml:3:1"), std::string::npos) << clash;
    // An alias says which SKU it was taken as.
    auto a = parse_prices("[prices]\n\"A100 80GB\" = 8\n", "p.toml", db());
    ASSERT_EQ(a.notes.size(), 1u);
    EXPECT_EQ(a.notes[0], "'A100 80GB' is taken as A100 PCIe 80GB");
}
TEST(PlanPrices, DefaultCurrencyIsUsd) {
    EXPECT_EQ(parse_prices("[prices]\n\"H100 SXM\" = 2\n", "p.toml", db()).currency, "USD");
}
// Every bad file names file:line:column and what to write instead.
TEST(PlanPrices, BadFilesNameFileLineColumn) {
    EXPECT_NE(input_error_of([] { (void)parse_prices("[prices\n", "p.toml", db()); }).find("p.toml:1:"),
              std::string::npos);
    EXPECT_NE(input_error_of([] {
                  (void)parse_prices("[prices]\n\"H100 SXM\" = \"cheap\"\n", "p.toml", db());
              }).find("p.toml:2:14"),
              std::string::npos);
    EXPECT_NE(input_error_of([] {
                  (void)parse_prices("[prices]\n\"H100 SXM\" = -1.0\n", "p.toml", db());
              }).find("between 0 and 1000000"),
              std::string::npos);
    EXPECT_NE(input_error_of([] {
                  (void)parse_prices("[prices]\n\"H100 SXM\" = 1e300\n", "p.toml", db());
              }).find("too large"),
              std::string::npos);
    EXPECT_NE(
        input_error_of([] { (void)parse_prices("[prices]\n\"H100 SXM\" = nan\n", "p.toml", db()); }).find("p.toml:2:"),
        std::string::npos);
    std::string unknown =
        input_error_of([] { (void)parse_prices("[prices]\n\n\"Quantum 9000\" = 1\n", "p.toml", db()); });
    EXPECT_NE(unknown.find("p.toml:3:1"), std::string::npos) << unknown;
    EXPECT_NE(unknown.find("Quantum 9000"), std::string::npos);
    EXPECT_NE(input_error_of([] {
                  (void)parse_prices("currency = 5\n[prices]\n\"H100 SXM\" = 1\n", "p.toml", db());
              }).find("p.toml:1:"),
              std::string::npos);
    EXPECT_NE(input_error_of([] { (void)parse_prices("x = 1\n", "p.toml", db()); }).find("no [prices]"),
              std::string::npos);
}
