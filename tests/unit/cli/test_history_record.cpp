// The history on a real SQLite file, continued: what makes runs comparable (tier, burn length,
// command), the migration from schema 2, a hostname that moved to other GPUs, firmware and GPU
// count in the diff, a run of some GPUs only, `gpuvet run`'s record, and the box's history that
// the HTML report shows.
#include <gtest/gtest.h>

#include <cmath>

#include "cli/history_record.hpp"
#include "history/box_history.hpp"
#include "history/diff.hpp"
#include "history/drift_input.hpp"
#include "history/queries.hpp"
#include "history/schema.hpp"
#include "history/store.hpp"
#include "support/history_fixtures.hpp"
#include "core/run_result.hpp"
#include "report/history_view.hpp"
#include "report/html_report.hpp"

namespace gpuvet {
namespace {

using namespace history;
using test::box_report;
using test::BoxSpec;
using test::record;
using test::TempDb;

std::int64_t count(Database& db, const std::string& sql) {
    Statement s = db.prepare(sql);
    s.step();
    return s.int64(0);
}

BoxSpec on_day(BoxSpec b, int day) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "2026-11-%02dT10:00:00Z", day);
    b.started_at = buf;
    return b;
}

// A check at a tier with a burn of `burn_s` seconds that peaked at `peak_c`.
BoxSpec check_at(const char* tier, double burn_s, double peak_c, int day) {
    BoxSpec b = on_day(BoxSpec{}, day);
    b.argv = {"gpuvet", "check"};
    if (std::string(tier) != "standard") b.argv.push_back(std::string("--") + tier);
    b.burn_s = burn_s;
    b.peak_c = peak_c;
    return b;
}

CheckResult drift_of(Store& st, const BoxSpec& now) {
    return judge_drift(drift_input(st.db(), record_of(box_report(now))));
}

std::string all_findings(const CheckResult& r) {
    std::string s = r.summary;
    for (const Finding& f : r.findings) s += "\n" + f.text;
    return s;
}

TEST(HistoryKinds, TheTierComesFromTheCommandsOwnWords) {
    EXPECT_EQ(tier_of("check", {"gpuvet", "check", "--quick"}).value_or(""), "quick");
    EXPECT_EQ(tier_of("bench", {"gpuvet", "bench", "memory", "--full"}).value_or(""), "full");
    EXPECT_EQ(tier_of("check", {"gpuvet", "check"}).value_or(""), "standard");
    EXPECT_FALSE(tier_of("burn", {"gpuvet", "burn", "--duration", "20s"}));
    EXPECT_FALSE(tier_of("run", {"gpuvet", "run", "--", "sleep", "1"}));
    RunRecord rec = record_of(box_report(check_at("quick", 20.4, 60, 1)));
    EXPECT_EQ(rec.tier.value_or(""), "quick");
    EXPECT_DOUBLE_EQ(rec.burn_duration_s.value_or(0), 20.4);
}

TEST(HistoryKinds, ComparableRunsAreTheSameCommandTierAndBurnLength) {
    const std::string peak = "gpu.burn.temperature_peak_c", bw = "gpu.memory_bandwidth.copy_gbps";
    RunKind full{"check", "full", 600}, quick{"check", "quick", 20};
    EXPECT_TRUE(comparable(full, {"check", "full", 590}, peak));
    EXPECT_FALSE(comparable(full, quick, peak));
    EXPECT_FALSE(comparable(full, quick, bw));                            // another tier
    EXPECT_FALSE(comparable(full, {"bench", "full", std::nullopt}, bw));  // another command
    EXPECT_TRUE(comparable(full, {"check", kUnknownTier, 600}, bw));      // recorded before tiers were kept
    EXPECT_FALSE(comparable({"burn", {}, 60}, {"burn", {}, 600}, peak));
    EXPECT_TRUE(comparable({"burn", {}, 60}, {"burn", {}, 66}, peak));
    EXPECT_TRUE(comparable({"burn", {}, 60}, {"burn", {}, 600}, bw));  // only the burn's own figures
    // A lifetime counter counts whatever ran.
    EXPECT_TRUE(comparable(full, {"burn", {}, 20}, "gpu.health.remapped_rows_correctable"));
}

