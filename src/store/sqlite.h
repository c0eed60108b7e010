// SQLite's C API behind RAII handles, shared by everything in suanli that keeps a SQLite file: the
// control plane's store (sqlite_store.cc) and the node agent's state (agent/state_db.cc).
//
// Thin on purpose: handles that close and finalize themselves, binding by type, prepared statements
// cached per connection, SQLite's result codes mapped to a Status. Callers still step statements
// and read columns with SQLite's own functions (sqlite3_step, sqlite3_column_int64).
//
// Thread-safety: none of its own. A Connection is opened with SQLITE_OPEN_NOMUTEX, so each has one
// user at a time (a mutex of the owner's, or one thread).
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "core/status.h"

namespace suanli::store {

// The Status of a failed SQLite call (`rc`, extended codes included): a constraint is the caller's
// data (a reused seq, a document that is not JSON): INVALID_ARGUMENT; a full disk, an I/O error or
// a lock held too long may pass: UNAVAILABLE; the rest is ours: INTERNAL.
core::Status SqliteStatus(int rc, std::string message);

struct DbCloser {
  void operator()(sqlite3* db) const { sqlite3_close_v2(db); }
};
struct StmtFinalizer {
  void operator()(sqlite3_stmt* stmt) const { sqlite3_finalize(stmt); }
};
using DbHandle = std::unique_ptr<sqlite3, DbCloser>;
using StmtHandle = std::unique_ptr<sqlite3_stmt, StmtFinalizer>;

// Resets a cached statement when the scope that used it ends, so that it holds no read snapshot
// and no pointers to the caller's strings.
class ResetOnExit {
 public:
  explicit ResetOnExit(sqlite3_stmt* stmt) : stmt_(stmt) {}
  ~ResetOnExit() {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
  }
  ResetOnExit(const ResetOnExit&) = delete;
  ResetOnExit& operator=(const ResetOnExit&) = delete;

 private:
  sqlite3_stmt* stmt_;
};

// Binds parameter `index` (from 1); SQLite's code. Text is not copied: REQUIRES it to outlive the
// binding, which ResetOnExit ends.
int BindOne(sqlite3_stmt* stmt, int index, std::string_view text);
int BindOne(sqlite3_stmt* stmt, int index, int64_t value);

// Binds `values` to parameters 1, 2, ...; the first failure's code, or SQLITE_OK.
template <typename... Values>
int BindAll(sqlite3_stmt* stmt, const Values&... values) {
  int index = 0;
  int rc = SQLITE_OK;
  ((rc = rc == SQLITE_OK ? BindOne(stmt, ++index, values) : rc), ...);
  return rc;
}

// Column `column` of the current row as text; "" for NULL.
std::string ColumnText(sqlite3_stmt* stmt, int column);

// One sqlite3 connection and its prepared statements, used by one thread at a time. Movable, not
// copyable.
class Connection {
 public:
  // Opens `file` with `flags` (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, ...; NOMUTEX is added)
  // and extended result codes on. UNAVAILABLE "cannot open <what>: <SQLite's reason>" on failure;
  // `what` names the file for the reader ("the store /var/lib/suanli/suanli.db").
  static core::Result<Connection> Open(const std::string& file, int flags, std::string_view what);

  sqlite3* db() const { return db_.get(); }
  std::string ErrorMessage() const { return sqlite3_errmsg(db_.get()); }

  // Runs `sql` (statements without results); SQLite's code.
  int Exec(const char* sql) { return sqlite3_exec(db_.get(), sql, nullptr, nullptr, nullptr); }

  // The prepared statement for `sql`, compiled on first use and kept (owned by the connection:
  // valid until it closes); SQLite's code. Reset it after each use (ResetOnExit).
  int Prepare(const std::string& sql, sqlite3_stmt** stmt);

  // The single value of a one-row query such as a PRAGMA.
  core::Result<std::string> QueryText(const char* sql);

 private:
  explicit Connection(DbHandle db) : db_(std::move(db)) {}

  DbHandle db_;
  std::unordered_map<std::string, StmtHandle> statements_;  // destroyed before db_
};

}  // namespace suanli::store
