#include "agent/state_db.h"

#include <fcntl.h>
#include <sqlite3.h>
#include <sys/file.h>
#include <unistd.h>

#include <functional>
#include <system_error>

namespace suanli::agent {
namespace {

using core::Result;
using core::Status;
using store::BindAll;
using store::ColumnText;
using store::ResetOnExit;

constexpr const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) STRICT;
CREATE TABLE IF NOT EXISTS pod_seq (pod_id TEXT PRIMARY KEY, next_seq INTEGER NOT NULL) STRICT;
CREATE TABLE IF NOT EXISTS outbox (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  pod_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  body TEXT NOT NULL
) STRICT;
)sql";

}  // namespace

Result<std::unique_ptr<StateDb>> StateDb::Open(const std::filesystem::path& dir) {
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error) {
    return core::UnavailableError("cannot create the agent's state directory " + dir.string() +
                                  ": " + error.message());
  }
  std::filesystem::permissions(dir, std::filesystem::perms::owner_all,
                               std::filesystem::perm_options::replace, error);
  const std::string lock_path = (dir / "agent.lock").string();
  const int lock_fd = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (lock_fd < 0 || ::flock(lock_fd, LOCK_EX | LOCK_NB) != 0) {
    if (lock_fd >= 0) ::close(lock_fd);
    return core::FailedPreconditionError("another agent is running with the state directory " +
                                         dir.string() + " (stop it, or give --state-dir)");
  }
  const std::string file = (dir / "agent.db").string();
  Result<store::Connection> db =
      store::Connection::Open(file, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, file);
  if (!db.ok()) {
    ::close(lock_fd);
    return db.status();
  }
  std::unique_ptr<StateDb> state(new StateDb(std::move(db).value(), lock_fd));
  core::MutexLock lock(state->mutex_);
  for (const char* sql : {"PRAGMA journal_mode = WAL", "PRAGMA synchronous = FULL", kSchema}) {
    if (Status status = state->Exec(sql); !status.ok()) {
      return status.WithContext("the agent's state in " + file);
    }
  }
  lock.Unlock();
  return state;
}

StateDb::StateDb(store::Connection db, int lock_fd) : db_(std::move(db)), lock_fd_(lock_fd) {}

StateDb::~StateDb() {
  {
    // Closed before the lock is dropped, so the next agent on this directory opens a file that no
    // other connection has open.
    core::MutexLock lock(mutex_);
    const store::Connection closing = std::move(db_);
  }
  ::close(lock_fd_);
}

Status StateDb::Exec(const char* sql) {
  if (db_.Exec(sql) != SQLITE_OK) return core::InternalError(db_.ErrorMessage());
  return Status();
}

Status StateDb::Error(std::string_view what) const {
  return core::InternalError(std::string(what) + ": " + db_.ErrorMessage());
}

Result<std::optional<std::string>> StateDb::Get(std::string_view key) {
  core::MutexLock lock(mutex_);
  sqlite3_stmt* select = nullptr;
  if (db_.Prepare("SELECT value FROM meta WHERE key = ?", &select) != SQLITE_OK) {
    return Error("reading the agent's state");
  }
  ResetOnExit reset(select);
  if (BindAll(select, key) != SQLITE_OK) return Error("reading the agent's state");
  const int rc = sqlite3_step(select);
  if (rc == SQLITE_ROW) return std::optional<std::string>(ColumnText(select, 0));
  if (rc == SQLITE_DONE) return std::optional<std::string>();
  return Error("reading the agent's state");
}

