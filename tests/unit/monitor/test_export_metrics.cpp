// gpuvet export's pure parts: the exposition writer (escaping, HELP/TYPE, omission), the page built
// from a view (absent facts, lost GPUs, the stale bound), /healthz, --listen and the report reader.
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "monitor/export_metrics.hpp"
#include "monitor/export_server.hpp"
#include "monitor/listen_address.hpp"
#include "monitor/prometheus_text.hpp"

using namespace gpuvet;

namespace {

using Clock = std::chrono::steady_clock;
constexpr std::chrono::milliseconds kSecond{1000};

// One GPU whose sample has only the given utilization: every other fact is absent.
ExportView one_gpu_view(Clock::time_point tick_done, bool lost = false) {
    MonitoredGpu g;
    g.index = 0;
    g.facts.name = std::string("NVIDIA \"H100\"\\80GB\nHBM3");
    g.facts.uuid = std::string("GPU-1");
    g.facts.pci_bus_id = std::string("00000000:18:00.0");
    ExportView v;
    v.hostname = "node1";
    v.gpus = std::make_shared<const std::vector<MonitoredGpu>>(std::vector<MonitoredGpu>{g});
    auto t = std::make_shared<MonitorTick>();
    GpuReading r;
    r.index = 0;
    r.lost = lost;
    if (!lost) r.sample.utilization_gpu_percent = 87;
    t->gpus.push_back(r);
    v.tick = t;
    v.tick_done = tick_done;
    v.xid_absent_reason = "not watched in this test";
    return v;
}

}  // namespace

TEST(PrometheusText, EscapesLabelValuesAsTheFormatRequires) {
    EXPECT_EQ(prom::escape_label_value("a\\b\"c\nd"), "a\\\\b\\\"c\\nd");
    EXPECT_EQ(prom::escape_help("say \"hi\"\\\n"), "say \"hi\"\\\\\\n");  // HELP keeps its quotes
}

TEST(PrometheusText, WritesHelpTypeAndSeriesAndNothingForAnEmptyFamily) {
    prom::Family f{"x_bytes", "gauge", "Bytes.\nSecond line", {}};
    std::string out;
    prom::write_family(out, f);
    EXPECT_EQ(out, "");  // no series: no HELP or TYPE either
    f.add({{"gpu", "0"}, {"name", "a\"b"}}, 1.5);
    f.add({}, 2);
    prom::write_family(out, f);
    EXPECT_EQ(out,
              "# HELP x_bytes Bytes.\\nSecond line\n# TYPE x_bytes gauge\n"
              "x_bytes{gpu=\"0\",name=\"a\\\"b\"} 1.5\nx_bytes 2\n");
}

TEST(PrometheusText, FormatsValuesExactly) {
    EXPECT_EQ(prom::format_value(87), "87");
    EXPECT_EQ(prom::format_value(0.1), "0.1");
    EXPECT_EQ(prom::format_value(81559.0 * 1048576), "85520809984");
    EXPECT_EQ(prom::format_value(std::numeric_limits<double>::quiet_NaN()), "NaN");
    EXPECT_EQ(prom::format_value(-std::numeric_limits<double>::infinity()), "-Inf");
}

TEST(ExportPage, AbsentFactsHaveNoSeriesAndLabelValuesAreEscaped) {
    const auto now = Clock::now();
    std::string page = render_metrics(one_gpu_view(now), now, kSecond);
    EXPECT_NE(page.find("# HELP DCGM_FI_DEV_GPU_UTIL GPU utilization (in %).\n# TYPE DCGM_FI_DEV_GPU_UTIL gauge\n"),
              std::string::npos);
    EXPECT_NE(
        page.find("DCGM_FI_DEV_GPU_UTIL{gpu=\"0\",UUID=\"GPU-1\",pci_bus_id=\"00000000:18:00.0\",device=\"nvidia0\","
                  "modelName=\"NVIDIA \\\"H100\\\"\\\\80GB\\nHBM3\",hostname=\"node1\"} 87\n"),
        std::string::npos)
        << page;
    // Power, temperatures, clocks, ECC, reasons: all absent in the sample, so no line at all, not a 0.
    for (const char* name : {"DCGM_FI_DEV_POWER_USAGE", "DCGM_FI_DEV_GPU_TEMP", "DCGM_FI_DEV_SM_CLOCK",
                             "DCGM_FI_DEV_FB_USED", "DCGM_FI_DEV_ECC_SBE_VOL_TOTAL", "DCGM_FI_PROF_SM_ACTIVE",
                             "gpuvet_clock_event_reason_active", "DCGM_FI_DEV_XID_ERRORS", "gpuvet_check_verdict"})
        EXPECT_EQ(page.find("# TYPE " + std::string(name) + " "), std::string::npos) << name;
    EXPECT_NE(page.find("DCGM_FI_DEV_XID_ERRORS is left out: not watched in this test"), std::string::npos);
    EXPECT_NE(page.find("gpuvet_gpu_lost{gpu=\"0\""), std::string::npos);
    EXPECT_NE(page.find("gpuvet_sample_stale 0\n"), std::string::npos);
}

