// The exporter's request parser: what a scrape sends is answered, what a hostile client sends is
// refused with the right status, and nothing in a request's body is read as a second request.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "core/error.hpp"
#include "monitor/export_check_report.hpp"
#include "monitor/export_server.hpp"

using namespace gpuvet;
using P = HttpRequest::Parse;

TEST(ExportHttp, AScrapeAndPipelinedRequests) {
    std::string two =
        "GET /metrics HTTP/1.1\r\nHost: x\r\nAccept-Encoding: gzip\r\n\r\nGET /healthz?x=1 HTTP/1.1\r\n\r\n";
    HttpRequest a = parse_http_request(two);
    ASSERT_EQ(a.state, P::Complete);
    EXPECT_EQ(a.method, "GET");
    EXPECT_EQ(a.path, "/metrics");
    EXPECT_TRUE(a.keep_alive);
    HttpRequest b = parse_http_request(std::string_view(two).substr(a.consumed));
    ASSERT_EQ(b.state, P::Complete);
    EXPECT_EQ(b.path, "/healthz");
    EXPECT_EQ(a.consumed + b.consumed, two.size());
    EXPECT_FALSE(parse_http_request("GET / HTTP/1.0\r\n\r\n").keep_alive);
    EXPECT_TRUE(parse_http_request("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n").keep_alive);
    EXPECT_FALSE(parse_http_request("GET / HTTP/1.1\r\nConnection: Close\r\n\r\n").keep_alive);
}

TEST(ExportHttp, PartialHeadersWaitAndHostileOnesAreRefused) {
    EXPECT_EQ(parse_http_request("GET /metrics HTTP/1.1\r\nHost: x\r\nX-Slow: 1\r\n").state, P::Incomplete);
    for (const char* bad : {"GET /metrics HTTP/2.0\r\n\r\n", "GET /metrics\r\n\r\n", "GET  / HTTP/1.1\r\n\r\n",
                            "GET /a\x01 HTTP/1.1\r\n\r\n", "GET http://x/ HTTP/1.1\r\n\r\n", "GET / HTTP/1.1\n\n",
                            "GET / HTTP/1.1\r\nbad header\r\n\r\n", "GET / HTTP/1.1\r\nContent-Length: 5\r\n\r\n",
                            "GET / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", "\x16\x03\x01\x02\r\n\r\n"})
        EXPECT_EQ(parse_http_request(bad).state, P::Bad) << bad;
    EXPECT_EQ(parse_http_request("GET / HTTP/1.1\r\nContent-Length: 0\r\n\r\n").state, P::Complete);
    EXPECT_EQ(parse_http_request("GET /" + std::string(kMaxTargetBytes + 100, 'a') + " HTTP/1.1\r\n\r\n").state,
              P::TargetTooLong);
    EXPECT_EQ(parse_http_request("GET /" + std::string(kMaxTargetBytes + 100, 'a')).state, P::TargetTooLong);
    std::string big = "GET / HTTP/1.1\r\n";
    while (big.size() <= kMaxHeaderBytes) big += "X-Big: " + std::string(1000, 'b') + "\r\n";
    EXPECT_EQ(parse_http_request(big).state, P::TooLarge);
    EXPECT_EQ(parse_http_request(big + "\r\n").state, P::TooLarge);
}

TEST(ExportHealth, EveryGpuLostIsNotHealthy) {
    const auto now = std::chrono::steady_clock::now();
    ExportView v;
    auto tick = std::make_shared<MonitorTick>();
    tick->gpus.resize(2);
    tick->gpus[0].lost = tick->gpus[1].lost = true;
    v.tick = tick;
    v.tick_done = now;
    HealthAnswer all = health_answer({SamplerHealth::Running, ""}, v, now, std::chrono::seconds(1));
    EXPECT_EQ(all.status, 503);
    EXPECT_EQ(all.body.rfind("lost: every GPU is lost", 0), 0u) << all.body;
    tick->gpus[1].lost = false;
    EXPECT_EQ(health_answer({SamplerHealth::Running, ""}, v, now, std::chrono::seconds(1)).status, 200);
}

TEST(ExportCheckReport, RepeatsAndImpossibleGpusAreRefused) {
    const std::string head = R"({"tool": "gpuvet", "schema_version": 3, "verdict": "PASS", "checks": [)";
    const std::string one = R"({"key": "gpu.health", "gpu": 1, "verdict": "PASS"})";
    EXPECT_EQ(parse_check_report(head + one + "]}", "r.json").checks.size(), 1u);
    EXPECT_THROW(parse_check_report(head + one + "," + one + "]}", "r.json"), Error);
    EXPECT_THROW(
        parse_check_report(head + R"({"key": "gpu.health", "gpu": 1099511627776, "verdict": "PASS"}]})", "r.json"),
        Error);
    EXPECT_THROW(parse_check_report(head + R"({"key": "gpu.health", "gpu": -1, "verdict": "PASS"}]})", "r.json"),
                 Error);
}

TEST(ExportCheckReport, AReplacementWithTheSameSizeAndMtimeIsSeen) {
    namespace fs = std::filesystem;
    std::string t = (fs::temp_directory_path() / "gpuvet-cr-XXXXXX").string();
    fs::path dir = ::mkdtemp(t.data());
    auto write = [&](const fs::path& p, const std::string& verdict) {
        std::ofstream(p) << R"({"tool": "gpuvet", "schema_version": 3, "verdict": ")" << verdict
                         << R"(", "checks": [{"key": "gpu.health", "gpu": 0, "verdict": ")" << verdict << R"("}]})";
    };
    write(dir / "cr.json", "PASS");
    CheckReportWatch w(dir / "cr.json");
    w.load();
    EXPECT_EQ(w.summary()->run_verdict, "PASS");
    EXPECT_FALSE(w.refresh());
    write(dir / "new.json", "FAIL");                                              // same length as PASS
    fs::last_write_time(dir / "new.json", fs::last_write_time(dir / "cr.json"));  // as cp -p, rsync -t
    fs::rename(dir / "new.json", dir / "cr.json");
    EXPECT_TRUE(w.refresh());
    EXPECT_EQ(w.summary()->run_verdict, "FAIL");
    fs::remove_all(dir);
}
