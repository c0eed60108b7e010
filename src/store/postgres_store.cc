// PostgresStore: the Store on a PostgreSQL database (store.h), for deployments that outgrow one
// SQLite file. Same tables as SqliteStore: a table of JSON documents per collection (the `json`
// type, which keeps the text as written, so a document reads back byte for byte) and typed,
// append-only transitions and ledger.
//
// A commit is one transaction of at most a few statements however many batches it holds: the final
// state of each document (the last put or delete of its id across the batches) goes in one
// INSERT ... SELECT FROM unnest(...) ON CONFLICT per collection, and all transitions and ledger
// entries in one INSERT each; with CommitQueue's group commit, one round trip and one WAL flush
// carry many requests. COMMIT returns once PostgreSQL has flushed its WAL (synchronous_commit on,
// its default), which is the durability the control plane answers on.
//
// One server at a time: the writer connection holds a session advisory lock for its life, so a
// second `suanli server` on the same database fails at start (as the SQLite store's lock file
// does); PostgreSQL drops the lock with the connection, kill -9 included.
//
// When PostgreSQL goes away, a commit fails (UNAVAILABLE) and the control plane stops, as it does
// for a failed SQLite commit: the writer's session held the server lock, which went with it, so it
// must not carry on as if it still had the database to itself; a restart takes the lock again.
// Reads reconnect by themselves.
//
// Thread-safety: Commit from one thread at a time; Load, Ledger and Transitions from any thread
// (their own connection, behind reader_mutex_).
#include <algorithm>
#include <array>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <utility>

#include "core/mutex.h"
#include "store/postgres.h"
#include "store/rows.h"
#include "store/store.h"

namespace suanli::store {
namespace {

using core::Result;
using core::Status;

// Advisory lock keys ("suanli" in ASCII, and that plus one): the server's, held for the life of
// the store, and the migration's, held while the schema changes.
constexpr int64_t kServerLockKey = 0x7375616e6c69;
constexpr int64_t kMigrationLockKey = kServerLockKey + 1;

// The schema, one step per version, as for SQLite (sqlite_store.cc): a released step never changes.
constexpr std::array<const char*, 6> kMigrations = {
    R"sql(
CREATE TABLE users (id TEXT PRIMARY KEY, doc JSON NOT NULL);
CREATE TABLE api_tokens (id TEXT PRIMARY KEY, doc JSON NOT NULL);
CREATE TABLE ssh_keys (id TEXT PRIMARY KEY, doc JSON NOT NULL);
CREATE TABLE templates (id TEXT PRIMARY KEY, doc JSON NOT NULL);
CREATE TABLE pods (id TEXT PRIMARY KEY, doc JSON NOT NULL);
CREATE TABLE nodes (id TEXT PRIMARY KEY, doc JSON NOT NULL);
CREATE TABLE join_tokens (id TEXT PRIMARY KEY, doc JSON NOT NULL);
CREATE TABLE settings (id TEXT PRIMARY KEY, doc JSON NOT NULL);
CREATE TABLE transitions (
  seq BIGINT PRIMARY KEY,
  pod_id TEXT NOT NULL,
  user_id TEXT NOT NULL,
  at_ns BIGINT NOT NULL,
  from_state TEXT NOT NULL,
  to_state TEXT NOT NULL,
  node_id TEXT NOT NULL,
  gpu_type TEXT NOT NULL,
  gpu_count INTEGER NOT NULL,
  gpu_price_micros BIGINT NOT NULL,
  reason TEXT NOT NULL
);
CREATE INDEX transitions_by_pod ON transitions (pod_id);
CREATE INDEX transitions_by_user ON transitions (user_id);
CREATE TABLE ledger (
  seq BIGINT PRIMARY KEY,
  user_id TEXT NOT NULL,
  pod_id TEXT NOT NULL,
  kind TEXT NOT NULL CHECK (kind IN ('credit', 'gpu', 'storage')),
  amount_micros BIGINT NOT NULL,
  from_ns BIGINT NOT NULL,
  to_ns BIGINT NOT NULL,
  at_ns BIGINT NOT NULL,
  note TEXT NOT NULL
);
CREATE INDEX ledger_by_user_to ON ledger (user_id, to_ns);
CREATE INDEX ledger_by_pod ON ledger (pod_id);
)sql",
    // Serverless endpoints and their jobs.
    R"sql(
CREATE TABLE endpoints (id TEXT PRIMARY KEY, doc JSON NOT NULL);
CREATE TABLE jobs (id TEXT PRIMARY KEY, doc JSON NOT NULL);
)sql",
    // The event stream, the audit log, and users' webhooks for their events.
    R"sql(
CREATE TABLE webhooks (id TEXT PRIMARY KEY, doc JSON NOT NULL);
CREATE TABLE events (
  seq BIGINT PRIMARY KEY,
  at_ns BIGINT NOT NULL,
  kind TEXT NOT NULL,
  object_id TEXT NOT NULL,
  user_id TEXT NOT NULL,
  message TEXT NOT NULL,
  detail JSON NOT NULL
);
CREATE INDEX events_by_user ON events (user_id, seq);
CREATE INDEX events_by_object ON events (object_id, seq);
CREATE INDEX events_by_at ON events (at_ns);
CREATE TABLE audit (
  seq BIGINT PRIMARY KEY,
  at_ns BIGINT NOT NULL,
  user_id TEXT NOT NULL,
  token_id TEXT NOT NULL,
  action TEXT NOT NULL,
  object_id TEXT NOT NULL,
  status INTEGER NOT NULL,
  error_code TEXT NOT NULL
);
CREATE INDEX audit_by_user ON audit (user_id, seq);
CREATE INDEX audit_by_at ON audit (at_ns);
)sql",
    // Volumes as a resource of their own.
    R"sql(
