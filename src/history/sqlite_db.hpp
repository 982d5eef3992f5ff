// A thin owner of one SQLite connection (Debian's libsqlite3, linked): statements with typed
// binds and columns, and transactions that roll back unless committed. Every failure is a
// gpuvet::Error naming the database file and SQLite's own words.
#pragma once
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

struct sqlite3;
struct sqlite3_stmt;

namespace gpuvet::history {

class Statement;

class Database {
public:
    // Opens (creating when `create`) the file. Waits up to `busy_timeout_ms` on another writer's
    // lock instead of failing at once.
    Database(const std::filesystem::path& file, bool create, int busy_timeout_ms);
    ~Database();
    Database(const Database&) = delete;
    Database& operator=(const Database&) = delete;

    void exec(const std::string& sql);
    Statement prepare(const std::string& sql);
    std::int64_t last_insert_id() const;
    int changes() const;
    const std::filesystem::path& file() const { return file_; }
    [[noreturn]] void fail(const std::string& what) const;

private:
    sqlite3* db_ = nullptr;
    std::filesystem::path file_;
};

class Statement {
public:
    Statement(Database& db, sqlite3_stmt* s) : db_(&db), s_(s) {}
    ~Statement();
    Statement(Statement&& o) noexcept : db_(o.db_), s_(o.s_) { o.s_ = nullptr; }
    Statement(const Statement&) = delete;
    Statement& operator=(const Statement&) = delete;

    // Binds are 1-based, as in SQL's ?1, ?2...
    Statement& bind(int i, std::int64_t v);
    Statement& bind(int i, int v) { return bind(i, std::int64_t(v)); }
    Statement& bind(int i, double v);
    Statement& bind(int i, const std::string& v);
    Statement& bind(int i, const char* v) { return bind(i, std::string(v)); }
    Statement& bind(int i, const std::optional<std::string>& v);
    Statement& bind(int i, const std::optional<double>& v);
    Statement& bind(int i, const std::optional<std::int64_t>& v);
    Statement& bind_null(int i);
    // A row is ready (true) or the statement is done (false).
    bool step();
    void reset();
    std::int64_t int64(int col) const;
    double real(int col) const;
    std::string text(int col) const;
    bool is_null(int col) const;
    std::optional<std::string> opt_text(int col) const;
    std::optional<double> opt_real(int col) const;
    std::optional<std::int64_t> opt_int64(int col) const;

private:
    Database* db_;
    sqlite3_stmt* s_;
};

// BEGIN IMMEDIATE: takes the write lock at the start, so two writers queue on the busy timeout
// instead of one failing at its first write. Rolls back in the destructor unless committed.
class Transaction {
public:
    explicit Transaction(Database& db);
    ~Transaction();
    Transaction(const Transaction&) = delete;
    Transaction& operator=(const Transaction&) = delete;
    void commit();

private:
    Database& db_;
    bool open_ = true;
};

}  // namespace gpuvet::history
