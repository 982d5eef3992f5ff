#include "history/schema.hpp"

#include <array>

#include "core/error.hpp"

namespace gpuvet::history {

namespace {

// The first schema, as the first gpuvet with a history wrote it. Never edit a step once
// released: add the next one.
constexpr const char* kStep1 = R"sql(
CREATE TABLE boxes(
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL UNIQUE,
  first_seen TEXT NOT NULL,
  last_seen TEXT NOT NULL);
CREATE TABLE box_ids(
  box_id INTEGER NOT NULL REFERENCES boxes(id),
  kind TEXT NOT NULL,
  value TEXT NOT NULL,
  UNIQUE(box_id, kind, value));
CREATE TABLE gpus(
  id INTEGER PRIMARY KEY,
  key TEXT NOT NULL UNIQUE,
  uuid TEXT,
  serial TEXT,
  name TEXT,
  first_seen TEXT NOT NULL,
  last_seen TEXT NOT NULL);
CREATE TABLE runs(
  id INTEGER PRIMARY KEY,
  digest TEXT NOT NULL UNIQUE,
  box_id INTEGER NOT NULL REFERENCES boxes(id),
  command TEXT NOT NULL,
  started_at TEXT NOT NULL,
  finished_at TEXT NOT NULL,
  verdict TEXT NOT NULL,
  exit_code INTEGER NOT NULL,
  hostname TEXT,
  driver_version TEXT,
  tool_version TEXT,
  origin TEXT NOT NULL);
CREATE TABLE run_gpus(
  run_id INTEGER NOT NULL REFERENCES runs(id),
  gpu_id INTEGER REFERENCES gpus(id),
  idx INTEGER NOT NULL,
  slot TEXT NOT NULL,
  name TEXT,
  vbios_version TEXT,
  sku TEXT,
  verdict TEXT,
  PRIMARY KEY(run_id, idx));
CREATE TABLE figures(
  run_id INTEGER NOT NULL REFERENCES runs(id),
  gpu_id INTEGER REFERENCES gpus(id),
  metric TEXT NOT NULL,
  value REAL NOT NULL,
  unit TEXT NOT NULL,
  spec REAL,
  fail_below REAL,
  fail_above REAL);
CREATE INDEX figures_by_run ON figures(run_id);
)sql";

constexpr const char* kStep2 = R"sql(
CREATE TABLE findings(
  run_id INTEGER NOT NULL REFERENCES runs(id),
  gpu_id INTEGER REFERENCES gpus(id),
  check_key TEXT NOT NULL,
  verdict TEXT NOT NULL,
  text TEXT NOT NULL);
CREATE INDEX figures_by_metric ON figures(metric, gpu_id, run_id);
CREATE INDEX runs_by_box ON runs(box_id, started_at);
)sql";

// What a run was, so that drift compares like with like: the tier (quick, standard, full; 'unknown'
// for a check or bench recorded before tiers were kept, comparable with any), the burn's length
// (backfilled from the recorded load duration), the CUDA driver version, the job of `gpuvet run`,
// and each GPU's InfoROM image version.
constexpr const char* kStep3 = R"sql(
ALTER TABLE runs ADD COLUMN tier TEXT;
ALTER TABLE runs ADD COLUMN burn_duration_s REAL;
ALTER TABLE runs ADD COLUMN cuda_driver_version INTEGER;
ALTER TABLE runs ADD COLUMN job TEXT;
ALTER TABLE run_gpus ADD COLUMN inforom_version TEXT;
UPDATE runs SET tier = 'unknown' WHERE command IN ('check', 'bench');
UPDATE runs SET burn_duration_s = (SELECT max(f.value) FROM figures f WHERE f.run_id = runs.id AND
  f.metric = 'gpu.burn.load_duration_s');
)sql";

constexpr std::array<const char*, kDatabaseVersion> kSteps = {kStep1, kStep2, kStep3};

}  // namespace

int schema_version(Database& db) {
    Statement s = db.prepare("PRAGMA user_version");
    s.step();
    return int(s.int64(0));
}

void migrate(Database& db, int target) {
    int have = schema_version(db);
    if (have > kDatabaseVersion)
        throw runtime_error("history database " + db.file().string() + " has schema version " + std::to_string(have) +
                                ", newer than this gpuvet's " + std::to_string(kDatabaseVersion),
                            "use the newer gpuvet that wrote it, or point --history-db at another file");
    while (have < target) {
        Transaction t(db);
        // Read again under the write lock: another process may have migrated meanwhile.
        have = schema_version(db);
        if (have >= target) break;
        db.exec(kSteps[std::size_t(have)]);
        db.exec("PRAGMA user_version = " + std::to_string(have + 1));
        t.commit();
        ++have;
    }
}

}  // namespace gpuvet::history