CREATE TABLE volumes (id TEXT PRIMARY KEY, doc JSON NOT NULL);
)sql",
    // Snapshots of volumes.
    R"sql(
CREATE TABLE snapshots (id TEXT PRIMARY KEY, doc JSON NOT NULL);
)sql",
    // Projects (teams).
    R"sql(
CREATE TABLE projects (id TEXT PRIMARY KEY, doc JSON NOT NULL);
)sql",
};

// "ledger entry seq 7" from a duplicate key's detail ("Key (seq)=(7) already exists."), so that a
// refused commit names the entry as SQLite's does.
std::string DuplicateSeq(const std::string& message) {
  const size_t start = message.find("(seq)=(");
  if (start == std::string::npos) return "";
  const size_t end = message.find(')', start + 7);
  return end == std::string::npos ? "" : message.substr(start + 7, end - start - 7);
}

class PostgresStore final : public Store {
 public:
  PostgresStore(pg::Connection writer, pg::Connection reader)
      : writer_(std::move(writer)), reader_(std::move(reader)) {}
  PostgresStore(const PostgresStore&) = delete;
  PostgresStore& operator=(const PostgresStore&) = delete;
  // Lets go of the server lock before the session closes: PostgreSQL ends a closed session's
  // backend, and so frees its locks, a moment after the client has gone, and a server started
  // again at once (a restart, a test's) would find the store still "in use" until then.
  ~PostgresStore() override {
    (void)writer_.Exec("SELECT pg_advisory_unlock($1)", {std::to_string(kServerLockKey)},
                       "cannot unlock the store");
  }

  Result<Snapshot> Load() override;
  Status Commit(std::span<const Batch> batches) override;
  Result<std::vector<core::LedgerEntry>> Ledger(const HistoryQuery& query) override;
  Result<std::vector<core::Transition>> Transitions(const HistoryQuery& query) override;
  Result<std::vector<core::Event>> Events(const EventQuery& query) override;
  Result<std::vector<core::AuditEntry>> Audit(const AuditQuery& query) override;

 private:
  Status Apply(std::span<const Batch> batches);
  Status WriteDocuments(Collection collection,
                        const std::map<std::string, std::optional<std::string>>& finals);
  Status WriteTransitions(std::span<const Batch> batches);
  Status WriteLedger(std::span<const Batch> batches);
  Status WriteEventsAndAudit(std::span<const Batch> batches);

  pg::Connection writer_;  // only the committing thread; holds the server lock
  core::Mutex reader_mutex_;
  pg::Connection reader_ GUARDED_BY(reader_mutex_);
};

Status PostgresStore::Commit(std::span<const Batch> batches) {
  if (std::all_of(batches.begin(), batches.end(), [](const Batch& b) { return b.empty(); })) {
    return Status::Ok();
  }
  if (Result<pg::ResultHandle> begin = writer_.Exec("BEGIN", "cannot begin a transaction");
      !begin.ok()) {
    return begin.status();
  }
  Status status = Apply(batches);
  if (status.ok()) {
    Result<pg::ResultHandle> commit =
        writer_.Exec("COMMIT", "cannot commit to the store " + writer_.where());
    if (!commit.ok()) status = commit.status();
  }
  if (!status.ok()) (void)writer_.Exec("ROLLBACK", "cannot roll back");
  return status;
}