TEST(HistoryKinds, AQuickBurnThenAFullOneIsNoRisingPeak) {
    TempDb t;
    Store st(t.file, true);
    record(st, check_at("quick", 20, 60, 1));
    record(st, check_at("quick", 20, 65, 2));
    // Before tiers were told apart, 60, 65, 84 read as a peak rising by 24 C.
    CheckResult r = drift_of(st, check_at("full", 600, 84, 3));
    EXPECT_NE(r.verdict, Verdict::Warn) << all_findings(r);
    EXPECT_EQ(all_findings(r).find("rose run after run"), std::string::npos) << all_findings(r);
}

TEST(HistoryKinds, ARisingPeakAmongFullBurnsIsFoundPastTheQuickOnes) {
    TempDb t;
    Store st(t.file, true);
    record(st, check_at("full", 600, 75, 1));
    record(st, check_at("quick", 20, 58, 2));
    record(st, check_at("full", 600, 80, 3));
    record(st, check_at("quick", 20, 59, 4));
    CheckResult r = drift_of(st, check_at("full", 600, 86, 5));
    ASSERT_EQ(r.verdict, Verdict::Warn) << all_findings(r);
    EXPECT_NE(all_findings(r).find("75 C on 2026-11-01, 80 C on 2026-11-03, 86 C on 2026-11-05 (+11 C)"),
              std::string::npos)
        << all_findings(r);
}

TEST(HistoryKinds, ABenchFigureIsNoBaselineForACheck) {
    TempDb t;
    Store st(t.file, true);
    for (int d = 1; d <= 4; ++d) {
        BoxSpec b = on_day(BoxSpec{}, d);
        b.command = "bench";
        b.copy_gbps = 3300;
        record(st, b);
    }
    BoxSpec now = on_day(BoxSpec{}, 6);
    now.copy_gbps = 3000;  // 9% below the bench's median: a different measurement, not drift
    CheckResult r = drift_of(st, now);
    EXPECT_EQ(all_findings(r).find("below its own median"), std::string::npos) << all_findings(r);
}

