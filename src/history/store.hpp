// The history database: where it lives, opening it at the current schema, and recording a run
// in one transaction (a crash, Ctrl-C or SIGKILL mid-write leaves the database as it was before).
//
// Locking: SQLite's rollback journal (journal_mode=DELETE, synchronous=FULL), not WAL: WAL needs
// shared memory that network file systems (home folders on a cluster's NFS) do not give, and the
// history writes one run in minutes. Writers take the lock at BEGIN IMMEDIATE and queue on a
// busy timeout of kBusyTimeoutMs; readers wait the same way.
#pragma once
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "history/identity.hpp"
#include "history/run_record.hpp"
#include "history/sqlite_db.hpp"

namespace gpuvet::history {

// Long enough for a fleet's nodes writing one shared file one after another (each write takes
// milliseconds), short enough that a wedged holder is reported: gpuvet's own choice.
inline constexpr int kBusyTimeoutMs = 30000;

// The database file: `flag` (--history-db) when given, else $GPUVET_HISTORY_DB, else
// $XDG_DATA_HOME/gpuvet/history.sqlite, else ~/.local/share/gpuvet/history.sqlite (XDG Base
// Directory Specification 0.8). nullopt when none can be formed (no HOME); `why` says so.
std::optional<std::filesystem::path> history_path(const std::optional<std::string>& flag, std::string* why = nullptr);

// The database must be a regular file, or a name that does not exist yet (it is created), as the
// output paths are (core/atomic_file.hpp): a FIFO would block SQLite, a device or a directory
// cannot hold a database. Links are followed. Throws a usage error (exit 2) naming the path, what
// it is and the fix.
void require_database_file(const std::filesystem::path& file);

struct Recorded {
    std::string box;         // the box's name: "box-1a2b3c4d"
    std::string matched_by;  // how it was recognised ("GPUs", "SMBIOS system UUID"...), empty: a new box
    bool added = false;      // false: this report was already in the history
};

// What the history knows of every box, for match_box().
std::vector<BoxEvidence> box_evidence(Database& db);

class Store {
public:
    // Opens the file at the current schema; `create`: make it (and its folder) when missing.
    Store(const std::filesystem::path& file, bool create);
    Recorded record(const RunRecord& run, const std::string& origin);
    // The same inside a transaction the caller holds (Transaction on db()): nothing is visible to
    // other connections, nor survives a crash, until the caller commits.
    Recorded record_within(const RunRecord& run, const std::string& origin);
    Database& db() { return db_; }

private:
    Database db_;
};

}  // namespace gpuvet::history