Status PostgresStore::Apply(std::span<const Batch> batches) {
  // Each document's final state across the batches, in order: the last put, or nullopt when the
  // last word was a delete. One statement per collection may not touch a row twice.
  std::array<std::map<std::string, std::optional<std::string>>, kCollections.size()> finals;
  for (const Batch& batch : batches) {
    for (const Document& document : batch.puts) {
      finals[static_cast<size_t>(document.collection)][document.id] = document.json;
    }
    for (const DocumentKey& key : batch.deletes) {
      finals[static_cast<size_t>(key.collection)][key.id] = std::nullopt;
    }
  }
  for (Collection collection : kCollections) {
    const auto& documents = finals[static_cast<size_t>(collection)];
    if (!documents.empty()) SUANLI_RETURN_IF_ERROR(WriteDocuments(collection, documents));
  }
  SUANLI_RETURN_IF_ERROR(WriteTransitions(batches));
  SUANLI_RETURN_IF_ERROR(WriteLedger(batches));
  return WriteEventsAndAudit(batches);
}

Status PostgresStore::WriteDocuments(
    Collection collection, const std::map<std::string, std::optional<std::string>>& finals) {
  const std::string table(CollectionName(collection));
  std::vector<std::string> put_ids;
  std::vector<std::string> put_docs;
  std::vector<std::string> deleted;
  for (const auto& [id, json] : finals) {
    if (json) {
      put_ids.push_back(id);
      put_docs.push_back(*json);
    } else {
      deleted.push_back(id);
    }
  }
  if (!deleted.empty()) {
    Result<pg::ResultHandle> done =
        writer_.Exec("DELETE FROM " + table + " WHERE id = ANY($1::text[])",
                     {pg::ArrayLiteral(deleted)}, "cannot delete from " + table);
    if (!done.ok()) return done.status();
  }
  if (put_ids.empty()) return Status::Ok();
  Result<pg::ResultHandle> done = writer_.Exec(
      "INSERT INTO " + table + " (id, doc) SELECT * FROM unnest($1::text[], $2::json[]) " +
          "ON CONFLICT (id) DO UPDATE SET doc = EXCLUDED.doc",
      {pg::ArrayLiteral(put_ids), pg::ArrayLiteral(put_docs)}, "cannot write to " + table);
  if (done.ok() || done.status().code() != core::StatusCode::kInvalidArgument) {
    return done.status();
  }
  // A document that is not JSON: name it, as the caller needs to know which (the transaction is
  // already aborted; this asks the reader connection).
  core::MutexLock lock(reader_mutex_);
  for (size_t i = 0; i < put_ids.size(); ++i) {
    if (!reader_.Exec("SELECT $1::json", {put_docs[i]}, "").ok()) {
      return core::InvalidArgumentError("cannot write document " + table + "/" + put_ids[i] +
                                        " to the store: it is not JSON; nothing was written");
    }
  }
  return done.status();
}

Status PostgresStore::WriteTransitions(std::span<const Batch> batches) {
  std::vector<int64_t> seq, at, count, price;
  std::vector<std::string> pod, user, from, to, node, type, reason;
  for (const Batch& batch : batches) {
    for (const core::Transition& transition : batch.transitions) {
      seq.push_back(transition.seq);
      pod.push_back(transition.pod_id);
      user.push_back(transition.user_id);
      at.push_back(ToNanos(transition.at));
      from.emplace_back(core::PodStateName(transition.from));
      to.emplace_back(core::PodStateName(transition.to));
      node.push_back(transition.node_id);
      type.push_back(transition.gpu_type);
      count.push_back(transition.gpu_count);
      price.push_back(transition.gpu_price_per_hour.micros());
      reason.push_back(transition.reason);
    }
  }
  if (seq.empty()) return Status::Ok();
  Result<pg::ResultHandle> done = writer_.Exec(
      "INSERT INTO transitions (seq, pod_id, user_id, at_ns, from_state, to_state, node_id, "
      "gpu_type, gpu_count, gpu_price_micros, reason) SELECT * FROM unnest($1::bigint[], "
      "$2::text[], $3::text[], $4::bigint[], $5::text[], $6::text[], $7::text[], $8::text[], "
      "$9::int[], $10::bigint[], $11::text[])",
      {pg::ArrayLiteral(seq), pg::ArrayLiteral(pod), pg::ArrayLiteral(user), pg::ArrayLiteral(at),
       pg::ArrayLiteral(from), pg::ArrayLiteral(to), pg::ArrayLiteral(node), pg::ArrayLiteral(type),
       pg::ArrayLiteral(count), pg::ArrayLiteral(price), pg::ArrayLiteral(reason)},
      "cannot write transitions to the store");
  if (!done.ok() && done.status().code() == core::StatusCode::kInvalidArgument) {
    const std::string dup = DuplicateSeq(done.status().message());
    if (!dup.empty()) {
      return core::InvalidArgumentError("cannot write transition seq " + dup +
                                        " to the store: it is taken; nothing was written");
    }
  }
  return done.status();
}

