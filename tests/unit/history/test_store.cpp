// The history store on a real SQLite file: recording, idempotent import, which box a run belongs
// to, a killed writer, concurrent writers, and where the file lives.
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
#include "host/persistent_ids.hpp"
#include "support/history_fixtures.hpp"

namespace gpuvet {
namespace {

using namespace history;
using test::at_day;
using test::box_report;
using test::BoxSpec;
using test::count;
using test::integrity;
using test::record;
using test::TempDb;

TEST(HistoryStore, RecordsARunWithItsGpusAndFigures) {
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

TEST(HistoryStore, TheSameReportTwiceIsOneEntry) {
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

TEST(HistoryStore, ANewHostnameWithTheSameGpusIsTheSameBox) {
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

TEST(HistoryStore, TheSameHostnameWithOtherGpusIsAnotherBox) {
    TempDb t;
    Store st(t.file, true);
    Recorded a = record(st, BoxSpec{});
    BoxSpec other = at_day(BoxSpec{}, 2);
    other.serials = {"1659999999991", "1659999999992"};
    Recorded b = record(st, other);
    EXPECT_NE(a.box, b.box);
    EXPECT_EQ(list_boxes(st.db()).size(), 2u);
}

// A writer killed with SIGKILL in the middle of recording a run: the child commits two runs, then
// writes a third inside an open transaction (its rows, GPUs and figures all written, nothing
// committed), tells the parent through a pipe and waits; the parent kills it right there. The
// database must be consistent, the two runs whole and the third absent.
TEST(HistoryStore, AKilledWriterLeavesAConsistentDatabase) {
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

TEST(HistoryStore, TwoConcurrentWritersBothLand) {
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

TEST(HistoryStore, PathFollowsTheFlagTheEnvironmentAndXdg) {
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
