// SqliteStore: the Store on one SQLite file (store.h).
//
// Two connections: the writer, used only by Commit (one thread at a time: CommitQueue's writer),
// and a read-only one behind reader_mutex_ for Load, Ledger and Transitions, so that history reads
// never wait behind an fsync (WAL lets readers run beside the writer). SQLite's own mutexes are off
// (SQLITE_OPEN_NOMUTEX) because each connection has exactly one user at a time.
//
// Thread-safety: Commit from one thread at a time; Load, Ledger and Transitions from any thread.
#include <fcntl.h>
#include <sqlite3.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "core/mutex.h"
#include "store/rows.h"
#include "store/sqlite.h"
#include "store/store.h"

namespace suanli::store {

namespace {

// Indexed by Collection; also the table names.
constexpr std::array<std::string_view, 14> kCollectionNames = {
    "users",    "api_tokens", "ssh_keys", "templates", "pods",    "nodes",     "join_tokens",
    "settings", "endpoints",  "jobs",     "webhooks",  "volumes", "snapshots", "projects"};

}  // namespace

std::string_view CollectionName(Collection collection) {
  const auto index = static_cast<size_t>(collection);
  SUANLI_CHECK(index < kCollectionNames.size(), "CollectionName of a value outside the enum");
  return kCollectionNames[index];
}

namespace {

using core::Result;
using core::Status;

// The schema, one step per version: step i takes user_version i to i + 1. A step, once released,
// never changes (a database in the field already ran it); changes are new steps at the end. That is
// also why the tables are spelled out rather than generated from kCollections.
constexpr std::array<const char*, 6> kMigrations = {
    R"sql(
CREATE TABLE users (id TEXT PRIMARY KEY, doc TEXT NOT NULL CHECK (json_valid(doc))) STRICT;
CREATE TABLE api_tokens (id TEXT PRIMARY KEY, doc TEXT NOT NULL CHECK (json_valid(doc))) STRICT;
CREATE TABLE ssh_keys (id TEXT PRIMARY KEY, doc TEXT NOT NULL CHECK (json_valid(doc))) STRICT;
CREATE TABLE templates (id TEXT PRIMARY KEY, doc TEXT NOT NULL CHECK (json_valid(doc))) STRICT;
CREATE TABLE pods (id TEXT PRIMARY KEY, doc TEXT NOT NULL CHECK (json_valid(doc))) STRICT;
CREATE TABLE nodes (id TEXT PRIMARY KEY, doc TEXT NOT NULL CHECK (json_valid(doc))) STRICT;
CREATE TABLE join_tokens (id TEXT PRIMARY KEY, doc TEXT NOT NULL CHECK (json_valid(doc))) STRICT;
CREATE TABLE settings (id TEXT PRIMARY KEY, doc TEXT NOT NULL CHECK (json_valid(doc))) STRICT;
CREATE TABLE transitions (
  seq INTEGER PRIMARY KEY,
  pod_id TEXT NOT NULL,
  user_id TEXT NOT NULL,
  at_ns INTEGER NOT NULL,
  from_state TEXT NOT NULL,
  to_state TEXT NOT NULL,
  node_id TEXT NOT NULL,
  gpu_type TEXT NOT NULL,
  gpu_count INTEGER NOT NULL,
  gpu_price_micros INTEGER NOT NULL,
  reason TEXT NOT NULL
) STRICT;
CREATE INDEX transitions_by_pod ON transitions (pod_id);
CREATE INDEX transitions_by_user ON transitions (user_id);
CREATE TABLE ledger (
  seq INTEGER PRIMARY KEY,
  user_id TEXT NOT NULL,
  pod_id TEXT NOT NULL,
  kind TEXT NOT NULL CHECK (kind IN ('credit', 'gpu', 'storage')),
  amount_micros INTEGER NOT NULL,
  from_ns INTEGER NOT NULL,
  to_ns INTEGER NOT NULL,
  at_ns INTEGER NOT NULL,
  note TEXT NOT NULL
) STRICT;
CREATE INDEX ledger_by_user_to ON ledger (user_id, to_ns);
CREATE INDEX ledger_by_pod ON ledger (pod_id);
)sql",
    // Serverless endpoints and their jobs.
    R"sql(
CREATE TABLE endpoints (id TEXT PRIMARY KEY, doc TEXT NOT NULL CHECK (json_valid(doc))) STRICT;
CREATE TABLE jobs (id TEXT PRIMARY KEY, doc TEXT NOT NULL CHECK (json_valid(doc))) STRICT;
)sql",
    // The event stream, the audit log, and users' webhooks for their events.
    R"sql(
CREATE TABLE webhooks (id TEXT PRIMARY KEY, doc TEXT NOT NULL CHECK (json_valid(doc))) STRICT;
CREATE TABLE events (
  seq INTEGER PRIMARY KEY,
  at_ns INTEGER NOT NULL,
  kind TEXT NOT NULL,
  object_id TEXT NOT NULL,
  user_id TEXT NOT NULL,
  message TEXT NOT NULL,
  detail TEXT NOT NULL CHECK (json_valid(detail))
) STRICT;
CREATE INDEX events_by_user ON events (user_id, seq);
CREATE INDEX events_by_object ON events (object_id, seq);
CREATE INDEX events_by_at ON events (at_ns);
CREATE TABLE audit (
  seq INTEGER PRIMARY KEY,
  at_ns INTEGER NOT NULL,
  user_id TEXT NOT NULL,
  token_id TEXT NOT NULL,
  action TEXT NOT NULL,
  object_id TEXT NOT NULL,
  status INTEGER NOT NULL,
  error_code TEXT NOT NULL
) STRICT;
CREATE INDEX audit_by_user ON audit (user_id, seq);
CREATE INDEX audit_by_at ON audit (at_ns);
)sql",
    // Volumes as a resource of their own.
    R"sql(
