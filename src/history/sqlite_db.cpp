#include "history/sqlite_db.hpp"

#include <sqlite3.h>

#include "core/error.hpp"

namespace gpuvet::history {

Database::Database(const std::filesystem::path& file, bool create, int busy_timeout_ms) : file_(file) {
    int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_FULLMUTEX | (create ? SQLITE_OPEN_CREATE : 0);
    int rc = sqlite3_open_v2(file.c_str(), &db_, flags, nullptr);
    if (rc != SQLITE_OK) {
        std::string why = db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
        sqlite3_close(db_);
        db_ = nullptr;
        throw runtime_error("cannot open the history database " + file.string() + ": " + why,
                            create ? "check that the folder is writable, or point --history-db / GPUVET_HISTORY_DB "
                                     "at another file"
                                   : "run a check first (it records one), or name the file with --history-db");
    }
    sqlite3_busy_timeout(db_, busy_timeout_ms);
    sqlite3_extended_result_codes(db_, 1);
}

Database::~Database() { sqlite3_close(db_); }

void Database::fail(const std::string& what) const {
    throw runtime_error("history database " + file_.string() + ": " + what + ": " + sqlite3_errmsg(db_),
                        "another gpuvet may hold it for longer than the wait, or the file is damaged: "
                        "`sqlite3 FILE 'PRAGMA integrity_check'` says which");
}

void Database::exec(const std::string& sql) {
    char* err = nullptr;
    if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
        std::string msg = err ? err : "unknown error";
        sqlite3_free(err);
        throw runtime_error("history database " + file_.string() + ": " + msg,
                            "another gpuvet may hold it for longer than the wait, or the file is damaged");
    }
}

Statement Database::prepare(const std::string& sql) {
    sqlite3_stmt* s = nullptr;
    if (sqlite3_prepare_v2(db_, sql.c_str(), int(sql.size()), &s, nullptr) != SQLITE_OK) fail("cannot prepare");
    return Statement(*this, s);
}

std::int64_t Database::last_insert_id() const { return sqlite3_last_insert_rowid(db_); }
int Database::changes() const { return sqlite3_changes(db_); }

Statement::~Statement() { sqlite3_finalize(s_); }

Statement& Statement::bind(int i, std::int64_t v) {
    if (sqlite3_bind_int64(s_, i, v) != SQLITE_OK) db_->fail("bind");
    return *this;
}
Statement& Statement::bind(int i, double v) {
    if (sqlite3_bind_double(s_, i, v) != SQLITE_OK) db_->fail("bind");
    return *this;
}
Statement& Statement::bind(int i, const std::string& v) {
    if (sqlite3_bind_text(s_, i, v.data(), int(v.size()), SQLITE_TRANSIENT) != SQLITE_OK) db_->fail("bind");
    return *this;
}
Statement& Statement::bind_null(int i) {
    if (sqlite3_bind_null(s_, i) != SQLITE_OK) db_->fail("bind");
    return *this;
}
Statement& Statement::bind(int i, const std::optional<std::string>& v) { return v ? bind(i, *v) : bind_null(i); }
Statement& Statement::bind(int i, const std::optional<double>& v) { return v ? bind(i, *v) : bind_null(i); }
Statement& Statement::bind(int i, const std::optional<std::int64_t>& v) { return v ? bind(i, *v) : bind_null(i); }

bool Statement::step() {
    int rc = sqlite3_step(s_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    db_->fail("step");
}

void Statement::reset() {
    sqlite3_reset(s_);
    sqlite3_clear_bindings(s_);
}

std::int64_t Statement::int64(int col) const { return sqlite3_column_int64(s_, col); }
double Statement::real(int col) const { return sqlite3_column_double(s_, col); }
bool Statement::is_null(int col) const { return sqlite3_column_type(s_, col) == SQLITE_NULL; }
std::string Statement::text(int col) const {
    const unsigned char* t = sqlite3_column_text(s_, col);
    return t ? std::string(reinterpret_cast<const char*>(t), std::size_t(sqlite3_column_bytes(s_, col))) : "";
}
std::optional<std::string> Statement::opt_text(int col) const {
    return is_null(col) ? std::nullopt : std::optional<std::string>(text(col));
}
std::optional<double> Statement::opt_real(int col) const {
    return is_null(col) ? std::nullopt : std::optional<double>(real(col));
}
std::optional<std::int64_t> Statement::opt_int64(int col) const {
    return is_null(col) ? std::nullopt : std::optional<std::int64_t>(int64(col));
}

Transaction::Transaction(Database& db) : db_(db) { db_.exec("BEGIN IMMEDIATE"); }

Transaction::~Transaction() {
    if (!open_) return;
    try {
        db_.exec("ROLLBACK");
    } catch (...) {  // the connection's close rolls back what is left
    }
}

void Transaction::commit() {
    db_.exec("COMMIT");
    open_ = false;
}

}  // namespace gpuvet::history
