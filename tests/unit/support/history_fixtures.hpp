// Reports as the history sees them, built in the tests: a box of N GPUs with serials, a hostname,
// a start time and the figures the drift rules read; and a temporary database file.
#pragma once
#include <unistd.h>

#include <cstdio>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/result.hpp"
#include "history/run_record.hpp"
#include "history/sqlite_db.hpp"
#include "history/store.hpp"

namespace gpuvet::test {

struct TempDb {
    std::filesystem::path dir, file;
    TempDb() {
        char tmpl[] = "/tmp/gpuvet-history-test-XXXXXX";
        dir = ::mkdtemp(tmpl);
        file = dir / "history.sqlite";
    }
    ~TempDb() { std::filesystem::remove_all(dir); }
};

struct BoxSpec {
    std::string hostname = "node-a";
    std::vector<std::string> serials = {"1650000000001", "1650000000002"};
    std::string started_at = "2026-11-01T10:00:00Z";
    double copy_gbps = 3000;   // gpu.memory_bandwidth.copy_gbps on every GPU
    double peak_c = 70;        // gpu.burn.temperature_peak_c
    double remapped_rows = 0;  // gpu.health.remapped_rows_correctable
    std::string command = "check";
    std::vector<std::string> argv;  // the command's words: "--quick", "--full" set the tier
    std::optional<double> burn_s;   // gpu.burn.load_duration_s on every GPU, when a burn ran
    std::string inforom;            // gpu.identity's InfoROM image version, when given
    std::optional<int> cuda_driver_version;
};

inline Measurement figure(const char* key, double v, const char* unit, int gpu, std::optional<double> spec = {},
                          std::optional<double> floor = {}, std::optional<double> ceiling = {}) {
    Measurement m = Measurement::number(key, key, v, unit).on_gpu(gpu);
    Reference r;
    r.spec = spec;
    r.fail_below = floor;
    r.fail_above = ceiling;
    if (spec || floor || ceiling) m.against(r);
    return m;
}

inline Report box_report(const BoxSpec& b) {
    Report r;
    r.command = b.command;
    r.argv = b.argv;
    r.tool_version = "0.1.0";
    r.started_at = b.started_at;
    r.finished_at = b.started_at;
    r.machine.hostname = b.hostname;
    r.machine.driver.driver_version = "570.86.15";
    r.machine.driver.cuda_driver_version = b.cuda_driver_version;
    for (std::size_t i = 0; i < b.serials.size(); ++i) {
        int idx = int(i);
        GpuSummary g;
        g.index = idx;
        g.name = "NVIDIA H100 80GB HBM3";
        g.uuid = "GPU-" + b.serials[i];
        g.pci_bus_id = "00000000:" + std::to_string(10 + i) + ":00.0";
        r.gpus.push_back(g);
        CheckResult id;
        id.key = "gpu.identity";
        id.gpu = idx;
        id.verdict = Verdict::Pass;
        id.measurements.push_back(Measurement::textual("serial", "Serial", b.serials[i]));
        if (!b.inforom.empty())
            id.measurements.push_back(Measurement::textual("inforom_image_version", "InfoROM image", b.inforom));
        CheckResult bw;
        bw.key = "gpu.memory_bandwidth";
        bw.gpu = idx;
        bw.verdict = Verdict::Pass;
        bw.measurements.push_back(figure("copy_gbps", b.copy_gbps, "GB/s", idx, 3350, 2345));
        CheckResult health;
        health.key = "gpu.health";
        health.gpu = idx;
        health.verdict = Verdict::Pass;
        health.measurements.push_back(figure("remapped_rows_correctable", b.remapped_rows, "count", idx));
        CheckResult burn;
        burn.key = "gpu.burn";
        burn.gpu = idx;
        burn.verdict = Verdict::Pass;
        burn.measurements.push_back(figure("temperature_peak_c", b.peak_c, "C", idx, {}, {}, 90));
        if (b.burn_s) burn.measurements.push_back(figure("load_duration_s", *b.burn_s, "s", idx));
        for (auto* c : {&id, &bw, &health, &burn}) r.checks.push_back(*c);
    }
    r.verdict = RunVerdict::Go;
    return r;
}

// Rows in a table of the history database.
inline std::int64_t count(history::Database& db, const std::string& table) {
    history::Statement s = db.prepare("SELECT count(*) FROM " + table);
    s.step();
    return s.int64(0);
}

// SQLite's own verdict on the file: "ok" when consistent.
inline std::string integrity(history::Database& db) {
    history::Statement s = db.prepare("PRAGMA integrity_check");
    s.step();
    return s.text(0);
}

inline history::Recorded record(history::Store& st, const BoxSpec& b) {
    return st.record(history::record_of(box_report(b)), "recorded");
}

// The box's run on another day of November 2026.
inline BoxSpec at_day(BoxSpec b, int day) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "2026-11-%02dT10:00:00Z", day);
    b.started_at = buf;
    return b;
}

}  // namespace gpuvet::test