CREATE TABLE volumes (id TEXT PRIMARY KEY, doc TEXT NOT NULL CHECK (json_valid(doc))) STRICT;
)sql",
    // Snapshots of volumes.
    R"sql(
CREATE TABLE snapshots (id TEXT PRIMARY KEY, doc TEXT NOT NULL CHECK (json_valid(doc))) STRICT;
)sql",
    // Projects (teams).
    R"sql(
CREATE TABLE projects (id TEXT PRIMARY KEY, doc TEXT NOT NULL CHECK (json_valid(doc))) STRICT;
)sql",
};

// `<store>.lock`, held with flock(LOCK_EX) for the life of the store so that a second server on the
// same file fails at start instead of interleaving writes with the first. The kernel drops the lock
// when the process dies, kill -9 included, so a stale file never blocks a restart; the file itself
// stays (removing it would race with a server that just opened it).
class LockFile {
 public:
  static Result<LockFile> Acquire(const std::filesystem::path& store_file) {
    const std::string path = store_file.string() + ".lock";
    LockFile lock(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644));
    if (lock.fd_ < 0) {
      return core::UnavailableError("cannot open the lock file " + path + ": " +
                                    std::strerror(errno));
    }
    if (::flock(lock.fd_, LOCK_EX | LOCK_NB) != 0) {
      if (errno != EWOULDBLOCK) {
        return core::UnavailableError("cannot lock " + path + ": " + std::strerror(errno));
      }
      std::string holder = lock.ReadPid();
      return core::UnavailableError("the store " + store_file.string() +
                                    " is in use by another suanli server" +
                                    (holder.empty() ? "" : " (pid " + holder + ")") +
                                    "; stop it or give this one another data directory");
    }
    const std::string pid = std::to_string(::getpid());
    if (::ftruncate(lock.fd_, 0) != 0 ||
        ::pwrite(lock.fd_, pid.data(), pid.size(), 0) != static_cast<ssize_t>(pid.size())) {
      // The pid only makes the other server's message friendlier; the flock is what excludes.
    }
    return lock;
  }

  LockFile(LockFile&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  LockFile& operator=(LockFile&& other) noexcept {
    std::swap(fd_, other.fd_);
    return *this;
  }
  LockFile(const LockFile&) = delete;
  LockFile& operator=(const LockFile&) = delete;
  ~LockFile() {
    if (fd_ >= 0) ::close(fd_);
  }

 private:
  explicit LockFile(int fd) : fd_(fd) {}

  std::string ReadPid() const {
    std::array<char, 32> buffer{};
    const ssize_t read = ::pread(fd_, buffer.data(), buffer.size() - 1, 0);
    if (read <= 0) return {};
    std::string pid(buffer.data(), static_cast<size_t>(read));
    const bool digits =
        std::all_of(pid.begin(), pid.end(), [](char c) { return c >= '0' && c <= '9'; });
    return digits ? pid : std::string();
  }

  int fd_;
};