Status StateDb::Set(std::string_view key, std::string_view value) {
  core::MutexLock lock(mutex_);
  sqlite3_stmt* upsert = nullptr;
  if (db_.Prepare("INSERT INTO meta (key, value) VALUES (?, ?) "
                  "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                  &upsert) != SQLITE_OK) {
    return Error("writing the agent's state");
  }
  ResetOnExit reset(upsert);
  if (BindAll(upsert, key, value) != SQLITE_OK || sqlite3_step(upsert) != SQLITE_DONE) {
    return Error("writing the agent's state");
  }
  return Status();
}

Result<PendingReport> StateDb::Enqueue(std::string_view pod_id,
                                       const std::function<std::string(int64_t)>& make_body) {
  core::MutexLock lock(mutex_);
  if (Status status = Exec("BEGIN IMMEDIATE"); !status.ok()) return status;
  // The error is read before the rollback, which would replace SQLite's message with its own.
  auto fail = [&]() REQUIRES(mutex_) {
    Status status = Error("queueing a report for " + std::string(pod_id));
    (void)Exec("ROLLBACK");
    return status;
  };
  PendingReport report;
  report.pod_id = pod_id;
  {
    sqlite3_stmt* next = nullptr;
    if (db_.Prepare("INSERT INTO pod_seq (pod_id, next_seq) VALUES (?, 2) "
                    "ON CONFLICT (pod_id) DO UPDATE SET next_seq = next_seq + 1 "
                    "RETURNING next_seq - 1",
                    &next) != SQLITE_OK) {
      return fail();
    }
    ResetOnExit reset(next);
    if (BindAll(next, pod_id) != SQLITE_OK || sqlite3_step(next) != SQLITE_ROW) return fail();
    report.seq = sqlite3_column_int64(next, 0);
  }
  report.body = make_body(report.seq);
  {
    sqlite3_stmt* insert = nullptr;
    if (db_.Prepare("INSERT INTO outbox (pod_id, seq, body) VALUES (?, ?, ?)", &insert) !=
        SQLITE_OK) {
      return fail();
    }
    ResetOnExit reset(insert);
    if (BindAll(insert, pod_id, report.seq, std::string_view(report.body)) != SQLITE_OK ||
        sqlite3_step(insert) != SQLITE_DONE) {
      return fail();
    }
  }
  report.id = sqlite3_last_insert_rowid(db_.db());
  if (Status status = Exec("COMMIT"); !status.ok()) {
    (void)Exec("ROLLBACK");
    return status;
  }
  return report;
}

Result<std::vector<PendingReport>> StateDb::Pending(size_t limit) {
  core::MutexLock lock(mutex_);
  sqlite3_stmt* select = nullptr;
  if (db_.Prepare("SELECT id, pod_id, seq, body FROM outbox ORDER BY id LIMIT ?", &select) !=
      SQLITE_OK) {
    return Error("reading the outbox");
  }
  ResetOnExit reset(select);
  if (BindAll(select, static_cast<int64_t>(limit)) != SQLITE_OK) return Error("reading the outbox");
  std::vector<PendingReport> reports;
  int rc = 0;
  while ((rc = sqlite3_step(select)) == SQLITE_ROW) {
    reports.push_back({sqlite3_column_int64(select, 0), ColumnText(select, 1),
                       sqlite3_column_int64(select, 2), ColumnText(select, 3)});
  }
  if (rc != SQLITE_DONE) return Error("reading the outbox");
  return reports;
}

Status StateDb::Acknowledge(int64_t id) {
  core::MutexLock lock(mutex_);
  sqlite3_stmt* remove = nullptr;
  if (db_.Prepare("DELETE FROM outbox WHERE id = ?", &remove) != SQLITE_OK) {
    return Error("updating the outbox");
  }
  ResetOnExit reset(remove);
  if (BindAll(remove, id) != SQLITE_OK || sqlite3_step(remove) != SQLITE_DONE) {
    return Error("updating the outbox");
  }
  return Status();
}

Result<int64_t> StateDb::PendingCount() {
  core::MutexLock lock(mutex_);
  sqlite3_stmt* count = nullptr;
  if (db_.Prepare("SELECT count(*) FROM outbox", &count) != SQLITE_OK) {
    return Error("reading the outbox");
  }
  ResetOnExit reset(count);
  if (sqlite3_step(count) != SQLITE_ROW) return Error("reading the outbox");
  return sqlite3_column_int64(count, 0);
}

}  // namespace suanli::agent
