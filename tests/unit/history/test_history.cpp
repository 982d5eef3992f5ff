// The history on a real SQLite file: recording, idempotent import, identity, migration from the
// first schema, a killed writer, concurrent writers, and the drift and swap findings.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "core/error.hpp"
#include "history/diff.hpp"
#include "history/drift_input.hpp"
#include "history/queries.hpp"
#include "history/schema.hpp"
#include "history/store.hpp"
#include "support/history_fixtures.hpp"
#include "host/persistent_ids.hpp"

namespace gpuvet {
namespace {

using namespace history;
using test::box_report;
using test::BoxSpec;
using test::TempDb;

std::int64_t count(Database& db, const std::string& table) {
    Statement s = db.prepare("SELECT count(*) FROM " + table);
    s.step();
    return s.int64(0);
}

std::string integrity(Database& db) {
    Statement s = db.prepare("PRAGMA integrity_check");
    s.step();
    return s.text(0);
}

Recorded record(Store& st, const BoxSpec& b) { return st.record(record_of(box_report(b)), "recorded"); }

BoxSpec at_day(BoxSpec b, int day) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "2026-11-%02dT10:00:00Z", day);
    b.started_at = buf;
    return b;
}

TEST(History, RecordsARunWithItsGpusAndFigures) {
    TempDb t;
    Store st(t.file, true);
    Recorded r = record(st, BoxSpec{});
    EXPECT_TRUE(r.added);
    EXPECT_EQ(r.box.rfind("box-", 0), 0u);
    EXPECT_EQ(schema_version(st.db()), kDatabaseVersion);
    auto boxes = list_boxes(st.db());
    ASSERT_EQ(boxes.size(), 1u);
    EXPECT_EQ(boxes[0].gpus, 2);
    EXPECT_EQ(boxes[0].hostname.value_or(""), "node-a");
    EXPECT_EQ(boxes[0].last_verdict, "PASS");
    auto gpus = list_gpus(st.db());
    ASSERT_EQ(gpus.size(), 2u);
    EXPECT_EQ(gpus[0].serial.value_or(""), "1650000000001");
    EXPECT_EQ(count(st.db(), "figures"), 6);  // three numeric figures per GPU
}

TEST(History, TheSameReportTwiceIsOneEntry) {
    TempDb t;
    Store st(t.file, true);
    Report r = box_report(BoxSpec{});
    EXPECT_TRUE(st.record(record_of(r), "recorded").added);
    Recorded again = st.record(record_of(r), "imported");
    EXPECT_FALSE(again.added);
    EXPECT_EQ(count(st.db(), "runs"), 1);
    EXPECT_EQ(count(st.db(), "figures"), 6);
    EXPECT_EQ(digest_of(r), record_of(r).digest);
}

TEST(History, ANewHostnameWithTheSameGpusIsTheSameBox) {
    TempDb t;
    Store st(t.file, true);
    Recorded a = record(st, BoxSpec{});
    BoxSpec renamed = at_day(BoxSpec{}, 2);
    renamed.hostname = "gpu-rental-7731";
    Recorded b = record(st, renamed);
    EXPECT_EQ(a.box, b.box);
    EXPECT_EQ(b.matched_by, "GPUs");
    EXPECT_EQ(list_boxes(st.db()).size(), 1u);
    EXPECT_EQ(find_box(st.db(), "gpu-rental-7731"), find_box(st.db(), "node-a"));
}

TEST(History, TheSameHostnameWithOtherGpusIsAnotherBox) {
    TempDb t;
    Store st(t.file, true);
    Recorded a = record(st, BoxSpec{});
    BoxSpec other = at_day(BoxSpec{}, 2);
    other.serials = {"1659999999991", "1659999999992"};
    Recorded b = record(st, other);
    EXPECT_NE(a.box, b.box);
    EXPECT_EQ(list_boxes(st.db()).size(), 2u);
}