class SqliteStore final : public Store {
 public:
  SqliteStore(std::string file, LockFile lock, Connection writer, Connection reader)
      : file_(std::move(file)),
        lock_(std::move(lock)),
        writer_(std::move(writer)),
        reader_(std::move(reader)) {}
  SqliteStore(const SqliteStore&) = delete;
  SqliteStore& operator=(const SqliteStore&) = delete;

  Result<Snapshot> Load() override;
  Status Commit(std::span<const Batch> batches) override;
  Result<std::vector<core::LedgerEntry>> Ledger(const HistoryQuery& query) override;
  Result<std::vector<core::Transition>> Transitions(const HistoryQuery& query) override;
  Result<std::vector<core::Event>> Events(const EventQuery& query) override;
  Result<std::vector<core::AuditEntry>> Audit(const AuditQuery& query) override;

 private:
  Status Apply(const Batch& batch);
  // Runs the prepared `sql` with `values` bound, expecting no rows.
  template <typename... Values>
  Status Write(const std::string& sql, std::string_view what, const Values&... values);

  Status ReadError(int rc, std::string_view what) const REQUIRES(reader_mutex_) {
    return SqliteStatus(rc, "cannot read " + std::string(what) + " from the store " + file_ + ": " +
                                reader_.ErrorMessage());
  }

  const std::string file_;
  LockFile lock_;      // released last, after both connections are closed
  Connection writer_;  // only the committing thread
  core::Mutex reader_mutex_;
  Connection reader_ GUARDED_BY(reader_mutex_);
};

template <typename... Values>
Status SqliteStore::Write(const std::string& sql, std::string_view what, const Values&... values) {
  sqlite3_stmt* stmt = nullptr;
  int rc = writer_.Prepare(sql, &stmt);
  if (rc != SQLITE_OK) {
    return SqliteStatus(rc,
                        "cannot prepare '" + sql + "' on " + file_ + ": " + writer_.ErrorMessage());
  }
  ResetOnExit reset(stmt);
  rc = BindAll(stmt, values...);
  if (rc == SQLITE_OK) rc = sqlite3_step(stmt);
  if (rc == SQLITE_DONE) return Status::Ok();
  return SqliteStatus(rc, "cannot write " + std::string(what) + " to the store " + file_ + ": " +
                              writer_.ErrorMessage() + "; nothing was written");
}

