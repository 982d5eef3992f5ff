#include "history/store.hpp"

#include <cstdlib>
#include <map>
#include <system_error>

#include "core/error.hpp"
#include "history/identity.hpp"
#include "history/schema.hpp"

namespace gpuvet::history {

std::optional<std::filesystem::path> history_path(const std::optional<std::string>& flag, std::string* why) {
    if (flag && !flag->empty()) return std::filesystem::path(*flag);
    if (const char* e = std::getenv("GPUVET_HISTORY_DB"); e && *e) return std::filesystem::path(e);
    // XDG: a relative XDG_DATA_HOME is invalid and ignored.
    if (const char* x = std::getenv("XDG_DATA_HOME"); x && *x == '/')
        return std::filesystem::path(x) / "gpuvet" / "history.sqlite";
    if (const char* h = std::getenv("HOME"); h && *h)
        return std::filesystem::path(h) / ".local" / "share" / "gpuvet" / "history.sqlite";
    if (why) *why = "neither GPUVET_HISTORY_DB, XDG_DATA_HOME nor HOME is set";
    return std::nullopt;
}

void require_database_file(const std::filesystem::path& file) {
    namespace fs = std::filesystem;
    std::error_code ec;
    fs::file_status st = fs::status(file, ec);  // follows links
    if (ec || !fs::exists(st) || fs::is_regular_file(st)) return;
    const char* what = fs::is_directory(st)        ? "a directory"
                       : fs::is_fifo(st)           ? "a FIFO"
                       : fs::is_character_file(st) ? "a character device"
                       : fs::is_block_file(st)     ? "a block device"
                       : fs::is_socket(st)         ? "a socket"
                                                   : "not a regular file";
    throw usage_error("history database " + file.string() + " is " + what + ", not a database file",
                      "name a regular file (it is created when missing) with --history-db or GPUVET_HISTORY_DB, or "
                      "pass --no-history");
}

namespace {

std::filesystem::path prepared(const std::filesystem::path& file, bool create) {
    if (!create || file.parent_path().empty()) return file;
    std::error_code ec;
    std::filesystem::create_directories(file.parent_path(), ec);
    if (ec)
        throw runtime_error("cannot create the history folder " + file.parent_path().string() + ": " + ec.message(),
                            "point --history-db or GPUVET_HISTORY_DB at a writable file, or pass --no-history");
    return file;
}

}  // namespace

std::vector<BoxEvidence> box_evidence(Database& db) {
    std::map<std::int64_t, BoxEvidence> boxes;
    for (Statement s = db.prepare("SELECT id FROM boxes"); s.step();) boxes[s.int64(0)].id = s.int64(0);
    for (Statement s = db.prepare("SELECT box_id, kind, value FROM box_ids"); s.step();) {
        BoxEvidence& b = boxes[s.int64(0)];
        std::string kind = s.text(1);
        auto& set = kind == "system_uuid"    ? b.system_uuids
                    : kind == "board_serial" ? b.board_serials
                    : kind == "slurm_node"   ? b.slurm_nodes
                                             : b.hostnames;
        set.insert(s.text(2));
    }
    // The GPU each slot of each box held last (a GPU swapped out earlier no longer speaks for the
    // box; a run of some GPUs only, `run --gpus 0`, does not make it forget the others).
    Statement s = db.prepare(
        "SELECT box_id, key FROM (SELECT r.box_id, g.key, row_number() OVER (PARTITION BY r.box_id, rg.slot "
        "ORDER BY r.started_at DESC, r.id DESC) AS n FROM run_gpus rg JOIN runs r ON r.id = rg.run_id "
        "JOIN gpus g ON g.id = rg.gpu_id) WHERE n = 1");
    while (s.step()) boxes[s.int64(0)].gpu_keys.insert(s.text(1));
    std::vector<BoxEvidence> out;
    for (auto& [id, b] : boxes) out.push_back(std::move(b));
    return out;
}

namespace {

std::int64_t new_box(Database& db, const RunRecord& run) {
    std::string name = "box-" + run.digest.substr(0, 8);
    for (int n = 2;; ++n) {
        Statement s = db.prepare("SELECT 1 FROM boxes WHERE name = ?1");
        s.bind(1, name);
        if (!s.step()) break;
        name = "box-" + run.digest.substr(0, 8) + "-" + std::to_string(n);
    }
    db.prepare("INSERT INTO boxes(name, first_seen, last_seen) VALUES(?1, ?2, ?2)")
        .bind(1, name)
        .bind(2, run.started_at)
        .step();
    return db.last_insert_id();
}

void note_box(Database& db, std::int64_t box, const RunRecord& run) {
    db.prepare("UPDATE boxes SET first_seen = min(first_seen, ?2), last_seen = max(last_seen, ?2) WHERE id = ?1")
        .bind(1, box)
        .bind(2, run.started_at)
        .step();
    Statement ins = db.prepare("INSERT OR IGNORE INTO box_ids(box_id, kind, value) VALUES(?1, ?2, ?3)");
    for (auto [kind, v] : {std::pair{"hostname", &run.hostname}, std::pair{"system_uuid", &run.system_uuid},
                           std::pair{"board_serial", &run.board_serial}, std::pair{"slurm_node", &run.slurm_node}}) {
        if (!*v || (*v)->empty()) continue;
        ins.reset();
        ins.bind(1, box).bind(2, kind).bind(3, **v).step();
    }
}

std::int64_t note_gpu(Database& db, const GpuRecord& g, const std::string& at) {
    db.prepare(
          "INSERT INTO gpus(key, uuid, serial, name, first_seen, last_seen) VALUES(?1, ?2, ?3, ?4, ?5, ?5) "
          "ON CONFLICT(key) DO UPDATE SET serial = coalesce(excluded.serial, serial), "
          "name = coalesce(excluded.name, name), first_seen = min(first_seen, excluded.first_seen), "
          "last_seen = max(last_seen, excluded.last_seen)")
        .bind(1, g.key())
        .bind(2, g.uuid)
        .bind(3, g.serial)
        .bind(4, g.name)
        .bind(5, at)
        .step();
    Statement s = db.prepare("SELECT id FROM gpus WHERE key = ?1");
    s.bind(1, g.key());
    s.step();
    return s.int64(0);
}

std::optional<std::int64_t> gpu_of(const std::map<int, std::int64_t>& ids, std::optional<int> index) {
    if (!index) return std::nullopt;
    auto it = ids.find(*index);
    return it == ids.end() ? std::nullopt : std::optional<std::int64_t>(it->second);
}

void insert_details(Database& db, std::int64_t run_id, const RunRecord& run) {
    std::map<int, std::int64_t> gpu_ids;
    Statement rg = db.prepare(
        "INSERT INTO run_gpus(run_id, gpu_id, idx, slot, name, vbios_version, sku, verdict, inforom_version) "
        "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)");
    for (const GpuRecord& g : run.gpus) {
        std::optional<std::int64_t> id;
        if (!g.key().empty()) id = gpu_ids[g.index] = note_gpu(db, g, run.started_at);
        rg.reset();
        rg.bind(1, run_id).bind(2, id).bind(3, g.index).bind(4, g.slot).bind(5, g.name).bind(6, g.vbios_version);
        rg.bind(7, g.sku).bind(8, g.verdict).bind(9, g.inforom_version).step();
    }
    Statement f = db.prepare(
        "INSERT INTO figures(run_id, gpu_id, metric, value, unit, spec, fail_below, fail_above) "
        "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)");
    for (const FigureRecord& x : run.figures) {
        f.reset();
        f.bind(1, run_id).bind(2, gpu_of(gpu_ids, x.gpu)).bind(3, x.metric).bind(4, x.value).bind(5, x.unit);
        f.bind(6, x.spec).bind(7, x.fail_below).bind(8, x.fail_above).step();
    }
    Statement fi = db.prepare("INSERT INTO findings(run_id, gpu_id, check_key, verdict, text) VALUES(?1,?2,?3,?4,?5)");
    for (const FindingRecord& x : run.findings) {
        fi.reset();
        fi.bind(1, run_id).bind(2, gpu_of(gpu_ids, x.gpu)).bind(3, x.check).bind(4, x.verdict).bind(5, x.text).step();
    }
}

std::string box_name(Database& db, std::int64_t id) {
    Statement s = db.prepare("SELECT name FROM boxes WHERE id = ?1");
    s.bind(1, id);
    s.step();
    return s.text(0);
}

}  // namespace

Store::Store(const std::filesystem::path& file, bool create)
    : db_((require_database_file(file), prepared(file, create)), create, kBusyTimeoutMs) {
    db_.exec("PRAGMA journal_mode = DELETE; PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON");
    migrate(db_);
}

Recorded Store::record(const RunRecord& run, const std::string& origin) {
    Transaction t(db_);
    Recorded r = record_within(run, origin);
    t.commit();
    return r;
}

Recorded Store::record_within(const RunRecord& run, const std::string& origin) {
    Statement known = db_.prepare("SELECT box_id FROM runs WHERE digest = ?1");
    known.bind(1, run.digest);
    if (known.step()) return {box_name(db_, known.int64(0)), "", false};

    RunEvidence ev{{}, run.system_uuid, run.board_serial, run.slurm_node, run.hostname};
    for (const GpuRecord& g : run.gpus)
        if (!g.key().empty()) ev.gpu_keys.insert(g.key());
    auto match = match_box(ev, box_evidence(db_));
    std::int64_t box = match ? match->id : new_box(db_, run);
    note_box(db_, box, run);
    std::optional<std::int64_t> cuda;
    if (run.cuda_driver_version) cuda = *run.cuda_driver_version;
    Statement ins = db_.prepare(
        "INSERT INTO runs(digest, box_id, command, started_at, finished_at, verdict, exit_code, hostname, "
        "driver_version, tool_version, origin, tier, burn_duration_s, cuda_driver_version, job) "
        "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)");
    ins.bind(1, run.digest).bind(2, box).bind(3, run.command).bind(4, run.started_at).bind(5, run.finished_at);
    ins.bind(6, run.verdict).bind(7, run.exit_code).bind(8, run.hostname).bind(9, run.driver_version);
    ins.bind(10, run.tool_version).bind(11, origin).bind(12, run.tier).bind(13, run.burn_duration_s);
    ins.bind(14, cuda).bind(15, run.job).step();
    insert_details(db_, db_.last_insert_id(), run);
    return {box_name(db_, box), match ? match->by : "", true};
}

}  // namespace gpuvet::history
