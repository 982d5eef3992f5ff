// Golden outputs of the terminal and JSON printers for one fixed report.
// Regenerate after an intended change: GPUVET_UPDATE_GOLDEN=1 ./gpuvet_unit_tests --gtest_filter='Golden*'
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "report/json.hpp"
#include "support/result_fixtures.hpp"
#include "report/terminal.hpp"
#include "report/text_layout.hpp"

using namespace gpuvet;

namespace {

Report sample_report() {
    Report r;
    r.tool_version = "0.1.0";
    r.command = "check";
    r.argv = {"gpuvet", "check", "--expect", "8x H100"};
    r.started_at = "2026-11-30T08:00:00Z";
    r.finished_at = "2026-11-30T08:05:00Z";
    r.duration_s = 300;
    r.machine.hostname = "gpu-node-17";
    r.machine.cpu_model = "Intel(R) Xeon(R) Platinum 8480+";
    r.machine.cpu_sockets = 2;
    r.machine.cpu_cores = 112;
    r.machine.cpu_threads = 224;
    r.machine.memory_total_bytes = 2164663517184ULL;
    r.machine.numa_nodes = 2;
    r.machine.os = "Ubuntu 22.04.4 LTS";
    r.machine.kernel = "5.15.0-105-generic";
    r.machine.virtualization = "none";
    r.machine.container = "docker";
    r.machine.driver.present = true;
    r.machine.driver.cuda_usable = true;
    r.machine.driver.driver_version = "550.54.15";
    r.machine.driver.cuda_driver_version = 12040;
    r.gpus.push_back({0, "NVIDIA H100 80GB HBM3", "GPU-1d6b", "00000000:18:00.0", 85520809984ULL, "h100-sxm5-80gb",
                      "pci-device-id", std::nullopt});

    CheckResult pass;
    pass.key = "gpu.memory_bandwidth";
    pass.title = "Device memory bandwidth";
    pass.gpu = 0;
    pass.verdict = Verdict::Pass;
    pass.summary = "Copy reaches 90% of the 3350 GB/s datasheet figure, inside the healthy range.";
    Reference ref;
    ref.spec = 3350;
    ref.expected_fraction = 0.89;
    ref.warn_below = 2680;
    ref.fail_below = 2513;
    ref.source = "REFERENCES.md: H100 SXM 2.97 of 3.35 TB/s";
    pass.measurements.push_back(Measurement::number("copy_gbps", "Device copy", 3012.4, "GB/s").against(ref));
    pass.duration_s = 4.2;
    r.checks.push_back(pass);

    CheckResult warn;
    warn.key = "gpu.tenancy";
    warn.title = "Other tenants";
    warn.gpu = 0;
    warn.verdict = Verdict::Warn;
    warn.summary = "1.2 GiB of memory is already used by a process that is not gpuvet.";
    warn.measurements.push_back(Measurement::number("memory_used_bytes", "Memory in use", 1288490188.8, "bytes"));
    warn.findings.push_back(Finding{Verdict::Warn, "a process that is not gpuvet holds 1.2 GiB", "memory_used_bytes"});
    warn.details.push_back("pid 4242 (python3) holds 1.2 GiB");
    r.checks.push_back(warn);

    CheckResult fail;
    fail.key = "gpu.pcie_link";
    fail.title = "PCIe link";
    fail.gpu = 0;
    fail.verdict = Verdict::Fail;
    fail.summary = "The link runs at Gen5 x8, half the x16 the card and the slot support.";
    Reference lanes;
    lanes.spec = 16;
    lanes.fail_below = 16;
    lanes.source = "H100 SXM5 datasheet";
    fail.measurements.push_back(Measurement::number("pcie_width_current", "Link width", 8, "lanes").against(lanes));
    r.checks.push_back(fail);

    CheckResult skip;
    skip.key = "gpu.allreduce";
    skip.title = "All-reduce";
    skip.verdict = Verdict::Skip;
    skip.summary = "needs at least 2 GPUs; this box has 1";
    r.checks.push_back(skip);

    CheckResult err;
    err.key = "gpu.gemm";
    err.title = "Tensor GEMM";
    err.gpu = 0;
    err.verdict = Verdict::Error;
    err.summary = "libcublasLt not found";
    err.measurements.push_back(Measurement::absent("bf16_tflops", "BF16 GEMM", "TFLOPS", "libcublasLt not found"));
    err.details.push_back("set GPUVET_CUBLASLT or install the CUDA toolkit");
    r.checks.push_back(err);

    TimeSeries ts;
    ts.key = "temperature_c";
    ts.unit = "C";
    ts.gpu = 0;
    ts.t_s = {0, 1, 2};
    ts.values = {41, 55, 63};
    r.series.push_back(ts);
    r.errors.push_back(
        {"gpu.gemm", "driver", "libcublasLt not found", "set GPUVET_CUBLASLT or install the CUDA toolkit"});
    r.finalize();
    return r;
}

void compare_golden(const std::string& name, const std::string& actual) {
    std::string path = std::string(GPUVET_TEST_DIR) + "/golden/" + name;
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

}  // namespace

TEST(Golden, ScorecardMatchesTheGoldenFile) {
    compare_golden("scorecard.txt", render_scorecard(sample_report(), Style{false, 100}));
}

TEST(Golden, VerboseScorecardMatchesTheGoldenFile) {
    compare_golden("scorecard-verbose.txt", render_scorecard(sample_report(), Style{false, 100, true}));
}

TEST(Scorecard, PassingFactsOnlyInVerbose) {
    Report r = sample_report();
    r.checks[0].measurements.push_back(Measurement::number("clock_sm_mhz", "SM clock", 1980, "MHz"));
    r.checks[0].details.push_back("a passing detail");
    std::string quiet = render_scorecard(r, Style{false, 100});
    std::string loud = render_scorecard(r, Style{false, 100, true});
    EXPECT_EQ(quiet.find("SM clock"), std::string::npos);
    EXPECT_EQ(quiet.find("a passing detail"), std::string::npos);
    EXPECT_NE(quiet.find("Device copy"), std::string::npos);  // held against the spec: always shown
    EXPECT_NE(loud.find("SM clock"), std::string::npos);
    EXPECT_NE(loud.find("a passing detail"), std::string::npos);
}

TEST(Golden, JsonMatchesTheGoldenFile) { compare_golden("report.json", render_json(sample_report())); }

TEST(Golden, ScorecardFitsIn100Columns) {
    std::istringstream in(render_scorecard(sample_report(), Style{false, 100}));
    std::string line;
    while (std::getline(in, line)) EXPECT_LE(visible_width(line), 100u) << line;
}

TEST(Golden, ExitCodeOfSample) { EXPECT_EQ(sample_report().exit_code, 1); }

TEST(Json, ValidEvenWithNonFiniteAndFatal) {
    Report r = sample_report();
    r.checks[0].measurements[0].value = std::numeric_limits<double>::quiet_NaN();
    r.fatal = ReportError{"gpuvet", "driver", "GPU lost", "reboot"};
    r.finalize();
    auto j = nlohmann::json::parse(render_json(r));  // throws when not valid JSON
    EXPECT_TRUE(j["checks"][0]["measurements"][0]["value"].is_null());
    EXPECT_EQ(j["fatal"]["message"], "GPU lost");
    EXPECT_EQ(j["exit_code"], 3);
    EXPECT_EQ(j["schema_version"], kSchemaVersion);
}

namespace {
// A run stopped during gpu.p2p, before gpu.burn ran on GPUs 0 and 1.
Report interrupted_report() {
    Report r;
    r.command = "check";
    r.checks.push_back(test::result_of("gpu.memory_bandwidth", Verdict::Pass, "copy 3000 GB/s", 0));
    CheckResult p2p = test::result_of("gpu.p2p", Verdict::Skip, "interrupted after 2 of 56 pairs");
    p2p.measurements.push_back(Measurement::absent("uni_gbps_0_1", "GPU 0 -> 1", "GB/s", kInterrupted));
    r.checks.push_back(p2p);
    r.checks.push_back(test::result_of("gpu.burn", Verdict::Skip, kNotRunInterrupted, 0));
    r.checks.push_back(test::result_of("gpu.burn", Verdict::Skip, kNotRunInterrupted, 1));
    r.interrupted = true;
    r.interrupted_during = "gpu.p2p";
    r.finalize();
    return r;
}
}  // namespace

TEST(Scorecard, InterruptedRunIsIncompleteAndSaysWhatDidNotRun) {
    std::string out = render_scorecard(interrupted_report(), Style{false, 100});
    EXPECT_NE(out.find("Not run (interrupted): gpu.burn (GPUs 0, 1)"), std::string::npos) << out;
    EXPECT_NE(out.find("Verdict: INCOMPLETE (interrupted during gpu.p2p, 1 not run)"), std::string::npos) << out;
    EXPECT_NE(out.find("· exit 3"), std::string::npos) << out;
    EXPECT_EQ(out.find("Verdict: GO"), std::string::npos) << out;
    EXPECT_NE(out.find("— (interrupted)"), std::string::npos) << out;  // the cut-short figure, not a 0
}

TEST(Json, InterruptedRunCarriesTheRunVerdict) {
    auto j = nlohmann::json::parse(render_json(interrupted_report()));
    EXPECT_EQ(j["verdict"], "INCOMPLETE");
    EXPECT_EQ(j["exit_code"], 3);
    EXPECT_EQ(j["interrupted"], true);
    EXPECT_EQ(j["interrupted_during"], "gpu.p2p");
    EXPECT_TRUE(j["checks"][1]["measurements"][0]["value"].is_null());
    EXPECT_EQ(j["checks"][1]["measurements"][0]["absent_reason"], "interrupted");
}

TEST(Scorecard, NothingCheckedCouldNotRun) {
    Report r;
    r.command = "burn";
    r.checks.push_back(test::result_of("gpu.burn", Verdict::Skip, "no NVIDIA driver"));
    r.finalize();
    std::string out = render_scorecard(r, Style{false, 100});
    EXPECT_NE(out.find("Verdict: COULD NOT RUN (nothing was checked)"), std::string::npos) << out;
    EXPECT_NE(out.find("· exit 3"), std::string::npos) << out;
}