Status SqliteStore::Apply(const Batch& batch) {
  for (const Document& document : batch.puts) {
    const std::string table(CollectionName(document.collection));
    SUANLI_RETURN_IF_ERROR(Write("INSERT OR REPLACE INTO " + table + " (id, doc) VALUES (?, ?)",
                                 "document " + table + "/" + document.id,
                                 std::string_view(document.id), std::string_view(document.json)));
  }
  for (const DocumentKey& key : batch.deletes) {
    const std::string table(CollectionName(key.collection));
    SUANLI_RETURN_IF_ERROR(Write("DELETE FROM " + table + " WHERE id = ?",
                                 "the deletion of " + table + "/" + key.id,
                                 std::string_view(key.id)));
  }
  for (const core::Transition& transition : batch.transitions) {
    SUANLI_RETURN_IF_ERROR(Write(
        "INSERT INTO transitions (seq, pod_id, user_id, at_ns, from_state, to_state, node_id, "
        "gpu_type, gpu_count, gpu_price_micros, reason) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        "transition seq " + std::to_string(transition.seq), transition.seq,
        std::string_view(transition.pod_id), std::string_view(transition.user_id),
        ToNanos(transition.at), core::PodStateName(transition.from),
        core::PodStateName(transition.to), std::string_view(transition.node_id),
        std::string_view(transition.gpu_type), int64_t{transition.gpu_count},
        transition.gpu_price_per_hour.micros(), std::string_view(transition.reason)));
  }
  for (const core::LedgerEntry& entry : batch.ledger) {
    SUANLI_RETURN_IF_ERROR(Write(
        "INSERT INTO ledger (seq, user_id, pod_id, kind, amount_micros, from_ns, to_ns, at_ns, "
        "note) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        "ledger entry seq " + std::to_string(entry.seq), entry.seq, std::string_view(entry.user_id),
        std::string_view(entry.pod_id), LedgerKindName(entry.kind), entry.amount.micros(),
        ToNanos(entry.from), ToNanos(entry.to), ToNanos(entry.at), std::string_view(entry.note)));
  }
  for (const core::Event& event : batch.events) {
    SUANLI_RETURN_IF_ERROR(Write(
        "INSERT INTO events (seq, at_ns, kind, object_id, user_id, message, detail) VALUES (?, ?, "
        "?, ?, ?, ?, ?)",
        "event seq " + std::to_string(event.seq), event.seq, ToNanos(event.at),
        std::string_view(event.kind), std::string_view(event.object_id),
        std::string_view(event.user_id), std::string_view(event.message),
        std::string_view(event.detail)));
  }
  for (const core::AuditEntry& entry : batch.audit) {
    SUANLI_RETURN_IF_ERROR(Write(
        "INSERT INTO audit (seq, at_ns, user_id, token_id, action, object_id, status, error_code) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        "audit entry seq " + std::to_string(entry.seq), entry.seq, ToNanos(entry.at),
        std::string_view(entry.user_id), std::string_view(entry.token_id),
        std::string_view(entry.action), std::string_view(entry.object_id), int64_t{entry.status},
        std::string_view(entry.error_code)));
  }
  // The newest row stays, so that the last seq (and so every seq) is never given out again.
  if (batch.expire_events_before) {
    SUANLI_RETURN_IF_ERROR(
        Write("DELETE FROM events WHERE at_ns < ? AND seq < (SELECT MAX(seq) FROM events)",
              "the expiry of old events", ToNanos(*batch.expire_events_before)));
  }
  if (batch.expire_audit_before) {
    SUANLI_RETURN_IF_ERROR(
        Write("DELETE FROM audit WHERE at_ns < ? AND seq < (SELECT MAX(seq) FROM audit)",
              "the expiry of old audit entries", ToNanos(*batch.expire_audit_before)));
  }
  return Status::Ok();
}