TEST(ExportPage, GpmPercentagesBecomeRatiosAndReasonsOneGaugeEach) {
    const auto now = Clock::now();
    ExportView v = one_gpu_view(now);
    auto t = std::make_shared<MonitorTick>(*v.tick);
    t->gpus[0].sample.gpm_sm_activity_percent = 42.5;
    t->gpus[0].sample.clock_event_reasons = std::uint64_t{0x4 | 0x40};  // sw power cap, hw thermal
    v.tick = t;
    std::string page = render_metrics(v, now, kSecond);
    EXPECT_NE(page.find("hostname=\"node1\"} 0.425\n"), std::string::npos) << page;
    EXPECT_NE(page.find("reason=\"sw_power_cap\"} 1\n"), std::string::npos);
    EXPECT_NE(page.find("reason=\"hw_thermal_slowdown\"} 1\n"), std::string::npos);
    EXPECT_NE(page.find("reason=\"hw_slowdown\"} 0\n"), std::string::npos);
}

TEST(ExportPage, ALostGpuKeepsOnlyItsLostSeries) {
    const auto now = Clock::now();
    std::string page = render_metrics(one_gpu_view(now, true), now, kSecond);
    EXPECT_EQ(page.find("DCGM_FI_DEV_GPU_UTIL"), std::string::npos);
    EXPECT_NE(page.find("gpuvet_gpu_lost{gpu=\"0\",UUID=\"GPU-1\""), std::string::npos);
    EXPECT_NE(page.find("hostname=\"node1\"} 1\n"), std::string::npos);
}

TEST(ExportPage, ATickOlderThanTheBoundDropsEveryGpuSeries) {
    EXPECT_EQ(stale_after(kSecond), std::chrono::milliseconds(8000));  // 3 intervals + 5 s
    const auto now = Clock::now();
    std::string fresh = render_metrics(one_gpu_view(now - std::chrono::milliseconds(7900)), now, kSecond);
    EXPECT_NE(fresh.find("DCGM_FI_DEV_GPU_UTIL{"), std::string::npos);
    std::string stale = render_metrics(one_gpu_view(now - std::chrono::milliseconds(8100)), now, kSecond);
    EXPECT_EQ(stale.find("DCGM_FI_DEV_GPU_UTIL{"), std::string::npos);
    EXPECT_EQ(stale.find("gpuvet_gpu_lost{"), std::string::npos);
    EXPECT_NE(stale.find("gpuvet_sample_stale 1\n"), std::string::npos);
    EXPECT_NE(stale.find("gpuvet_sample_age_seconds 8.1"), std::string::npos);
    EXPECT_NE(stale.find("the driver is not answering in time"), std::string::npos);
}

TEST(ExportPage, BeforeTheFirstTickOnlyGpuvetsOwnSeriesAndANote) {
    ExportView v = one_gpu_view(Clock::now());
    v.tick = nullptr;
    std::string page = render_metrics(v, Clock::now(), kSecond);
    EXPECT_EQ(page.find("# TYPE DCGM_"), std::string::npos);
    EXPECT_EQ(page.find("gpuvet_gpu_lost"), std::string::npos);
    EXPECT_EQ(page.find("gpuvet_sample_age_seconds"), std::string::npos);  // no age of a sample that never was
    EXPECT_NE(page.find("no sample of the GPUs has completed yet"), std::string::npos);
}