Status PostgresStore::WriteLedger(std::span<const Batch> batches) {
  std::vector<int64_t> seq, amount, from, to, at;
  std::vector<std::string> user, pod, kind, note;
  for (const Batch& batch : batches) {
    for (const core::LedgerEntry& entry : batch.ledger) {
      seq.push_back(entry.seq);
      user.push_back(entry.user_id);
      pod.push_back(entry.pod_id);
      kind.emplace_back(LedgerKindName(entry.kind));
      amount.push_back(entry.amount.micros());
      from.push_back(ToNanos(entry.from));
      to.push_back(ToNanos(entry.to));
      at.push_back(ToNanos(entry.at));
      note.push_back(entry.note);
    }
  }
  if (seq.empty()) return Status::Ok();
  Result<pg::ResultHandle> done = writer_.Exec(
      "INSERT INTO ledger (seq, user_id, pod_id, kind, amount_micros, from_ns, to_ns, at_ns, "
      "note) SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], "
      "$5::bigint[], $6::bigint[], $7::bigint[], $8::bigint[], $9::text[])",
      {pg::ArrayLiteral(seq), pg::ArrayLiteral(user), pg::ArrayLiteral(pod), pg::ArrayLiteral(kind),
       pg::ArrayLiteral(amount), pg::ArrayLiteral(from), pg::ArrayLiteral(to), pg::ArrayLiteral(at),
       pg::ArrayLiteral(note)},
      "cannot write the ledger to the store");
  if (!done.ok() && done.status().code() == core::StatusCode::kInvalidArgument) {
    const std::string dup = DuplicateSeq(done.status().message());
    if (!dup.empty()) {
      return core::InvalidArgumentError("cannot write ledger entry seq " + dup +
                                        " to the store: it is taken; nothing was written");
    }
  }
  return done.status();
}

Status PostgresStore::WriteEventsAndAudit(std::span<const Batch> batches) {
  std::vector<int64_t> seq, at;
  std::vector<std::string> kind, object, user, message, detail;
  std::vector<int64_t> audit_seq, audit_at, audit_status;
  std::vector<std::string> audit_user, audit_token, audit_action, audit_object, audit_error;
  std::optional<core::TimePoint> expire_events, expire_audit;
  for (const Batch& batch : batches) {
    for (const core::Event& event : batch.events) {
      seq.push_back(event.seq);
      at.push_back(ToNanos(event.at));
      kind.push_back(event.kind);
      object.push_back(event.object_id);
      user.push_back(event.user_id);
      message.push_back(event.message);
      detail.push_back(event.detail);
    }
    for (const core::AuditEntry& entry : batch.audit) {
      audit_seq.push_back(entry.seq);
      audit_at.push_back(ToNanos(entry.at));
      audit_user.push_back(entry.user_id);
      audit_token.push_back(entry.token_id);
      audit_action.push_back(entry.action);
      audit_object.push_back(entry.object_id);
      audit_status.push_back(entry.status);
      audit_error.push_back(entry.error_code);
    }
    if (batch.expire_events_before) expire_events = batch.expire_events_before;
    if (batch.expire_audit_before) expire_audit = batch.expire_audit_before;
  }
  auto taken = [](const Result<pg::ResultHandle>& done, std::string_view what) -> Status {
    if (!done.ok() && done.status().code() == core::StatusCode::kInvalidArgument) {
      const std::string dup = DuplicateSeq(done.status().message());
      if (!dup.empty()) {
        return core::InvalidArgumentError("cannot write " + std::string(what) + " seq " + dup +
                                          " to the store: it is taken; nothing was written");
      }
    }
    return done.status();
  };
  if (!seq.empty()) {
    SUANLI_RETURN_IF_ERROR(taken(
        writer_.Exec("INSERT INTO events (seq, at_ns, kind, object_id, user_id, message, detail) "
                     "SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::text[], $4::text[], "
                     "$5::text[], $6::text[], $7::json[])",
                     {pg::ArrayLiteral(seq), pg::ArrayLiteral(at), pg::ArrayLiteral(kind),
                      pg::ArrayLiteral(object), pg::ArrayLiteral(user), pg::ArrayLiteral(message),
                      pg::ArrayLiteral(detail)},
                     "cannot write events to the store"),
        "event"));
  }
  if (!audit_seq.empty()) {
    SUANLI_RETURN_IF_ERROR(taken(
        writer_.Exec(
            "INSERT INTO audit (seq, at_ns, user_id, token_id, action, object_id, status, "
            "error_code) SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::text[], $4::text[], "
            "$5::text[], $6::text[], $7::int[], $8::text[])",
            {pg::ArrayLiteral(audit_seq), pg::ArrayLiteral(audit_at), pg::ArrayLiteral(audit_user),
             pg::ArrayLiteral(audit_token), pg::ArrayLiteral(audit_action),
             pg::ArrayLiteral(audit_object), pg::ArrayLiteral(audit_status),
             pg::ArrayLiteral(audit_error)},
            "cannot write the audit log to the store"),
        "audit entry"));
  }
  // The newest row stays, so that the last seq (and so every seq) is never given out again.
  for (auto [table, before] :
       {std::pair{"events", expire_events}, std::pair{"audit", expire_audit}}) {
    if (!before) continue;
    const std::string name(table);
    SUANLI_RETURN_IF_ERROR(
        writer_
            .Exec("DELETE FROM " + name + " WHERE at_ns < $1 AND seq < (SELECT MAX(seq) FROM " +
                      name + ")",
                  {std::to_string(ToNanos(*before))}, "cannot expire old rows of " + name)
            .status());
  }
  return Status::Ok();
}

