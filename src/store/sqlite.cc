#include "store/sqlite.h"

#include <utility>

namespace suanli::store {

core::Status SqliteStatus(int rc, std::string message) {
  switch (rc & 0xff) {
    case SQLITE_CONSTRAINT:
    case SQLITE_TOOBIG:
      return core::InvalidArgumentError(std::move(message));
    case SQLITE_FULL:
    case SQLITE_IOERR:
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
    case SQLITE_CANTOPEN:
    case SQLITE_READONLY:
      return core::UnavailableError(std::move(message));
    default:
      return core::InternalError(std::move(message));
  }
}

// A null destructor is SQLITE_STATIC: the caller keeps the text alive until the reset.
int BindOne(sqlite3_stmt* stmt, int index, std::string_view text) {
  return sqlite3_bind_text(stmt, index, text.data(), static_cast<int>(text.size()), nullptr);
}

int BindOne(sqlite3_stmt* stmt, int index, int64_t value) {
  return sqlite3_bind_int64(stmt, index, value);
}

std::string ColumnText(sqlite3_stmt* stmt, int column) {
  const unsigned char* text = sqlite3_column_text(stmt, column);
  if (text == nullptr) return {};
  return {reinterpret_cast<const char*>(text),
          static_cast<size_t>(sqlite3_column_bytes(stmt, column))};
}

core::Result<Connection> Connection::Open(const std::string& file, int flags,
                                          std::string_view what) {
  sqlite3* raw = nullptr;
  const int rc = sqlite3_open_v2(file.c_str(), &raw, flags | SQLITE_OPEN_NOMUTEX, nullptr);
  DbHandle db(raw);  // sqlite3_open_v2 hands out a handle to close even when it fails
  if (rc != SQLITE_OK) {
    return core::UnavailableError("cannot open " + std::string(what) + ": " +
                                  (raw != nullptr ? sqlite3_errmsg(raw) : sqlite3_errstr(rc)));
  }
  sqlite3_extended_result_codes(raw, 1);
  return Connection(std::move(db));
}

int Connection::Prepare(const std::string& sql, sqlite3_stmt** stmt) {
  auto found = statements_.find(sql);
  if (found != statements_.end()) {
    *stmt = found->second.get();
    return SQLITE_OK;
  }
  sqlite3_stmt* raw = nullptr;
  const int rc = sqlite3_prepare_v3(db_.get(), sql.c_str(), static_cast<int>(sql.size()),
                                    SQLITE_PREPARE_PERSISTENT, &raw, nullptr);
  if (rc != SQLITE_OK) {
    sqlite3_finalize(raw);
    return rc;
  }
  statements_.emplace(sql, StmtHandle(raw));
  *stmt = raw;
  return SQLITE_OK;
}

core::Result<std::string> Connection::QueryText(const char* sql) {
  sqlite3_stmt* raw = nullptr;
  int rc = sqlite3_prepare_v2(db_.get(), sql, -1, &raw, nullptr);
  StmtHandle stmt(raw);
  if (rc == SQLITE_OK) rc = sqlite3_step(raw);
  if (rc != SQLITE_ROW) return SqliteStatus(rc, std::string(sql) + ": " + ErrorMessage());
  return ColumnText(raw, 0);
}

}  // namespace suanli::store
