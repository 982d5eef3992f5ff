#include "history/queries.hpp"

#include <algorithm>

namespace gpuvet::history {

namespace {

std::optional<int> opt_int(const Statement& s, int col) {
    auto v = s.opt_int64(col);
    return v ? std::optional<int>(int(*v)) : std::nullopt;
}

RunRow run_row(const Statement& s) {
    // Columns as kRunColumns lists them.
    RunRow r;
    r.id = s.int64(0);
    r.box = s.text(1), r.command = s.text(2), r.started_at = s.text(3), r.verdict = s.text(4), r.origin = s.text(5);
    r.hostname = s.opt_text(6), r.driver_version = s.opt_text(7);
    r.exit_code = int(s.int64(8));
    r.tier = s.opt_text(9);
    r.burn_duration_s = s.opt_real(10);
    r.cuda_driver_version = opt_int(s, 11);
    r.job = s.opt_text(12);
    return r;
}

constexpr const char* kRunColumns =
    "SELECT r.id, b.name, r.command, r.started_at, r.verdict, r.origin, r.hostname, r.driver_version, "
    "r.exit_code, r.tier, r.burn_duration_s, r.cuda_driver_version, r.job "
    "FROM runs r JOIN boxes b ON b.id = r.box_id ";

std::optional<std::int64_t> first_id(Statement s) {
    if (!s.step()) return std::nullopt;
    return s.int64(0);
}

}  // namespace

std::vector<BoxRow> list_boxes(Database& db) {
    std::vector<BoxRow> out;
    Statement s = db.prepare(
        "SELECT b.id, b.name, b.first_seen, b.last_seen, "
        "(SELECT count(*) FROM runs WHERE box_id = b.id), l.hostname, l.verdict, "
        "(SELECT count(*) FROM run_gpus WHERE run_id = l.id) "
        "FROM boxes b JOIN runs l ON l.id = (SELECT id FROM runs WHERE box_id = b.id "
        "ORDER BY started_at DESC, id DESC LIMIT 1) ORDER BY b.last_seen DESC");
    while (s.step())
        out.push_back({s.int64(0), s.text(1), s.text(2), s.text(3), s.opt_text(5), s.int64(4), s.text(6), s.int64(7)});
    return out;
}

std::vector<GpuRow> list_gpus(Database& db) {
    std::vector<GpuRow> out;
    Statement s = db.prepare(
        // Where it was last seen, and its last verdict (a `run` judges no single GPU: it has none).
        "SELECT g.id, g.key, g.uuid, g.serial, g.name, g.first_seen, g.last_seen, b.name, rg.slot, "
        "(SELECT x.verdict FROM run_gpus x JOIN runs r ON r.id = x.run_id WHERE x.gpu_id = g.id AND x.verdict IS "
        "NOT NULL ORDER BY r.started_at DESC, r.id DESC LIMIT 1) "
        "FROM gpus g LEFT JOIN run_gpus rg ON rg.rowid = (SELECT x.rowid FROM run_gpus x JOIN runs r ON r.id = "
        "x.run_id WHERE x.gpu_id = g.id ORDER BY r.started_at DESC, r.id DESC LIMIT 1) "
        "LEFT JOIN runs lr ON lr.id = rg.run_id LEFT JOIN boxes b ON b.id = lr.box_id "
        "ORDER BY b.name, rg.slot");
    while (s.step())
        out.push_back({s.int64(0), s.text(1), s.opt_text(2), s.opt_text(3), s.opt_text(4), s.text(5), s.text(6),
                       s.opt_text(7), s.opt_text(8), s.opt_text(9)});
    return out;
}

std::optional<std::int64_t> find_gpu(Database& db, const std::string& what) {
    Statement s = db.prepare("SELECT id FROM gpus WHERE key = ?1 OR uuid = ?1 OR serial = ?1 LIMIT 1");
    s.bind(1, what);
    return first_id(std::move(s));
}

std::optional<std::int64_t> find_box(Database& db, const std::string& what) {
    Statement s = db.prepare(
        "SELECT id FROM boxes WHERE name = ?1 UNION ALL "
        "SELECT box_id FROM box_ids WHERE value = ?1 UNION ALL "
        "SELECT r.box_id FROM runs r WHERE r.id = (SELECT rg.run_id FROM run_gpus rg JOIN gpus g ON g.id = rg.gpu_id "
        "JOIN runs x ON x.id = rg.run_id WHERE g.key = ?1 OR g.uuid = ?1 OR g.serial = ?1 "
        "ORDER BY x.started_at DESC LIMIT 1) LIMIT 1");
    s.bind(1, what);
    return first_id(std::move(s));
}

std::vector<RunRow> runs_of_box(Database& db, std::int64_t box) {
    std::vector<RunRow> out;
    Statement s = db.prepare(std::string(kRunColumns) + "WHERE r.box_id = ?1 ORDER BY r.started_at, r.id");
    s.bind(1, box);
    while (s.step()) out.push_back(run_row(s));
    return out;
}

std::vector<RunRow> runs_of_gpu(Database& db, std::int64_t gpu) {
    std::vector<RunRow> out;
    Statement s =
        db.prepare(std::string(kRunColumns) +
                   "WHERE r.id IN (SELECT run_id FROM run_gpus WHERE gpu_id = ?1) ORDER BY r.started_at, r.id");
    s.bind(1, gpu);
    while (s.step()) out.push_back(run_row(s));
    return out;
}

Snapshot snapshot(Database& db, std::int64_t run) {
    Snapshot snap;
    Statement r = db.prepare(std::string(kRunColumns) + "WHERE r.id = ?1");
    r.bind(1, run);
    if (r.step()) snap.run = run_row(r);
    Statement g = db.prepare(
        "SELECT rg.idx, rg.slot, g.key, g.serial, rg.name, rg.vbios_version, rg.verdict, rg.inforom_version "
        "FROM run_gpus rg LEFT JOIN gpus g ON g.id = rg.gpu_id WHERE rg.run_id = ?1 ORDER BY rg.idx");
    g.bind(1, run);
    while (g.step())
        snap.gpus.push_back({int(g.int64(0)), g.text(1), g.opt_text(2), g.opt_text(3), g.opt_text(4), g.opt_text(5),
                             g.opt_text(6), g.opt_text(7)});
    Statement f = db.prepare(
        "SELECT g.key, f.metric, f.value, f.unit, f.spec, f.fail_below, f.fail_above, rg.idx FROM figures f "
        "LEFT JOIN gpus g ON g.id = f.gpu_id LEFT JOIN run_gpus rg ON rg.run_id = f.run_id AND rg.gpu_id = f.gpu_id "
        "WHERE f.run_id = ?1 ORDER BY f.rowid");
    f.bind(1, run);
    while (f.step()) {
        auto idx = f.opt_int64(7);
        snap.figures.push_back({f.opt_text(0), f.text(1), f.real(2), f.text(3), f.opt_real(4), f.opt_real(5),
                                f.opt_real(6), idx ? std::optional<int>(int(*idx)) : std::nullopt});
    }
    return snap;
}

std::vector<TrendPoint> trend(Database& db, const std::string& metric, std::optional<std::int64_t> gpu,
                              std::optional<std::int64_t> box) {
    std::vector<TrendPoint> out;
    // Only the filters asked for, so that (metric, gpu_id) is looked up through its index.
    std::string sql =
        "SELECT r.started_at, coalesce(g.key, ''), g.serial, f.value, f.unit, f.spec, f.fail_below, f.fail_above, "
        "r.command, r.tier, r.burn_duration_s, r.id FROM figures f JOIN runs r ON r.id = f.run_id "
        "LEFT JOIN gpus g ON g.id = f.gpu_id WHERE f.metric = ?1";
    if (gpu) sql += " AND f.gpu_id = ?2";
    if (box) sql += " AND r.box_id = ?3";
    Statement s = db.prepare(sql + " ORDER BY r.started_at, r.id, f.rowid");
    s.bind(1, metric);
    if (gpu) s.bind(2, *gpu);
    if (box) s.bind(3, *box);
    while (s.step())
        out.push_back({s.text(0), s.text(1), s.opt_text(2), s.real(3), s.text(4), s.opt_real(5), s.opt_real(6),
                       s.opt_real(7), RunKind{s.text(8), s.opt_text(9), s.opt_real(10)}, s.int64(11)});
    return out;
}

std::vector<FindingRow> findings_of(Database& db, std::int64_t run) {
    std::vector<FindingRow> out;
    Statement s = db.prepare(
        "SELECT rg.idx, fi.check_key, fi.verdict, fi.text FROM findings fi LEFT JOIN run_gpus rg ON "
        "rg.run_id = fi.run_id AND rg.gpu_id = fi.gpu_id WHERE fi.run_id = ?1 ORDER BY fi.rowid");
    s.bind(1, run);
    while (s.step()) out.push_back({opt_int(s, 0), s.text(1), s.text(2), s.text(3)});
    return out;
}

namespace {

// Each (hostname, box) that ran with identified GPUs, with its first and last run, in time order.
constexpr const char* kNamedBoxes =
    "SELECT r.hostname, b.name, min(r.started_at), max(r.started_at), r.box_id FROM runs r "
    "JOIN boxes b ON b.id = r.box_id WHERE r.hostname IS NOT NULL AND EXISTS (SELECT 1 FROM run_gpus x WHERE "
    "x.run_id = r.id AND x.gpu_id IS NOT NULL) ";

}  // namespace

std::vector<HostnameChange> hostname_changes(Database& db) {
    std::vector<HostnameChange> out;
    Statement s = db.prepare(std::string(kNamedBoxes) + "GROUP BY r.hostname, r.box_id ORDER BY r.hostname, 3");
    std::string host, box, until;
    while (s.step()) {
        if (s.text(0) == host && s.text(1) != box) out.push_back({host, box, until, s.text(1), s.text(2)});
        host = s.text(0), box = s.text(1), until = s.text(3);
    }
    std::stable_sort(out.begin(), out.end(), [](auto& a, auto& b) { return a.since < b.since; });
    return out;
}

std::optional<std::pair<std::string, std::string>> last_box_named(Database& db, const std::string& hostname,
                                                                  const std::string& before,
                                                                  std::optional<std::int64_t> except) {
    Statement s = db.prepare(std::string(kNamedBoxes) +
                             "AND r.hostname = ?1 AND r.started_at <= ?2 AND r.box_id IS NOT ?3 "
                             "GROUP BY r.box_id ORDER BY 4 DESC LIMIT 1");
    s.bind(1, hostname).bind(2, before).bind(3, except);
    if (!s.step()) return std::nullopt;
    return std::pair{s.text(1), s.text(3)};
}

std::vector<std::string> metrics(Database& db) {
    std::vector<std::string> out;
    for (Statement s = db.prepare("SELECT DISTINCT metric FROM figures ORDER BY metric"); s.step();)
        out.push_back(s.text(0));
    return out;
}

std::vector<double> earlier_values(Database& db, std::int64_t gpu, const std::string& metric,
                                   const std::string& before) {
    std::vector<double> out;
    Statement s = db.prepare(
        "SELECT f.value FROM figures f JOIN runs r ON r.id = f.run_id WHERE f.metric = ?1 AND f.gpu_id = ?2 "
        "AND r.started_at < ?3 ORDER BY r.started_at, r.id");
    s.bind(1, metric).bind(2, gpu).bind(3, before);
    while (s.step()) out.push_back(s.real(0));
    return out;
}

void for_each_figure(Database& db, const std::function<void(const ExportRow&)>& fn) {
    Statement s = db.prepare(
        "SELECT b.name, r.started_at, r.command, r.verdict, r.hostname, g.key, g.serial, rg.slot, f.metric, f.value, "
        "f.unit, f.spec, f.fail_below, f.fail_above, rg.idx FROM figures f JOIN runs r ON r.id = f.run_id "
        "JOIN boxes b ON b.id = r.box_id LEFT JOIN gpus g ON g.id = f.gpu_id "
        "LEFT JOIN run_gpus rg ON rg.run_id = f.run_id AND rg.gpu_id = f.gpu_id "
        "ORDER BY r.started_at, r.id, f.rowid");
    while (s.step()) {
        ExportRow row{s.text(0),     s.text(1),     s.text(2),     s.text(3),  s.opt_text(4),
                      s.opt_text(5), s.opt_text(6), s.opt_text(7), FigureRow{}};
        auto idx = s.opt_int64(14);
        row.figure = {
            s.opt_text(5),  s.text(8),      s.real(9),      s.text(10),
            s.opt_real(11), s.opt_real(12), s.opt_real(13), idx ? std::optional<int>(int(*idx)) : std::nullopt};
        fn(row);
    }
}

}  // namespace gpuvet::history