TEST(HistoryKinds, MigratesFromSchemaTwo) {
    TempDb t;
    {
        Database db(t.file, true, kBusyTimeoutMs);
        migrate(db, 2);
        ASSERT_EQ(schema_version(db), 2);
        // A check with a 60 s burn and a burn run, as schema 2 stored them.
        db.exec(
            "INSERT INTO boxes(id, name, first_seen, last_seen) VALUES(1, 'box-00000002', '2026-10-01T00:00:00Z', "
            "'2026-10-02T00:00:00Z');"
            "INSERT INTO gpus(id, key, uuid, serial, name, first_seen, last_seen) VALUES(1, 'GPU-1650000000001', "
            "'GPU-1650000000001', '1650000000001', 'NVIDIA H100 80GB HBM3', '2026-10-01T00:00:00Z', "
            "'2026-10-02T00:00:00Z');"
            "INSERT INTO runs VALUES(1, 'aaaa000000000001', 1, 'check', '2026-10-01T00:00:00Z', "
            "'2026-10-01T00:05:00Z', 'PASS', 0, 'node-a', '570.86.15', '0.1.0', 'recorded');"
            "INSERT INTO runs VALUES(2, 'aaaa000000000002', 1, 'burn', '2026-10-02T00:00:00Z', "
            "'2026-10-02T00:10:00Z', 'PASS', 0, 'node-a', '570.86.15', '0.1.0', 'recorded');"
            "INSERT INTO run_gpus VALUES(1, 1, 0, '00000000:10:00.0', 'NVIDIA H100 80GB HBM3', NULL, NULL, 'PASS');"
            "INSERT INTO run_gpus VALUES(2, 1, 0, '00000000:10:00.0', 'NVIDIA H100 80GB HBM3', NULL, NULL, 'PASS');"
            "INSERT INTO figures VALUES(1, 1, 'gpu.burn.load_duration_s', 60.2, 's', NULL, NULL, NULL);"
            "INSERT INTO figures VALUES(1, 1, 'gpu.memory_bandwidth.copy_gbps', 3005, 'GB/s', 3350, 2345, NULL);"
            "INSERT INTO figures VALUES(2, 1, 'gpu.burn.load_duration_s', 600.1, 's', NULL, NULL, NULL);"
            "INSERT INTO findings VALUES(2, 1, 'gpu.burn', 'WARN', 'a finding kept across the migration');");
    }
    Store st(t.file, false);  // opening migrates
    EXPECT_EQ(schema_version(st.db()), 3);
    EXPECT_EQ(count(st.db(), "SELECT count(*) FROM findings"), 1);
    auto runs = runs_of_box(st.db(), 1);
    ASSERT_EQ(runs.size(), 2u);
    EXPECT_EQ(runs[0].tier.value_or(""), kUnknownTier);  // a check of unknown tier
    EXPECT_DOUBLE_EQ(runs[0].burn_duration_s.value_or(0), 60.2);
    EXPECT_FALSE(runs[1].tier);  // burn has no tier
    EXPECT_DOUBLE_EQ(runs[1].burn_duration_s.value_or(0), 600.1);
    EXPECT_FALSE(runs[0].cuda_driver_version);
    EXPECT_FALSE(snapshot(st.db(), 1).gpus.at(0).inforom_version);
    // The old check still counts as a baseline for a new one at any tier.
    BoxSpec b;
    b.serials = {"1650000000001"};
    b.argv = {"gpuvet", "check", "--full"};
    b.inforom = "G520.0200.00.05";
    b.cuda_driver_version = 12080;
    RunRecord now = record_of(box_report(b));
    auto in = drift_input(st.db(), now);
    ASSERT_EQ(in.gpus.size(), 1u);
    bool compared = false;
    for (const auto& f : in.gpus[0].figures)
        if (f.metric == "gpu.memory_bandwidth.copy_gbps") compared = f.earlier.size() == 1;
    EXPECT_TRUE(compared);
    EXPECT_EQ(st.record(now, "recorded").box, "box-00000002");
    auto latest = runs_of_box(st.db(), 1).back();
    EXPECT_EQ(latest.tier.value_or(""), "full");
    EXPECT_EQ(latest.cuda_driver_version.value_or(0), 12080);
    EXPECT_EQ(snapshot(st.db(), latest.id).gpus.at(0).inforom_version.value_or(""), "G520.0200.00.05");
}

TEST(HistoryKinds, AHostnameNowOnOtherGpusIsSaid) {
    TempDb t;
    Store st(t.file, true);
    Recorded first = record(st, on_day(BoxSpec{}, 1));
    record(st, on_day(BoxSpec{}, 4));
    BoxSpec other = on_day(BoxSpec{}, 9);
    other.serials = {"1659999999991", "1659999999992"};
    CheckResult r = drift_of(st, other);
    EXPECT_EQ(r.verdict, Verdict::Skip);  // a new box: nothing to compare, but not silent
    ASSERT_EQ(r.findings.size(), 1u);
    EXPECT_EQ(r.findings[0].verdict, Verdict::Pass);  // informational
    EXPECT_EQ(r.findings[0].text,
              "hostname node-a was " + first.box + " until 2026-11-04 with other GPUs: this is another box");
    EXPECT_NE(r.summary.find("hostname node-a was " + first.box + " until 2026-11-04"), std::string::npos);
    Recorded second = record(st, other);
    EXPECT_NE(second.box, first.box);
    auto moves = hostname_changes(st.db());
    ASSERT_EQ(moves.size(), 1u);
    EXPECT_EQ(moves[0].hostname, "node-a");
    EXPECT_EQ(moves[0].before_box, first.box);
    EXPECT_EQ(moves[0].until, "2026-11-04T10:00:00Z");
    EXPECT_EQ(moves[0].after_box, second.box);
    std::string listing = render_history_list(list_boxes(st.db()), list_gpus(st.db()), moves);
    EXPECT_NE(listing.find("hostname node-a was " + first.box + " until 2026-11-04 10:00; " + second.box),
              std::string::npos)
        << listing;
    // The same GPUs under the same name again: no note.
    CheckResult again = drift_of(st, on_day(other, 12));
    for (const Finding& f : again.findings) EXPECT_EQ(f.text.find("hostname"), std::string::npos) << f.text;
}