Status SqliteStore::Commit(std::span<const Batch> batches) {
  if (std::all_of(batches.begin(), batches.end(), [](const Batch& b) { return b.empty(); })) {
    return Status::Ok();
  }
  int rc = writer_.Exec("BEGIN IMMEDIATE");
  if (rc != SQLITE_OK) {
    return SqliteStatus(
        rc, "cannot begin a transaction on the store " + file_ + ": " + writer_.ErrorMessage());
  }
  Status status;
  for (const Batch& batch : batches) {
    status = Apply(batch);
    if (!status.ok()) break;
  }
  if (status.ok()) {
    rc = writer_.Exec("COMMIT");
    if (rc != SQLITE_OK) {
      status = SqliteStatus(rc, "cannot commit to the store " + file_ + ": " +
                                    writer_.ErrorMessage() + "; nothing was written");
    }
  }
  // SQLite may already have rolled back (after some I/O errors); otherwise undo what was applied.
  if (!status.ok() && sqlite3_get_autocommit(writer_.db()) == 0) writer_.Exec("ROLLBACK");
  return status;
}

Result<Snapshot> SqliteStore::Load() {
  core::MutexLock lock(reader_mutex_);
  // One read transaction, so the documents and the last seqs are one consistent snapshot.
  int rc = reader_.Exec("BEGIN");
  if (rc != SQLITE_OK) return ReadError(rc, "a snapshot");
  struct EndRead {
    Connection& reader;
    ~EndRead() { reader.Exec("ROLLBACK"); }
  } end_read{reader_};

  Snapshot snapshot;
  for (Collection collection : kCollections) {
    const std::string table(CollectionName(collection));
    sqlite3_stmt* stmt = nullptr;
    rc = reader_.Prepare("SELECT id, doc FROM " + table + " ORDER BY id", &stmt);
    if (rc != SQLITE_OK) return ReadError(rc, table);
    ResetOnExit reset(stmt);
    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
      snapshot.documents.push_back({collection, ColumnText(stmt, 0), ColumnText(stmt, 1)});
    }
    if (rc != SQLITE_DONE) return ReadError(rc, table);
  }
  for (auto [table, last] : {std::pair{"transitions", &snapshot.last_transition_seq},
                             std::pair{"ledger", &snapshot.last_ledger_seq},
                             std::pair{"events", &snapshot.last_event_seq},
                             std::pair{"audit", &snapshot.last_audit_seq}}) {
    sqlite3_stmt* stmt = nullptr;
    rc = reader_.Prepare(std::string("SELECT COALESCE(MAX(seq), 0) FROM ") + table, &stmt);
    if (rc != SQLITE_OK) return ReadError(rc, table);
    ResetOnExit reset(stmt);
    rc = sqlite3_step(stmt);
    if (rc != SQLITE_ROW) return ReadError(rc, table);
    *last = sqlite3_column_int64(stmt, 0);
  }
  return snapshot;
}

// The WHERE clause of a HistoryQuery on `time_column`; the values bind in the order
// user, pod, from, to (only those present).
std::string HistoryWhere(const HistoryQuery& query, std::string_view time_column) {
  std::string where = " WHERE 1 = 1";
  if (!query.user_id.empty()) where += " AND user_id = ?";
  if (!query.pod_id.empty()) where += " AND pod_id = ?";
  if (query.from) where += " AND " + std::string(time_column) + " >= ?";
  if (query.to) where += " AND " + std::string(time_column) + " < ?";
  return where + " ORDER BY seq";
}

int BindHistory(sqlite3_stmt* stmt, const HistoryQuery& query) {
  int index = 0;
  int rc = SQLITE_OK;
  if (!query.user_id.empty() && rc == SQLITE_OK) rc = BindOne(stmt, ++index, query.user_id);
  if (!query.pod_id.empty() && rc == SQLITE_OK) rc = BindOne(stmt, ++index, query.pod_id);
  if (query.from && rc == SQLITE_OK) rc = BindOne(stmt, ++index, ToNanos(*query.from));
  if (query.to && rc == SQLITE_OK) rc = BindOne(stmt, ++index, ToNanos(*query.to));
  return rc;
}