Result<Snapshot> PostgresStore::Load() {
  core::MutexLock lock(reader_mutex_);
  reader_.ReconnectIfLost();
  // One snapshot for the documents and the last seqs.
  SUANLI_RETURN_IF_ERROR(
      reader_.Exec("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", "cannot read the store")
          .status());
  struct EndRead {
    pg::Connection& reader;
    ~EndRead() { (void)reader.Exec("ROLLBACK", ""); }
  } end_read{reader_};
  Snapshot snapshot;
  for (Collection collection : kCollections) {
    const std::string table(CollectionName(collection));
    Result<pg::ResultHandle> rows =
        reader_.Exec("SELECT id, doc::text FROM " + table + " ORDER BY id COLLATE \"C\"",
                     "cannot read " + table + " from the store");
    if (!rows.ok()) return rows.status();
    for (int row = 0; row < PQntuples(rows->get()); ++row) {
      snapshot.documents.push_back(
          {collection, pg::Text(rows->get(), row, 0), pg::Text(rows->get(), row, 1)});
    }
  }
  Result<pg::ResultHandle> last = reader_.Exec(
      "SELECT (SELECT COALESCE(MAX(seq), 0) FROM transitions), "
      "(SELECT COALESCE(MAX(seq), 0) FROM ledger), (SELECT COALESCE(MAX(seq), 0) FROM events), "
      "(SELECT COALESCE(MAX(seq), 0) FROM audit)",
      "cannot read the history's last entries");
  if (!last.ok()) return last.status();
  snapshot.last_transition_seq = pg::Integer(last->get(), 0, 0);
  snapshot.last_ledger_seq = pg::Integer(last->get(), 0, 1);
  snapshot.last_event_seq = pg::Integer(last->get(), 0, 2);
  snapshot.last_audit_seq = pg::Integer(last->get(), 0, 3);
  return snapshot;
}

// The WHERE clause of a HistoryQuery on `time_column`, with its parameters.
std::string HistoryWhere(const HistoryQuery& query, std::string_view time_column,
                         pg::Params& params) {
  std::string where = " WHERE true";
  auto add = [&](std::string condition, std::string value) {
    params.emplace_back(std::move(value));
    where += " AND " + condition + " $" + std::to_string(params.size());
  };
  if (!query.user_id.empty()) add("user_id =", query.user_id);
  if (!query.pod_id.empty()) add("pod_id =", query.pod_id);
  if (query.from) add(std::string(time_column) + " >=", std::to_string(ToNanos(*query.from)));
  if (query.to) add(std::string(time_column) + " <", std::to_string(ToNanos(*query.to)));
  return where + " ORDER BY seq";
}