TEST(History, OneCardSwappedKeepsTheBoxAndIsFound) {
    TempDb t;
    Store st(t.file, true);
    BoxSpec b;
    b.serials = {"1650000000001", "1650000000002", "1650000000003", "1650000000004"};
    Recorded first = record(st, b);
    BoxSpec swapped = at_day(b, 3);
    swapped.serials[2] = "1657777777777";
    RunRecord now = record_of(box_report(swapped));
    CheckResult r = judge_drift(drift_input(st.db(), now));
    ASSERT_EQ(r.verdict, Verdict::Warn) << r.summary;
    ASSERT_EQ(r.findings.size(), 1u);
    const std::string& text = r.findings[0].text;
    EXPECT_NE(text.find("slot 00000000:12:00.0"), std::string::npos) << text;
    EXPECT_NE(text.find("serial 1650000000003 on 2026-11-01"), std::string::npos) << text;
    EXPECT_NE(text.find("serial 1657777777777"), std::string::npos) << text;
    EXPECT_NE(text.find("replaced"), std::string::npos) << text;
    EXPECT_EQ(st.record(now, "recorded").box, first.box);
}

TEST(History, ADegradingBandwidthSeriesIsDriftAboveTheFloor) {
    TempDb t;
    Store st(t.file, true);
    const double series[] = {3010, 2995, 3004, 2990, 3001};
    for (int i = 0; i < 5; ++i) {
        BoxSpec b = at_day(BoxSpec{}, i + 1);
        b.copy_gbps = series[i];
        record(st, b);
    }
    BoxSpec now = at_day(BoxSpec{}, 10);
    now.copy_gbps = 2740;  // 8.6% below the median, still above the 2345 floor
    CheckResult r = judge_drift(drift_input(st.db(), record_of(box_report(now))));
    ASSERT_EQ(r.verdict, Verdict::Warn);
    ASSERT_EQ(r.findings.size(), 2u);  // both GPUs
    const std::string& text = r.findings[0].text;
    EXPECT_NE(text.find("GPU 0 (serial 1650000000001): gpu.memory_bandwidth.copy_gbps 2740 GB/s is 8.7"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("median of 3001 GB/s over 5 runs (2026-11-01 to 2026-11-05; margin 5%)"), std::string::npos)
        << text;
}

TEST(History, NoiseWithinTheGpusOwnSpreadDoesNotAlarm) {
    TempDb t;
    Store st(t.file, true);
    // A GPU whose own figures scatter by about 4%: a 6% dip is inside 3 robust deviations.
    const double series[] = {3000, 2880, 3120, 2900, 3100, 2950};
    for (int i = 0; i < 6; ++i) {
        BoxSpec b = at_day(BoxSpec{}, i + 1);
        b.copy_gbps = series[i];
        record(st, b);
    }
    BoxSpec now = at_day(BoxSpec{}, 10);
    now.copy_gbps = 2800;
    CheckResult r = judge_drift(drift_input(st.db(), record_of(box_report(now))));
    EXPECT_EQ(r.verdict, Verdict::Pass) << (r.findings.empty() ? r.summary : r.findings[0].text);
    EXPECT_GT(drift_margin({3000, 2880, 3120, 2900, 3100, 2950}), 0.066);
    EXPECT_DOUBLE_EQ(drift_margin({3000, 3000, 3000}), kDriftMargin);
}

TEST(History, TooFewEarlierRunsAreNoDrift) {
    TempDb t;
    Store st(t.file, true);
    record(st, BoxSpec{});
    BoxSpec now = at_day(BoxSpec{}, 2);
    now.copy_gbps = 2500;
    CheckResult r = judge_drift(drift_input(st.db(), record_of(box_report(now))));
    EXPECT_EQ(r.verdict, Verdict::Pass);  // compared, but one earlier run is no baseline
}

TEST(History, ARisingThermalPeakIsNamedWithDates) {
    TempDb t;
    Store st(t.file, true);
    const double peaks[] = {71, 71, 75, 80};
    for (int i = 0; i < 4; ++i) {
        BoxSpec b = at_day(BoxSpec{}, i + 1);
        b.peak_c = peaks[i];
        record(st, b);
    }
    BoxSpec now = at_day(BoxSpec{}, 5);
    now.peak_c = 86;
    CheckResult r = judge_drift(drift_input(st.db(), record_of(box_report(now))));
    ASSERT_EQ(r.verdict, Verdict::Warn);
    const std::string& text = r.findings.at(0).text;
    EXPECT_NE(text.find("peak temperature rose run after run: 75 C on 2026-11-03, 80 C on 2026-11-04, 86 C on "
                        "2026-11-05 (+11 C)"),
              std::string::npos)
        << text;
}

TEST(History, AFlatThermalPeakIsNotRising) {
    TempDb t;
    Store st(t.file, true);
    const double peaks[] = {75, 71, 72};
    for (int i = 0; i < 3; ++i) {
        BoxSpec b = at_day(BoxSpec{}, i + 1);
        b.peak_c = peaks[i];
        record(st, b);
    }
    BoxSpec now = at_day(BoxSpec{}, 5);
    now.peak_c = 73;  // 71, 72, 73: rising, but by 2 C only
    EXPECT_EQ(judge_drift(drift_input(st.db(), record_of(box_report(now)))).verdict, Verdict::Pass);
}

TEST(History, NewRemappedRowsSinceTheLastRun) {
    TempDb t;
    Store st(t.file, true);
    BoxSpec b;
    b.remapped_rows = 2;
    record(st, b);
    BoxSpec now = at_day(b, 4);
    now.remapped_rows = 5;
    CheckResult r = judge_drift(drift_input(st.db(), record_of(box_report(now))));
    ASSERT_EQ(r.verdict, Verdict::Warn);
    EXPECT_NE(
        r.findings.at(0).text.find("gpu.health.remapped_rows_correctable rose from 2 on 2026-11-01 to 5 now (+3)"),
        std::string::npos)
        << r.findings.at(0).text;
}

TEST(History, TheFirstRunHasNothingToCompare) {
    TempDb t;
    Store st(t.file, true);
    CheckResult r = judge_drift(drift_input(st.db(), record_of(box_report(BoxSpec{}))));
    EXPECT_EQ(r.verdict, Verdict::Skip);
    EXPECT_NE(r.summary.find("first reference"), std::string::npos);
}

TEST(History, MigratesFromTheFirstSchema) {
    TempDb t;
    {
        Database db(t.file, true, kBusyTimeoutMs);
        migrate(db, 1);
        ASSERT_EQ(schema_version(db), 1);
        // A run as the first schema stored it.
        db.exec(
            "INSERT INTO boxes(id, name, first_seen, last_seen) VALUES(1, 'box-00000001', '2026-10-01T00:00:00Z', "
            "'2026-10-01T00:00:00Z');"
            "INSERT INTO box_ids VALUES(1, 'hostname', 'old-node');"
            "INSERT INTO gpus(id, key, uuid, serial, name, first_seen, last_seen) VALUES(1, 'GPU-1650000000001', "
            "'GPU-1650000000001', '1650000000001', 'H100', '2026-10-01T00:00:00Z', '2026-10-01T00:00:00Z');"
            "INSERT INTO runs VALUES(1, 'abcdef0123456789', 1, 'check', '2026-10-01T00:00:00Z', "
            "'2026-10-01T00:05:00Z', 'PASS', 0, 'old-node', '570.86.15', '0.1.0', 'recorded');"
            "INSERT INTO run_gpus VALUES(1, 1, 0, '00000000:0a:00.0', 'H100', NULL, 'h100-sxm-80gb', 'PASS');"
            "INSERT INTO figures VALUES(1, 1, 'gpu.memory_bandwidth.copy_gbps', 3005, 'GB/s', 3350, 2345, NULL);");
    }
    Store st(t.file, false);  // opening migrates
    EXPECT_EQ(schema_version(st.db()), kDatabaseVersion);
    EXPECT_EQ(count(st.db(), "findings"), 0);
    auto points = trend(st.db(), "gpu.memory_bandwidth.copy_gbps", find_gpu(st.db(), "1650000000001"), std::nullopt);
    ASSERT_EQ(points.size(), 1u);
    EXPECT_EQ(points[0].value, 3005);
    // The old run still anchors the box: the same GPU under a new hostname joins it.
    BoxSpec b;
    b.serials = {"1650000000001"};
    EXPECT_EQ(record(st, b).box, "box-00000001");
}

TEST(History, RefusesASchemaFromANewerGpuvet) {
    TempDb t;
    {
        Database db(t.file, true, kBusyTimeoutMs);
        db.exec("PRAGMA user_version = 99");
    }
    try {
        Store st(t.file, false);
        FAIL() << "opened a schema 99 database";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("schema version 99, newer than this gpuvet's"), std::string::npos);
    }
}