TEST(HistoryKinds, DiffNamesFirmwareCudaAndGpuCount) {
    TempDb t;
    Store st(t.file, true);
    BoxSpec a = on_day(BoxSpec{}, 1);
    a.serials = {"1650000000001", "1650000000002", "1650000000003"};
    a.inforom = "G520.0200.00.05";
    a.cuda_driver_version = 12080;
    record(st, a);
    BoxSpec b = on_day(a, 2);
    b.serials.pop_back();  // one card gone
    b.inforom = "G520.0200.00.06";
    b.cuda_driver_version = 12090;
    record(st, b);
    auto runs = runs_of_box(st.db(), *find_box(st.db(), "node-a"));
    ASSERT_EQ(runs.size(), 2u);
    RunDiff d = diff_runs(snapshot(st.db(), runs[0].id), snapshot(st.db(), runs[1].id),
                          [](const std::string&, const std::string&) { return std::vector<double>{}; });
    std::string all;
    for (const auto& h : d.hardware) all += h + "\n";
    EXPECT_NE(all.find("InfoROM of serial 1650000000001 (NVIDIA H100 80GB HBM3) in slot 00000000:10:00.0: "
                       "G520.0200.00.05 -> G520.0200.00.06"),
              std::string::npos)
        << all;
    EXPECT_NE(all.find("removed from slot 00000000:12:00.0: serial 1650000000003"), std::string::npos) << all;
    EXPECT_NE(all.find("GPU count: 3 -> 2"), std::string::npos) << all;
    EXPECT_NE(all.find("CUDA driver version: 12.8 -> 12.9"), std::string::npos) << all;
    EXPECT_EQ(all.find("driver: "), std::string::npos) << all;  // the driver itself did not change
}

TEST(HistoryKinds, ARunOfSomeGpusKeepsTheBoxsOtherGpus) {
    TempDb t;
    Store st(t.file, true);
    BoxSpec four = on_day(BoxSpec{}, 1);
    four.serials = {"1650000000001", "1650000000002", "1650000000003", "1650000000004"};
    Recorded a = record(st, four);
    BoxSpec one = on_day(four, 2);
    one.serials = {"1650000000001"};  // `run --gpus 0` or `check --gpus 0`
    EXPECT_EQ(record(st, one).box, a.box);
    BoxSpec renamed = on_day(four, 3);
    renamed.hostname = "renamed";
    Recorded c = record(st, renamed);
    EXPECT_EQ(c.box, a.box);
    EXPECT_EQ(c.matched_by, "GPUs");
}