Result<std::vector<core::LedgerEntry>> PostgresStore::Ledger(const HistoryQuery& query) {
  pg::Params params;
  const std::string sql =
      "SELECT seq, user_id, pod_id, kind, amount_micros, from_ns, to_ns, at_ns, note FROM ledger" +
      HistoryWhere(query, "to_ns", params);
  core::MutexLock lock(reader_mutex_);
  reader_.ReconnectIfLost();
  Result<pg::ResultHandle> rows = reader_.Exec(sql, params, "cannot read the ledger");
  if (!rows.ok()) return rows.status();
  const PGresult* result = rows->get();
  std::vector<core::LedgerEntry> entries;
  entries.reserve(static_cast<size_t>(PQntuples(result)));
  for (int row = 0; row < PQntuples(result); ++row) {
    core::LedgerEntry entry;
    entry.seq = pg::Integer(result, row, 0);
    entry.user_id = pg::Text(result, row, 1);
    entry.pod_id = pg::Text(result, row, 2);
    Result<core::LedgerKind> kind = ReadLedgerKind(pg::Text(result, row, 3));
    if (!kind.ok()) return kind.status();
    entry.kind = *kind;
    entry.amount = core::Money::FromMicros(pg::Integer(result, row, 4));
    entry.from = FromNanos(pg::Integer(result, row, 5));
    entry.to = FromNanos(pg::Integer(result, row, 6));
    entry.at = FromNanos(pg::Integer(result, row, 7));
    entry.note = pg::Text(result, row, 8);
    entries.push_back(std::move(entry));
  }
  return entries;
}

Result<std::vector<core::Transition>> PostgresStore::Transitions(const HistoryQuery& query) {
  pg::Params params;
  const std::string sql =
      "SELECT seq, pod_id, user_id, at_ns, from_state, to_state, node_id, gpu_type, gpu_count, "
      "gpu_price_micros, reason FROM transitions" +
      HistoryWhere(query, "at_ns", params);
  core::MutexLock lock(reader_mutex_);
  reader_.ReconnectIfLost();
  Result<pg::ResultHandle> rows = reader_.Exec(sql, params, "cannot read the transitions");
  if (!rows.ok()) return rows.status();
  const PGresult* result = rows->get();
  std::vector<core::Transition> transitions;
  transitions.reserve(static_cast<size_t>(PQntuples(result)));
  for (int row = 0; row < PQntuples(result); ++row) {
    core::Transition transition;
    transition.seq = pg::Integer(result, row, 0);
    transition.pod_id = pg::Text(result, row, 1);
    transition.user_id = pg::Text(result, row, 2);
    transition.at = FromNanos(pg::Integer(result, row, 3));
    Result<core::PodState> from = ReadPodState(pg::Text(result, row, 4));
    if (!from.ok()) return from.status();
    Result<core::PodState> to = ReadPodState(pg::Text(result, row, 5));
    if (!to.ok()) return to.status();
    transition.from = *from;
    transition.to = *to;
    transition.node_id = pg::Text(result, row, 6);
    transition.gpu_type = pg::Text(result, row, 7);
    transition.gpu_count = static_cast<int>(pg::Integer(result, row, 8));
    transition.gpu_price_per_hour = core::Money::FromMicros(pg::Integer(result, row, 9));
    transition.reason = pg::Text(result, row, 10);
    transitions.push_back(std::move(transition));
  }
  return transitions;
}

// The SQL of a page of `table` after `after`, where each named column equals its value (the empty
// ones left out), since `since`, at most `limit`; with `newest`, the last `limit` in seq order.
std::string PageSql(std::string_view columns, std::string_view table,
                    std::initializer_list<std::pair<std::string_view, std::string>> equal,
                    int64_t after, const std::optional<core::TimePoint>& since, size_t limit,
                    bool newest, pg::Params& params) {
  params.push_back(std::to_string(after));
  std::string sql =
      "SELECT " + std::string(columns) + " FROM " + std::string(table) + " WHERE seq > $1";
  for (const auto& [column, value] : equal) {
    if (value.empty()) continue;
    params.push_back(value);
    sql += " AND " + std::string(column) + " = $" + std::to_string(params.size());
  }
  if (since) {
    params.push_back(std::to_string(ToNanos(*since)));
    sql += " AND at_ns >= $" + std::to_string(params.size());
  }
  params.push_back(std::to_string(std::min<size_t>(limit, INT64_MAX)));
  sql += std::string(" ORDER BY seq") + (newest ? " DESC" : "") + " LIMIT $" +
         std::to_string(params.size());
  if (newest) sql = "SELECT * FROM (" + sql + ") AS page ORDER BY seq";
  return sql;
}