Result<std::vector<core::LedgerEntry>> SqliteStore::Ledger(const HistoryQuery& query) {
  core::MutexLock lock(reader_mutex_);
  sqlite3_stmt* stmt = nullptr;
  int rc = reader_.Prepare(
      "SELECT seq, user_id, pod_id, kind, amount_micros, from_ns, to_ns, at_ns, note FROM ledger" +
          HistoryWhere(query, "to_ns"),
      &stmt);
  if (rc != SQLITE_OK) return ReadError(rc, "the ledger");
  ResetOnExit reset(stmt);
  rc = BindHistory(stmt, query);
  if (rc != SQLITE_OK) return ReadError(rc, "the ledger");
  std::vector<core::LedgerEntry> entries;
  while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
    core::LedgerEntry entry;
    entry.seq = sqlite3_column_int64(stmt, 0);
    entry.user_id = ColumnText(stmt, 1);
    entry.pod_id = ColumnText(stmt, 2);
    Result<core::LedgerKind> kind = ReadLedgerKind(ColumnText(stmt, 3));
    if (!kind.ok()) return kind.status();
    entry.kind = *kind;
    entry.amount = core::Money::FromMicros(sqlite3_column_int64(stmt, 4));
    entry.from = FromNanos(sqlite3_column_int64(stmt, 5));
    entry.to = FromNanos(sqlite3_column_int64(stmt, 6));
    entry.at = FromNanos(sqlite3_column_int64(stmt, 7));
    entry.note = ColumnText(stmt, 8);
    entries.push_back(std::move(entry));
  }
  if (rc != SQLITE_DONE) return ReadError(rc, "the ledger");
  return entries;
}

Result<std::vector<core::Transition>> SqliteStore::Transitions(const HistoryQuery& query) {
  core::MutexLock lock(reader_mutex_);
  sqlite3_stmt* stmt = nullptr;
  int rc = reader_.Prepare(
      "SELECT seq, pod_id, user_id, at_ns, from_state, to_state, node_id, gpu_type, gpu_count, "
      "gpu_price_micros, reason FROM transitions" +
          HistoryWhere(query, "at_ns"),
      &stmt);
  if (rc != SQLITE_OK) return ReadError(rc, "the transitions");
  ResetOnExit reset(stmt);
  rc = BindHistory(stmt, query);
  if (rc != SQLITE_OK) return ReadError(rc, "the transitions");
  std::vector<core::Transition> transitions;
  while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
    core::Transition transition;
    transition.seq = sqlite3_column_int64(stmt, 0);
    transition.pod_id = ColumnText(stmt, 1);
    transition.user_id = ColumnText(stmt, 2);
    transition.at = FromNanos(sqlite3_column_int64(stmt, 3));
    Result<core::PodState> from = ReadPodState(ColumnText(stmt, 4));
    if (!from.ok()) return from.status();
    Result<core::PodState> to = ReadPodState(ColumnText(stmt, 5));
    if (!to.ok()) return to.status();
    transition.from = *from;
    transition.to = *to;
    transition.node_id = ColumnText(stmt, 6);
    transition.gpu_type = ColumnText(stmt, 7);
    transition.gpu_count = sqlite3_column_int(stmt, 8);
    transition.gpu_price_per_hour = core::Money::FromMicros(sqlite3_column_int64(stmt, 9));
    transition.reason = ColumnText(stmt, 10);
    transitions.push_back(std::move(transition));
  }
  if (rc != SQLITE_DONE) return ReadError(rc, "the transitions");
  return transitions;
}

// " WHERE ..." of an EventQuery or AuditQuery; the values bind in the order the conditions are
// added, through `bind`.
struct Conditions {
  std::string where = " WHERE seq > ?";
  std::vector<std::string> texts;  // bound after `after` and before `since`

  void Add(std::string_view column, const std::string& value) {
    if (value.empty()) return;
    where += " AND " + std::string(column) + " = ?";
    texts.push_back(value);
  }
};