// A writer killed with SIGKILL in the middle of recording a run: the child commits two runs, then
// writes a third inside an open transaction (its rows, GPUs and figures all written, nothing
// committed), tells the parent through a pipe and waits; the parent kills it right there. The
// database must be consistent, the two runs whole and the third absent.
TEST(History, AKilledWriterLeavesAConsistentDatabase) {
    TempDb t;
    { Store st(t.file, true); }
    int ready[2];
    ASSERT_EQ(::pipe(ready), 0);
    BoxSpec partial = at_day(BoxSpec{}, 3);
    partial.command = "burn";
    const std::string partial_digest = record_of(box_report(partial)).digest;
    pid_t child = ::fork();
    if (child == 0) {
        ::close(ready[0]);
        try {
            Store st(t.file, true);
            record(st, at_day(BoxSpec{}, 1));
            record(st, at_day(BoxSpec{}, 2));
            Transaction open(st.db());
            st.record_within(record_of(box_report(partial)), "recorded");
            char byte = 1;
            if (::write(ready[1], &byte, 1) == 1)
                for (;;) ::pause();  // holding the transaction until the parent's SIGKILL
        } catch (...) {}
        ::_exit(1);  // never back into the test runner
    }
    ASSERT_GT(child, 0);
    ::close(ready[1]);
    char byte = 0;
    ssize_t got = ::read(ready[0], &byte, 1);  // 0 (end of file): the child failed before the point
    ::close(ready[0]);
    // The journal is hot: the killed writer's half-written transaction is in the file right now.
    const bool journal = std::filesystem::exists(t.file.string() + "-journal");
    ::kill(child, SIGKILL);
    int status = 0;
    ::waitpid(child, &status, 0);
    ASSERT_EQ(got, 1) << "the writer did not reach its open transaction";
    ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    EXPECT_TRUE(journal) << "the writer was not inside a transaction when it was killed";

    Store st(t.file, false);  // the next connection rolls the hot journal back
    EXPECT_EQ(integrity(st.db()), "ok");
    EXPECT_EQ(count(st.db(), "runs"), 2);
    EXPECT_EQ(count(st.db(), "run_gpus"), 4);  // both runs with their GPUs
    EXPECT_EQ(count(st.db(), "figures"), 12);  // and every figure; none of the third run's
    Statement s = st.db().prepare("SELECT count(*) FROM runs WHERE digest = ?1 OR command = 'burn'");
    s.bind(1, partial_digest);
    s.step();
    EXPECT_EQ(s.int64(0), 0) << "the killed writer's run is in the history";
    EXPECT_TRUE(record(st, partial).added);  // and it can be recorded whole now
}