TEST(ExportHealth, SaysWhatIsWrong) {
    const auto now = Clock::now();
    ExportView v = one_gpu_view(now - std::chrono::seconds(1));
    HealthAnswer ok = health_answer({SamplerHealth::Running, ""}, v, now, kSecond);
    EXPECT_EQ(ok.status, 200);
    EXPECT_EQ(ok.body, "ok\n");
    HealthAnswer starting = health_answer({SamplerHealth::Starting, ""}, v, now, kSecond);
    EXPECT_EQ(starting.status, 503);
    EXPECT_EQ(starting.body.rfind("starting:", 0), 0u);
    v.tick_done = now - std::chrono::seconds(20);
    HealthAnswer stale = health_answer({SamplerHealth::Running, ""}, v, now, kSecond);
    EXPECT_EQ(stale.status, 503);
    EXPECT_NE(stale.body.find("20.0 s ago"), std::string::npos) << stale.body;
    HealthAnswer failed = health_answer({SamplerHealth::Failed, "GPU count failed"}, v, now, kSecond);
    EXPECT_EQ(failed.status, 503);
    EXPECT_EQ(failed.body, "failed: GPU count failed\n");
}

TEST(ListenAddress, ParsesHostPortForms) {
    ListenAddress a = parse_listen_address("127.0.0.1:9400");
    EXPECT_EQ(a.host, "127.0.0.1");
    EXPECT_EQ(a.port, 9400);
    a = parse_listen_address("[::1]:9500");
    EXPECT_EQ(a.host, "::1");
    EXPECT_EQ(a.port, 9500);
    a = parse_listen_address(":9400");
    EXPECT_EQ(a.host, "0.0.0.0");  // dcgm-exporter's ":9400": every interface
    a = parse_listen_address("gpu-node-1.lab:65535");
    EXPECT_EQ(a.host, "gpu-node-1.lab");
    EXPECT_EQ(a.port, 65535);
}

TEST(ListenAddress, RefusesBadFormsAsUsageErrors) {
    for (const char* bad : {"9400", "127.0.0.1:", "127.0.0.1:0", "127.0.0.1:65536", "127.0.0.1:94a0", "::1:9400",
                            "[::1]9400", "[::1:9400", "[1.2.3.4]:80", "a b:80", "127.0.0.1:123456"}) {
        try {
            parse_listen_address(bad);
            ADD_FAILURE() << bad << " was accepted";
        } catch (const Error& e) {
            EXPECT_EQ(e.kind(), ErrorKind::Usage) << bad;
            EXPECT_NE(std::string(e.what()).find("--listen"), std::string::npos) << bad;
            EXPECT_NE(e.advice().find("127.0.0.1:9400"), std::string::npos) << bad;
        }
    }
}

TEST(ListenAddress, OnlyLoopbackAddressesAreLoopback) {
    for (const char* h :
         {"127.0.0.1", "127.0.0.2", "127.255.255.254", "::1", "localhost", "LocalHost", "::ffff:127.0.0.1"})
        EXPECT_TRUE(is_loopback(h)) << h;
    for (const char* h : {"0.0.0.0", "::", "10.0.0.5", "192.168.1.2", "128.0.0.1", "::ffff:10.0.0.1", "fe80::1",
                          "gpu-node-1", "localhost.example.com", ""})
        EXPECT_FALSE(is_loopback(h)) << h;
}