// The SQL that reads `columns` of `table` for a query with these conditions; bind with BindPage.
std::string PageSql(std::string_view columns, std::string_view table, const Conditions& conditions,
                    bool since, bool newest) {
  std::string sql = "SELECT " + std::string(columns) + " FROM " + std::string(table) +
                    conditions.where + (since ? " AND at_ns >= ?" : "") + " ORDER BY seq" +
                    (newest ? " DESC" : "") + " LIMIT ?";
  // The newest N, turned back into seq order.
  if (newest) sql = "SELECT * FROM (" + sql + ") ORDER BY seq";
  return sql;
}

int BindPage(sqlite3_stmt* stmt, int64_t after, const Conditions& conditions,
             const std::optional<core::TimePoint>& since, size_t limit) {
  int index = 0;
  int rc = BindOne(stmt, ++index, after);
  for (const std::string& text : conditions.texts) {
    if (rc == SQLITE_OK) rc = BindOne(stmt, ++index, std::string_view(text));
  }
  if (since && rc == SQLITE_OK) rc = BindOne(stmt, ++index, ToNanos(*since));
  if (rc == SQLITE_OK)
    rc = BindOne(stmt, ++index, static_cast<int64_t>(std::min<size_t>(limit, INT64_MAX)));
  return rc;
}

Result<std::vector<core::Event>> SqliteStore::Events(const EventQuery& query) {
  Conditions conditions;
  conditions.Add("user_id", query.user_id);
  conditions.Add("object_id", query.object_id);
  conditions.Add("kind", query.kind);
  core::MutexLock lock(reader_mutex_);
  sqlite3_stmt* stmt = nullptr;
  int rc = reader_.Prepare(PageSql("seq, at_ns, kind, object_id, user_id, message, detail",
                                   "events", conditions, query.since.has_value(), query.newest),
                           &stmt);
  if (rc != SQLITE_OK) return ReadError(rc, "the events");
  ResetOnExit reset(stmt);
  rc = BindPage(stmt, query.after, conditions, query.since, query.limit);
  if (rc != SQLITE_OK) return ReadError(rc, "the events");
  std::vector<core::Event> events;
  while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
    core::Event& event = events.emplace_back();
    event.seq = sqlite3_column_int64(stmt, 0);
    event.at = FromNanos(sqlite3_column_int64(stmt, 1));
    event.kind = ColumnText(stmt, 2);
    event.object_id = ColumnText(stmt, 3);
    event.user_id = ColumnText(stmt, 4);
    event.message = ColumnText(stmt, 5);
    event.detail = ColumnText(stmt, 6);
  }
  if (rc != SQLITE_DONE) return ReadError(rc, "the events");
  return events;
}

Result<std::vector<core::AuditEntry>> SqliteStore::Audit(const AuditQuery& query) {
  Conditions conditions;
  conditions.Add("user_id", query.user_id);
  core::MutexLock lock(reader_mutex_);
  sqlite3_stmt* stmt = nullptr;
  int rc = reader_.Prepare(
      PageSql("seq, at_ns, user_id, token_id, action, object_id, status, error_code", "audit",
              conditions, query.since.has_value(), query.newest),
      &stmt);
  if (rc != SQLITE_OK) return ReadError(rc, "the audit log");
  ResetOnExit reset(stmt);
  rc = BindPage(stmt, query.after, conditions, query.since, query.limit);
  if (rc != SQLITE_OK) return ReadError(rc, "the audit log");
  std::vector<core::AuditEntry> entries;
  while ((rc = sqlite3_step(stmt)) == SQLITE_ROW) {
    core::AuditEntry& entry = entries.emplace_back();
    entry.seq = sqlite3_column_int64(stmt, 0);
    entry.at = FromNanos(sqlite3_column_int64(stmt, 1));
    entry.user_id = ColumnText(stmt, 2);
    entry.token_id = ColumnText(stmt, 3);
    entry.action = ColumnText(stmt, 4);
    entry.object_id = ColumnText(stmt, 5);
    entry.status = sqlite3_column_int(stmt, 6);
    entry.error_code = ColumnText(stmt, 7);
  }
  if (rc != SQLITE_DONE) return ReadError(rc, "the audit log");
  return entries;
}

