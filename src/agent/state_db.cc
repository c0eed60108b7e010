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

// One prepared statement, finalized on every path out.
class Statement {
 public:
  Statement(sqlite3* db, std::string_view sql) : db_(db) {
    sqlite3_prepare_v2(db, sql.data(), static_cast<int>(sql.size()), &statement_, nullptr);
  }
  ~Statement() { sqlite3_finalize(statement_); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  bool ok() const { return statement_ != nullptr; }
  void Bind(int index, std::string_view text) {
    sqlite3_bind_text(statement_, index, text.data(), static_cast<int>(text.size()),
                      SQLITE_TRANSIENT);
  }
  void Bind(int index, int64_t number) { sqlite3_bind_int64(statement_, index, number); }
  int Step() { return sqlite3_step(statement_); }
  int64_t Int(int column) { return sqlite3_column_int64(statement_, column); }
  std::string Text(int column) {
    const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(statement_, column));
    return text == nullptr ? std::string() : std::string(text);
  }
  Status Error(std::string_view what) const {
    return core::InternalError(std::string(what) + ": " + sqlite3_errmsg(db_));
  }

 private:
  sqlite3* db_;
  sqlite3_stmt* statement_ = nullptr;
};

constexpr std::string_view kSchema = R"sql(
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
  sqlite3* db = nullptr;
  const std::string file = (dir / "agent.db").string();
  if (sqlite3_open_v2(file.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) !=
      SQLITE_OK) {
    std::string message = db ? sqlite3_errmsg(db) : "out of memory";
    sqlite3_close(db);
    ::close(lock_fd);
    return core::UnavailableError("cannot open " + file + ": " + message);
  }
  std::unique_ptr<StateDb> state(new StateDb(db, lock_fd));
  for (std::string_view sql : {std::string_view("PRAGMA journal_mode = WAL"),
                               std::string_view("PRAGMA synchronous = FULL"), kSchema}) {
    if (Status status = state->Exec(sql); !status.ok()) {
      return status.WithContext("the agent's state in " + file);
    }
  }
  return state;
}

StateDb::StateDb(sqlite3* db, int lock_fd) : db_(db), lock_fd_(lock_fd) {}

StateDb::~StateDb() {
  sqlite3_close(db_);
  ::close(lock_fd_);
}

Status StateDb::Exec(std::string_view sql) {
  char* message = nullptr;
  if (sqlite3_exec(db_, std::string(sql).c_str(), nullptr, nullptr, &message) != SQLITE_OK) {
    std::string text = message ? message : sqlite3_errmsg(db_);
    sqlite3_free(message);
    return core::InternalError(text);
  }
  return Status();
}

Result<std::optional<std::string>> StateDb::Get(std::string_view key) {
  std::lock_guard lock(mutex_);
  Statement select(db_, "SELECT value FROM meta WHERE key = ?");
  if (!select.ok()) return select.Error("reading the agent's state");
  select.Bind(1, key);
  const int rc = select.Step();
  if (rc == SQLITE_ROW) return std::optional<std::string>(select.Text(0));
  if (rc == SQLITE_DONE) return std::optional<std::string>();
  return select.Error("reading the agent's state");
}

Status StateDb::Set(std::string_view key, std::string_view value) {
  std::lock_guard lock(mutex_);
  Statement upsert(db_,
                   "INSERT INTO meta (key, value) VALUES (?, ?) "
                   "ON CONFLICT (key) DO UPDATE SET value = excluded.value");
  if (!upsert.ok()) return upsert.Error("writing the agent's state");
  upsert.Bind(1, key);
  upsert.Bind(2, value);
  if (upsert.Step() != SQLITE_DONE) return upsert.Error("writing the agent's state");
  return Status();
}

Result<PendingReport> StateDb::Enqueue(std::string_view pod_id,
                                       const std::function<std::string(int64_t)>& make_body) {
  std::lock_guard lock(mutex_);
  if (Status status = Exec("BEGIN IMMEDIATE"); !status.ok()) return status;
  auto fail = [&](const Statement& statement) {
    (void)Exec("ROLLBACK");
    return statement.Error("queueing a report for " + std::string(pod_id));
  };
  PendingReport report;
  report.pod_id = pod_id;
  {
    Statement next(db_,
                   "INSERT INTO pod_seq (pod_id, next_seq) VALUES (?, 2) "
                   "ON CONFLICT (pod_id) DO UPDATE SET next_seq = next_seq + 1 "
                   "RETURNING next_seq - 1");
    if (!next.ok()) return fail(next);
    next.Bind(1, pod_id);
    if (next.Step() != SQLITE_ROW) return fail(next);
    report.seq = next.Int(0);
  }
  report.body = make_body(report.seq);
  {
    Statement insert(db_, "INSERT INTO outbox (pod_id, seq, body) VALUES (?, ?, ?)");
    if (!insert.ok()) return fail(insert);
    insert.Bind(1, pod_id);
    insert.Bind(2, report.seq);
    insert.Bind(3, report.body);
    if (insert.Step() != SQLITE_DONE) return fail(insert);
  }
  report.id = sqlite3_last_insert_rowid(db_);
  if (Status status = Exec("COMMIT"); !status.ok()) {
    (void)Exec("ROLLBACK");
    return status;
  }
  return report;
}

Result<std::vector<PendingReport>> StateDb::Pending(size_t limit) {
  std::lock_guard lock(mutex_);
  Statement select(db_, "SELECT id, pod_id, seq, body FROM outbox ORDER BY id LIMIT ?");
  if (!select.ok()) return select.Error("reading the outbox");
  select.Bind(1, static_cast<int64_t>(limit));
  std::vector<PendingReport> reports;
  int rc = 0;
  while ((rc = select.Step()) == SQLITE_ROW) {
    reports.push_back({select.Int(0), select.Text(1), select.Int(2), select.Text(3)});
  }
  if (rc != SQLITE_DONE) return select.Error("reading the outbox");
  return reports;
}

Status StateDb::Acknowledge(int64_t id) {
  std::lock_guard lock(mutex_);
  Statement remove(db_, "DELETE FROM outbox WHERE id = ?");
  if (!remove.ok()) return remove.Error("updating the outbox");
  remove.Bind(1, id);
  if (remove.Step() != SQLITE_DONE) return remove.Error("updating the outbox");
  return Status();
}

Result<int64_t> StateDb::PendingCount() {
  std::lock_guard lock(mutex_);
  Statement count(db_, "SELECT count(*) FROM outbox");
  if (!count.ok() || count.Step() != SQLITE_ROW) return count.Error("reading the outbox");
  return count.Int(0);
}

}  // namespace suanli::agent