TEST(CheckReport, KeepsMeasuredFiguresOnceAndRefusesOtherDocuments) {
    const std::string doc = R"({"tool": "gpuvet", "schema_version": 3, "verdict": "WARN", "checks": [
        {"key": "gpu.hbm", "gpu": 1, "verdict": "WARN", "measurements": [
            {"key": "copy_gbps", "unit": "GB/s", "value": 2900.5, "gpu": 1, "reference": {"spec": 3350, "fail_below": null}},
            {"key": "copy_gbps", "unit": "GB/s", "value": 1, "gpu": 1},
            {"key": "triad_gbps", "unit": "GB/s", "value": null, "absent_reason": "interrupted"}]},
        {"key": "host.cpu", "gpu": null, "verdict": "PASS", "measurements": []}]})";
    CheckReportSummary s = parse_check_report(doc, "r.json");
    EXPECT_EQ(s.run_verdict, "WARN");
    ASSERT_EQ(s.checks.size(), 2u);
    EXPECT_EQ(s.checks[0].gpu, 1);
    ASSERT_EQ(s.checks[0].measurements.size(), 1u);  // the repeat and the absent figure are left out
    EXPECT_EQ(s.checks[0].measurements[0].value, 2900.5);
    EXPECT_EQ(s.checks[0].measurements[0].spec, 3350);
    EXPECT_FALSE(s.checks[0].measurements[0].fail_below);
    EXPECT_FALSE(s.checks[1].gpu);
    for (const char* bad : {"[1]", "{\"tool\": \"nvidia-smi\", \"checks\": []}", "not json",
                            "{\"tool\": \"gpuvet\", \"checks\": [{\"key\": \"x\"}]}"})
        EXPECT_THROW(parse_check_report(bad, "r.json"), Error) << bad;
}

// An AMD GPU is written under the AMD Device Metrics Exporter's names and labels, beside an NVIDIA
// GPU under dcgm-exporter's; gpuvet's own series cover both.
TEST(ExportPage, AmdGpusUnderTheAmdExportersNames) {
    const auto now = Clock::now();
    ExportView v = one_gpu_view(now);
    MonitoredGpu amd;
    amd.index = 1;
    amd.facts.vendor = std::string("AMD");
    amd.facts.name = std::string("AMD Instinct MI300X");
    amd.facts.serial = std::string("PCB00052301001");
    amd.facts.compute_partition = std::string("SPX");
    amd.facts.memory_partition = std::string("NPS1");
    amd.facts.memory_total_bytes = std::uint64_t(206141652992);
    amd.facts.power_default_limit_w = 750.0;
    std::vector<MonitoredGpu> gpus = *v.gpus;
    gpus.push_back(amd);
    v.gpus = std::make_shared<const std::vector<MonitoredGpu>>(gpus);
    auto t = std::make_shared<MonitorTick>(*v.tick);
    GpuReading r;
    r.index = 1;
    r.sample.temperature_c = 42;
    r.sample.temperature_edge_c = Fact<int>::absent("not supported");
    r.sample.clock_sm_mhz = 132;
    r.sample.ras_blocks.push_back({"PCIE_BIF", std::uint64_t(3), std::uint64_t(0), std::uint64_t(0)});
    t->gpus.push_back(r);
    v.tick = t;
    std::string page = render_metrics(v, now, kSecond);
    const std::string labels =
        "{gpu_id=\"1\",serial_number=\"PCB00052301001\",card_model=\"AMD Instinct MI300X\","
        "gpu_compute_partition_type=\"SPX\",gpu_memory_partition_type=\"NPS1\",hostname=\"node1\"}";
    EXPECT_NE(page.find("gpu_junction_temperature" + labels + " 42\n"), std::string::npos) << page;
    EXPECT_NE(page.find("gpu_total_vram" + labels + " 196592\n"), std::string::npos) << page;
    EXPECT_NE(page.find("gpu_ecc_correct_bif" + labels + " 3\n"), std::string::npos) << page;
    EXPECT_NE(page.find("gpu_clock{gpu_id=\"1\""), std::string::npos);
    EXPECT_NE(page.find("clock_index=\"0\",clock_type=\"system\"} 132"), std::string::npos) << page;
    EXPECT_NE(page.find("gpuvet_power_default_limit_watts" + labels + " 750\n"), std::string::npos) << page;
    EXPECT_EQ(page.find("gpu_edge_temperature"), std::string::npos);  // absent: no series
    // The NVIDIA GPU keeps dcgm-exporter's names; the AMD one has none of them.
    EXPECT_NE(page.find("DCGM_FI_DEV_GPU_UTIL{gpu=\"0\""), std::string::npos);
    EXPECT_EQ(page.find("DCGM_FI_DEV_GPU_TEMP"), std::string::npos);
}