// Sets the writer's PRAGMAs and brings the schema to the newest version.
Status Prepare(Connection& writer, const std::string& file) {
  auto failed = [&](int rc, std::string_view what) {
    // Anything that stops the store from opening is "cannot be opened" to the caller.
    Status status = SqliteStatus(
        rc, "cannot " + std::string(what) + " the store " + file + ": " + writer.ErrorMessage());
    return status.code() == core::StatusCode::kInternal ? core::UnavailableError(status.message())
                                                        : status;
  };
  for (const char* pragma :
       {"PRAGMA synchronous = FULL", "PRAGMA foreign_keys = ON", "PRAGMA busy_timeout = 5000"}) {
    const int rc = writer.Exec(pragma);
    if (rc != SQLITE_OK) return failed(rc, "configure");
  }
  Result<std::string> mode = writer.QueryText("PRAGMA journal_mode = WAL");
  if (!mode.ok())
    return core::UnavailableError("cannot open the store " + file + ": " + mode.status().message());
  if (*mode != "wal") {
    return core::UnavailableError("the store " + file +
                                  " cannot use write-ahead logging (journal mode '" + *mode +
                                  "'); put it on a local file system");
  }

  Result<std::string> version_text = writer.QueryText("PRAGMA user_version");
  if (!version_text.ok()) {
    return core::UnavailableError("cannot open the store " + file + ": " +
                                  version_text.status().message());
  }
  const int64_t version = std::stoll(*version_text);
  const auto known = static_cast<int64_t>(kMigrations.size());
  if (version > known) {
    return core::FailedPreconditionError(
        "the store " + file + " was written by a newer suanli (schema " + std::to_string(version) +
        ", this one knows up to " + std::to_string(known) + "); upgrade suanli");
  }
  for (int64_t step = version; step < known; ++step) {
    int rc = writer.Exec("BEGIN IMMEDIATE");
    if (rc != SQLITE_OK) return failed(rc, "migrate");
    rc = writer.Exec(kMigrations[static_cast<size_t>(step)]);
    if (rc == SQLITE_OK) {
      rc = writer.Exec(("PRAGMA user_version = " + std::to_string(step + 1)).c_str());
    }
    if (rc == SQLITE_OK) rc = writer.Exec("COMMIT");
    if (rc != SQLITE_OK) {
      Status status = failed(rc, "migrate");
      if (sqlite3_get_autocommit(writer.db()) == 0) writer.Exec("ROLLBACK");
      return status;
    }
  }
  return Status::Ok();
}

}  // namespace

Result<std::unique_ptr<Store>> OpenSqliteStore(const std::filesystem::path& file) {
  // The lock comes first, so that two servers never migrate the same file at once.
  Result<LockFile> lock = LockFile::Acquire(file);
  if (!lock.ok()) return lock.status();
  const std::string name = file.string();
  Result<Connection> writer =
      Connection::Open(name, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, "the store " + name);
  if (!writer.ok()) return writer.status();
  SUANLI_RETURN_IF_ERROR(Prepare(*writer, name));
  // Opened after the writer made the file WAL, which a read-only connection cannot do.
  Result<Connection> reader = Connection::Open(name, SQLITE_OPEN_READONLY, "the store " + name);
  if (!reader.ok()) return reader.status();
  if (const int rc = reader->Exec("PRAGMA busy_timeout = 5000"); rc != SQLITE_OK) {
    return core::UnavailableError("cannot open the store " + name + ": " + reader->ErrorMessage());
  }
  return std::unique_ptr<Store>(std::make_unique<SqliteStore>(
      name, std::move(lock).value(), std::move(writer).value(), std::move(reader).value()));
}

}  // namespace suanli::store