// A trial run as `gpuvet run` summarises it: two GPUs, the job's exit, a primary finding.
RunResult trial_run(int exit_code) {
    RunResult r;
    r.command = {"python", "train.py", "--data", "/my data"};
    r.end = JobEnd{false, exit_code, 12.5};
    r.exit_code = exit_code;
    r.wall_s = 12.5;
    for (int i = 0; i < 2; ++i) {
        GpuRunSummary g;
        g.facts.index = i;
        g.facts.name = "NVIDIA H100 80GB HBM3";
        g.utilization_percent.mean = 41 + i;
        g.utilization_peak_percent = 97;
        g.power_w.mean = 310;
        g.power_w.max = 455;
        g.temperature_c.mean = 55;
        g.temperature_c.max = 63;
        r.gpus.push_back(g);
    }
    r.gpus[1].temperature_c.max = kUnmeasured;  // absent: no figure
    RuleFinding f;
    f.id = "B1";
    f.title = "Input-bound (CPU preprocessing)";
    f.severity = RuleSeverity::kHigh;
    f.message = "the GPUs waited on the data loader 58% of the time";
    r.diagnosis.primary = f;
    return r;
}

RunIdentity identity() {
    RunIdentity id;
    id.hostname = "node-a";
    id.driver_version = "570.86.15";
    id.cuda_driver_version = 12080;
    for (int i = 0; i < 2; ++i) {
        RunIdentity::Gpu g;
        g.uuid = "GPU-165000000000" + std::to_string(i + 1);
        g.serial = "165000000000" + std::to_string(i + 1);
        g.pci_bus_id = "00000000:1" + std::to_string(i) + ":00.0";
        g.inforom_version = "G520.0200.00.05";
        id.gpus[i] = g;
    }
    return id;
}

Envelope run_envelope(const char* at) {
    Envelope e;
    e.command = "run";
    e.tool_version = "0.1.0";
    e.argv = {"gpuvet", "run", "--", "python", "train.py"};
    e.started_at = at;
    e.finished_at = at;
    e.duration_s = 12.5;
    return e;
}

TEST(HistoryKinds, ATrialRunIsRecordedWithItsOutcomeFiguresAndDiagnosis) {
    RunRecord rec = run_record_of(run_envelope("2026-11-02T10:00:00Z"), trial_run(0), identity());
    EXPECT_EQ(rec.verdict, "BOTTLENECK");
    EXPECT_EQ(rec.job.value_or(""), "python train.py --data '/my data'");
    EXPECT_FALSE(rec.tier);
    EXPECT_EQ(run_record_of(run_envelope("2026-11-02T10:00:00Z"), trial_run(2), identity()).verdict, "JOB_FAILED");
    RunResult calm = trial_run(0);
    calm.diagnosis.primary->severity = RuleSeverity::kInfo;
    EXPECT_EQ(run_record_of(run_envelope("2026-11-02T10:00:00Z"), calm, identity()).verdict, "HEALTHY");
    ASSERT_EQ(rec.figures.size(), 12u);  // 6 per GPU, less one absent, and the wall time
    ASSERT_EQ(rec.findings.size(), 1u);
    EXPECT_EQ(rec.findings[0].text,
              "B1 Input-bound (CPU preprocessing): the GPUs waited on the data loader 58% of the time");

    TempDb t;
    Store st(t.file, true);
    Recorded box = record(st, BoxSpec{});  // a check of the same GPUs the day before
    Recorded r = st.record(rec, "recorded");
    EXPECT_EQ(r.box, box.box);
    EXPECT_EQ(r.matched_by, "GPUs");
    EXPECT_FALSE(st.record(rec, "recorded").added);  // the same run twice is one entry
    auto runs = runs_of_box(st.db(), *find_box(st.db(), box.box));
    ASSERT_EQ(runs.size(), 2u);
    EXPECT_EQ(runs[1].command, "run");
    EXPECT_EQ(runs[1].verdict, "BOTTLENECK");
    EXPECT_EQ(runs[1].job.value_or(""), "python train.py --data '/my data'");
    auto found = findings_of(st.db(), runs[1].id);
    ASSERT_EQ(found.size(), 1u);
    EXPECT_EQ(found[0].check, "run.diagnosis");
    EXPECT_EQ(found[0].verdict, "high");
    auto peak = trend(st.db(), "run.utilization_peak_percent", find_gpu(st.db(), "1650000000002"), std::nullopt);
    ASSERT_EQ(peak.size(), 1u);
    EXPECT_EQ(peak[0].value, 97);
    ShownRun shown{runs[1], snapshot(st.db(), runs[1].id).figures, found};
    std::string text = render_history_show("box", {shown});
    EXPECT_NE(text.find("job: python train.py --data '/my data' (exit 0)"), std::string::npos) << text;
    EXPECT_NE(text.find("run.diagnosis (high): B1 Input-bound"), std::string::npos) << text;
    EXPECT_NE(text.find("run.temperature_peak_c"), std::string::npos) << text;
}