Result<std::vector<core::Event>> PostgresStore::Events(const EventQuery& query) {
  pg::Params params;
  const std::string sql =
      PageSql("seq, at_ns, kind, object_id, user_id, message, detail::text", "events",
              {{"user_id", query.user_id}, {"object_id", query.object_id}, {"kind", query.kind}},
              query.after, query.since, query.limit, query.newest, params);
  core::MutexLock lock(reader_mutex_);
  reader_.ReconnectIfLost();
  Result<pg::ResultHandle> rows = reader_.Exec(sql, params, "cannot read the events");
  if (!rows.ok()) return rows.status();
  const PGresult* result = rows->get();
  std::vector<core::Event> events;
  events.reserve(static_cast<size_t>(PQntuples(result)));
  for (int row = 0; row < PQntuples(result); ++row) {
    core::Event& event = events.emplace_back();
    event.seq = pg::Integer(result, row, 0);
    event.at = FromNanos(pg::Integer(result, row, 1));
    event.kind = pg::Text(result, row, 2);
    event.object_id = pg::Text(result, row, 3);
    event.user_id = pg::Text(result, row, 4);
    event.message = pg::Text(result, row, 5);
    event.detail = pg::Text(result, row, 6);
  }
  return events;
}

Result<std::vector<core::AuditEntry>> PostgresStore::Audit(const AuditQuery& query) {
  pg::Params params;
  const std::string sql = PageSql(
      "seq, at_ns, user_id, token_id, action, object_id, status, error_code", "audit",
      {{"user_id", query.user_id}}, query.after, query.since, query.limit, query.newest, params);
  core::MutexLock lock(reader_mutex_);
  reader_.ReconnectIfLost();
  Result<pg::ResultHandle> rows = reader_.Exec(sql, params, "cannot read the audit log");
  if (!rows.ok()) return rows.status();
  const PGresult* result = rows->get();
  std::vector<core::AuditEntry> entries;
  entries.reserve(static_cast<size_t>(PQntuples(result)));
  for (int row = 0; row < PQntuples(result); ++row) {
    core::AuditEntry& entry = entries.emplace_back();
    entry.seq = pg::Integer(result, row, 0);
    entry.at = FromNanos(pg::Integer(result, row, 1));
    entry.user_id = pg::Text(result, row, 2);
    entry.token_id = pg::Text(result, row, 3);
    entry.action = pg::Text(result, row, 4);
    entry.object_id = pg::Text(result, row, 5);
    entry.status = static_cast<int>(pg::Integer(result, row, 6));
    entry.error_code = pg::Text(result, row, 7);
  }
  return entries;
}

// Brings the schema to the newest version, under the migration lock so that two servers starting
// at once never run a step twice.
Status Migrate(pg::Connection& writer) {
  const std::string where = writer.where();
  auto run = [&](const std::string& sql, pg::Params params = {}) {
    return writer.Exec(sql, params, "cannot migrate the store " + where);
  };
  SUANLI_RETURN_IF_ERROR(run("BEGIN").status());
  Status status = [&]() -> Status {
    SUANLI_RETURN_IF_ERROR(
        run("SELECT pg_advisory_xact_lock($1)", {std::to_string(kMigrationLockKey)}).status());
    SUANLI_RETURN_IF_ERROR(
        run("CREATE TABLE IF NOT EXISTS suanli_schema (version INTEGER NOT NULL)").status());
    Result<pg::ResultHandle> version = run("SELECT version FROM suanli_schema");
    if (!version.ok()) return version.status();
    int64_t current = 0;
    if (PQntuples(version->get()) == 0) {
      SUANLI_RETURN_IF_ERROR(run("INSERT INTO suanli_schema (version) VALUES (0)").status());
    } else {
      current = pg::Integer(version->get(), 0, 0);
    }
    const auto known = static_cast<int64_t>(kMigrations.size());
    if (current > known) {
      return core::FailedPreconditionError("the store " + where +
                                           " was written by a newer suanli (schema " +
                                           std::to_string(current) + ", this one knows up to " +
                                           std::to_string(known) + "); upgrade suanli");
    }
    for (int64_t step = current; step < known; ++step) {
      SUANLI_RETURN_IF_ERROR(run(kMigrations[static_cast<size_t>(step)]).status());
    }
    return run("UPDATE suanli_schema SET version = $1", {std::to_string(known)}).status();
  }();
  if (!status.ok()) {
    (void)run("ROLLBACK");
    return status;
  }
  return run("COMMIT").status();
}

// Takes the server lock on `writer`'s session, without waiting: true when the session holds it.
Result<bool> TryServerLock(pg::Connection& writer) {
  Result<pg::ResultHandle> locked =
      writer.Exec("SELECT pg_try_advisory_lock($1)", {std::to_string(kServerLockKey)},
                  "cannot lock the store " + writer.where());
  if (!locked.ok()) return core::UnavailableError(locked.status().message());
  return pg::Text(locked->get(), 0, 0) == "t";
}