TEST(History, TwoConcurrentWritersBothLand) {
    TempDb t;
    { Store st(t.file, true); }
    pid_t kids[2];
    for (int k = 0; k < 2; ++k) {
        kids[k] = ::fork();
        if (kids[k] == 0) {
            int code = 0;
            try {
                Store st(t.file, true);
                for (int i = 0; i < 15; ++i) {
                    BoxSpec b = at_day(BoxSpec{}, 1 + i);
                    b.hostname = "writer-" + std::to_string(k);
                    b.serials = {"16500000" + std::to_string(k) + "0001"};
                    record(st, b);
                }
            } catch (...) {
                code = 1;
            }
            ::_exit(code);
        }
    }
    for (pid_t kid : kids) {
        int status = 0;
        ::waitpid(kid, &status, 0);
        EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    Store st(t.file, false);
    EXPECT_EQ(integrity(st.db()), "ok");
    EXPECT_EQ(count(st.db(), "runs"), 30);
    EXPECT_EQ(list_boxes(st.db()).size(), 2u);
}

TEST(History, DiffNamesReplacedGpusDriverAndMovedFigures) {
    TempDb t;
    Store st(t.file, true);
    record(st, BoxSpec{});
    BoxSpec now = at_day(BoxSpec{}, 2);
    now.serials[1] = "1658888888888";
    now.copy_gbps = 2700;
    Report r = box_report(now);
    r.machine.driver.driver_version = "580.65.06";
    st.record(record_of(r), "recorded");
    auto runs = runs_of_box(st.db(), *find_box(st.db(), "node-a"));
    ASSERT_EQ(runs.size(), 2u);
    RunDiff d = diff_runs(snapshot(st.db(), runs[0].id), snapshot(st.db(), runs[1].id),
                          [](const std::string&, const std::string&) { return std::vector<double>{}; });
    ASSERT_EQ(d.hardware.size(), 2u);
    EXPECT_NE(d.hardware[0].find("replaced in slot 00000000:11:00.0: serial 1650000000002"), std::string::npos)
        << d.hardware[0];
    EXPECT_EQ(d.hardware[1], "driver: 570.86.15 -> 580.65.06");
    ASSERT_EQ(d.figures.size(), 1u);  // GPU 0's bandwidth; GPU 1 is another card
    EXPECT_EQ(d.figures[0].metric, "gpu.memory_bandwidth.copy_gbps");
    EXPECT_NEAR(d.figures[0].change_percent, -10, 1e-9);
    EXPECT_TRUE(d.figures[0].worse);
}

TEST(History, IdentityRulesInOrder) {
    BoxEvidence a{1, {"GPU-1", "GPU-2", "GPU-3", "GPU-4"}, {"uuid-a"}, {}, {}, {"a"}};
    BoxEvidence b{2, {"GPU-5"}, {"uuid-b"}, {}, {"node17"}, {"b"}};
    // Half the GPUs are enough; fewer are not.
    EXPECT_EQ(match_box({{"GPU-1", "GPU-2", "GPU-8", "GPU-9"}, {}, {}, {}, {}}, {a, b})->by, "GPUs");
    EXPECT_FALSE(match_box({{"GPU-1", "GPU-7", "GPU-8", "GPU-9"}, {}, {}, {}, {}}, {a, b}));
    // Every GPU replaced in the same chassis: the firmware says which.
    auto m = match_box({{"GPU-7"}, std::string("uuid-a"), {}, {}, {}}, {a, b});
    ASSERT_TRUE(m);
    EXPECT_EQ(m->id, 1);
    EXPECT_EQ(m->by, "SMBIOS system UUID");
    EXPECT_EQ(match_box({{"GPU-7"}, {}, {}, std::string("node17"), {}}, {a, b})->id, 2);
    // A hostname alone speaks only for host-only runs.
    EXPECT_FALSE(match_box({{"GPU-7"}, {}, {}, {}, std::string("a")}, {a, b}));
}

TEST(History, FirmwarePlaceholdersIdentifyNothing) {
    for (const char* filler : {"To be filled by O.E.M.", "Default string", "00000000-0000-0000-0000-000000000000",
                               "FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF", "Not Specified", "  ", "System Serial Number"})
        EXPECT_FALSE(meaningful_firmware_id(filler)) << filler;
    EXPECT_EQ(meaningful_firmware_id(" 4c4c4544-0042-3510-8051-b3c04f4d4e32 ").value_or(""),
              "4c4c4544-0042-3510-8051-b3c04f4d4e32");
}

TEST(History, PathFollowsTheFlagTheEnvironmentAndXdg) {
    std::string home = std::getenv("HOME") ? std::getenv("HOME") : "";
    EXPECT_EQ(history_path(std::string("/x/h.sqlite"))->string(), "/x/h.sqlite");
    ::setenv("GPUVET_HISTORY_DB", "/env/h.sqlite", 1);
    EXPECT_EQ(history_path(std::nullopt)->string(), "/env/h.sqlite");
    ::unsetenv("GPUVET_HISTORY_DB");
    ::setenv("XDG_DATA_HOME", "/xdg", 1);
    EXPECT_EQ(history_path(std::nullopt)->string(), "/xdg/gpuvet/history.sqlite");
    ::setenv("XDG_DATA_HOME", "relative", 1);  // invalid by the specification: ignored
    ::setenv("HOME", "/home/u", 1);
    EXPECT_EQ(history_path(std::nullopt)->string(), "/home/u/.local/share/gpuvet/history.sqlite");
    ::unsetenv("XDG_DATA_HOME");
    ::setenv("HOME", home.c_str(), 1);
}

}  // namespace
}  // namespace gpuvet