TEST(HistoryKinds, TheBoxHistoryHasEarlierRunsAndComparableKeyFigures) {
    TempDb t;
    Store st(t.file, true);
    const double bw[] = {3010, 2995, 3004};
    for (int d = 0; d < 3; ++d) {
        BoxSpec b = check_at("standard", 60, 70 + d, d + 1);
        b.copy_gbps = bw[d];
        record(st, b);
    }
    record(st, check_at("quick", 20, 55, 4));  // another tier: listed, not charted
    BoxSpec now = check_at("standard", 60, 74, 6);
    now.copy_gbps = 2990;
    RunRecord rec = record_of(box_report(now));
    auto h = box_history(st.db(), rec);
    ASSERT_TRUE(h);
    EXPECT_EQ(h->runs.size(), 4u);
    EXPECT_EQ(h->matched_by, "GPUs");
    ASSERT_EQ(h->trends.size(), 2u);  // the bandwidth (spec, floor) and the burn's peak (ceiling)
    EXPECT_EQ(h->trends[0].metric, "gpu.burn.temperature_peak_c");
    EXPECT_EQ(h->trends[1].metric, "gpu.memory_bandwidth.copy_gbps");
    ASSERT_EQ(h->trends[1].points.size(), 8u);  // 2 GPUs x (3 earlier + this run)
    EXPECT_EQ(h->trends[1].points[3].value, 2990);
    EXPECT_EQ(h->trends[1].points[3].at, "2026-11-06T10:00:00Z");
    for (const auto& p : h->trends[0].points) EXPECT_NE(p.value, 55) << "the quick check's peak is charted";

    std::string html = html_box_history(*h);
    EXPECT_NE(html.find("<section id=\"history\">"), std::string::npos);
    std::size_t rows = 0, charts = 0;
    for (std::size_t at = html.find("<tr><td>"); at != std::string::npos; at = html.find("<tr><td>", at + 1)) ++rows;
    for (std::size_t at = html.find("<svg"); at != std::string::npos; at = html.find("<svg", at + 1)) ++charts;
    EXPECT_EQ(rows, 4u);
    EXPECT_EQ(charts, 2u);
    EXPECT_NE(html.find("check (quick)"), std::string::npos);
    EXPECT_NE(html.find("data-metric=\"gpu.memory_bandwidth.copy_gbps\""), std::string::npos);
    std::string page = render_html(box_report(now), &*h);
    EXPECT_NE(page.find("History of this box"), std::string::npos);
    EXPECT_EQ(render_html(box_report(now)).find("History of this box"), std::string::npos);

    // Once recorded, the run is still not its own history (a fleet shows a node's after recording it).
    st.record(rec, "recorded");
    auto again = box_history(st.db(), rec);
    ASSERT_TRUE(again);
    EXPECT_EQ(again->runs.size(), 4u);
    EXPECT_EQ(again->trends.at(1).points.size(), 8u);

    // A box the history does not know has no history to show.
    BoxSpec stranger = now;
    stranger.serials = {"1651111111111"};
    stranger.hostname = "elsewhere";
    EXPECT_FALSE(box_history(st.db(), record_of(box_report(stranger))));
}

}  // namespace
}  // namespace gpuvet