// The store, once `writer`'s session holds the server lock: the schema migrated, a reader opened.
Result<std::unique_ptr<Store>> OpenLocked(const std::string& url, pg::Connection writer) {
  if (Status migrated = Migrate(writer); !migrated.ok()) {
    if (migrated.code() == core::StatusCode::kFailedPrecondition) return migrated;
    return core::UnavailableError(migrated.message());
  }
  Result<pg::Connection> reader = pg::Connection::Open(url);
  if (!reader.ok()) return reader.status();
  return std::unique_ptr<Store>(
      std::make_unique<PostgresStore>(std::move(writer), std::move(reader).value()));
}

// What a replica's sessions call themselves (application_name): the holder's names its URL.
constexpr std::string_view kReplicaNamePrefix = "suanli ";

class PostgresElection final : public Election {
 public:
  PostgresElection(std::string url, std::string advertise_url, pg::Connection watcher)
      : url_(std::move(url)),
        advertise_url_(std::move(advertise_url)),
        watcher_(std::move(watcher)) {}

  Result<std::unique_ptr<Store>> TryLead() override {
    if (!candidate_) {
      Result<pg::Connection> connection = pg::Connection::Open(url_);
      if (!connection.ok()) return connection.status();
      // Named before it can hold the lock, so that the holder always has a name to be found by.
      // PostgreSQL frees the lock when it sees the session gone: at once for a closed socket
      // (kill -9), and with these keepalives within about 15 s for a holder cut off by the
      // network (the default would wait two hours), so that a standby takes over.
      Result<pg::ResultHandle> named = connection->Exec(
          "SELECT set_config('application_name', $1, false), "
          "set_config('tcp_keepalives_idle', '5', false), "
          "set_config('tcp_keepalives_interval', '2', false), "
          "set_config('tcp_keepalives_count', '4', false)",
          {std::string(kReplicaNamePrefix) + advertise_url_}, "cannot name the session");
      if (!named.ok()) return core::UnavailableError(named.status().message());
      candidate_.emplace(std::move(connection).value());
    }
    Result<bool> locked = TryServerLock(*candidate_);
    if (!locked.ok()) {
      candidate_.reset();  // connect afresh next time: the link may be what failed
      return locked.status();
    }
    if (!*locked) return std::unique_ptr<Store>();
    pg::Connection writer = std::move(*candidate_);
    candidate_.reset();
    return OpenLocked(url_, std::move(writer));
  }

  Result<std::string> Leader() override {
    watcher_.ReconnectIfLost();
    // Advisory locks are per database: the holder of this database's, among all the cluster's.
    Result<pg::ResultHandle> holder = watcher_.Exec(
        "SELECT a.application_name FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid "
        "WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1 "
        "AND l.classid::bigint = $1 AND l.objid::bigint = $2 "
        "AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())",
        {std::to_string(kServerLockKey >> 32), std::to_string(kServerLockKey & 0xffffffff)},
        "cannot find the serving replica in " + watcher_.where());
    if (!holder.ok()) return core::UnavailableError(holder.status().message());
    if (PQntuples(holder->get()) == 0) return std::string();
    const std::string name = pg::Text(holder->get(), 0, 0);
    if (!name.starts_with(kReplicaNamePrefix)) return std::string();
    return name.substr(kReplicaNamePrefix.size());
  }

 private:
  const std::string url_;
  const std::string advertise_url_;
  std::optional<pg::Connection> candidate_;  // the session that tries the lock, and then writes
  pg::Connection watcher_;                   // reads who holds it
};

}  // namespace

Result<std::unique_ptr<Store>> OpenPostgresStore(const std::string& url) {
  Result<pg::Connection> writer = pg::Connection::Open(url);
  if (!writer.ok()) return writer.status();
  // The server lock first: a second server must not even migrate.
  Result<bool> locked = TryServerLock(*writer);
  if (!locked.ok()) return locked.status();
  if (!*locked) {
    return core::UnavailableError("the store " + writer->where() +
                                  " is in use by another suanli server; stop it or give this one "
                                  "another database");
  }
  return OpenLocked(url, std::move(writer).value());
}

Result<std::unique_ptr<Election>> Election::Join(const std::string& url,
                                                 std::string advertise_url) {
  if (!SupportsReplicas(url)) {
    return core::InvalidArgumentError("only a PostgreSQL store can have several replicas");
  }
  Result<pg::Connection> watcher = pg::Connection::Open(url);
  if (!watcher.ok()) return watcher.status();
  return std::unique_ptr<Election>(std::make_unique<PostgresElection>(url, std::move(advertise_url),
                                                                      std::move(watcher).value()));
}

}  // namespace suanli::store
