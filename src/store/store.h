// Store: where the control plane's state survives a crash.
//
// The control plane keeps its state in memory and writes every change through a Store; it reads the
// store only at start-up (Load) and for history that it does not keep in memory (the ledger and the
// transitions). Entities (users, tokens, pods, nodes, ...) are JSON documents keyed by id, so
// adding a field needs no migration; the append-only ledger and transitions have typed columns,
// because billing queries and sums them. SqliteStore (the embedded default: one file) and
// PostgresStore (a database server, for deployments that outgrow a file) are the implementations.
//
// Durability: Commit returns OK only once the batches are on disk (SQLite WAL, synchronous=FULL;
// PostgreSQL's WAL flushed at COMMIT);
// on any error nothing of them is applied. Commit is called by one writer thread (CommitQueue);
// Ledger and Transitions may be called from other threads at the same time.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/clock.h"
#include "core/event.h"
#include "core/ledger_types.h"
#include "core/status.h"

namespace suanli::store {

enum class Collection {
  kUsers,
  kApiTokens,
  kSshKeys,
  kTemplates,
  kPods,
  kNodes,
  kJoinTokens,
  kSettings,
  kEndpoints,  // serverless endpoints
  kJobs,       // their jobs, until their TTL passes
  kWebhooks,   // users' subscriptions to their events
  kVolumes,    // volumes as a resource of their own
  kSnapshots,  // their point-in-time copies
  kProjects,   // teams' shared spaces
};

// "users", "api_tokens", ...: also the table names.
std::string_view CollectionName(Collection collection);

struct Document {
  Collection collection = Collection::kUsers;
  std::string id;
  std::string json;  // a JSON object; the store does not look inside
};

struct DocumentKey {
  Collection collection = Collection::kUsers;
  std::string id;
};

// What one request changes; applied all or nothing.
struct Batch {
  std::vector<Document> puts;                 // insert or replace
  std::vector<DocumentKey> deletes;           // deleting a missing document is not an error
  std::vector<core::Transition> transitions;  // appended; seq must be new
  std::vector<core::LedgerEntry> ledger;      // appended; seq must be new
  std::vector<core::Event> events;            // appended; seq must be new
  std::vector<core::AuditEntry> audit;        // appended; seq must be new
  // Retention: events and audit entries from before these times are deleted.
  std::optional<core::TimePoint> expire_events_before;
  std::optional<core::TimePoint> expire_audit_before;

  bool empty() const {
    return puts.empty() && deletes.empty() && transitions.empty() && ledger.empty() &&
           events.empty() && audit.empty() && !expire_events_before && !expire_audit_before;
  }
};

struct Snapshot {
  std::vector<Document> documents;  // every document of every collection
  int64_t last_transition_seq = 0;  // 0 when there are none
  int64_t last_ledger_seq = 0;
  int64_t last_event_seq = 0;  // also counting expired ones: a seq is never reused
  int64_t last_audit_seq = 0;
};

// Empty fields do not filter; times filter on the entry's `to` (transitions: `at`), from <= t < to.
struct HistoryQuery {
  std::string user_id;
  std::string pod_id;
  std::optional<core::TimePoint> from;
  std::optional<core::TimePoint> to;
};

// Events in seq order: those after `after` that match every filter that is set, at most `limit`;
// with `newest`, the last `limit` of them (still in seq order).
struct EventQuery {
  std::string user_id;
  std::string object_id;
  std::string kind;
  int64_t after = 0;
  std::optional<core::TimePoint> since;  // at >= since
  size_t limit = 100;
  bool newest = false;
};

// Audit entries in seq order, as EventQuery.
struct AuditQuery {
  std::string user_id;
  int64_t after = 0;
  std::optional<core::TimePoint> since;
  size_t limit = 100;
  bool newest = false;
};

class Store {
 public:
  virtual ~Store() = default;

  virtual core::Result<Snapshot> Load() = 0;

  // Applies `batches` in order in one transaction and returns once it is durable. INVALID_ARGUMENT
  // or INTERNAL (a reused seq, a document that is not JSON), UNAVAILABLE (disk full, I/O error):
  // nothing applied in every case.
  virtual core::Status Commit(std::span<const Batch> batches) = 0;

  // History in seq order.
  virtual core::Result<std::vector<core::LedgerEntry>> Ledger(const HistoryQuery& query) = 0;
  virtual core::Result<std::vector<core::Transition>> Transitions(const HistoryQuery& query) = 0;
  virtual core::Result<std::vector<core::Event>> Events(const EventQuery& query) = 0;
  virtual core::Result<std::vector<core::AuditEntry>> Audit(const AuditQuery& query) = 0;
};

// Opens (creating if needed) the SQLite database at `file`, in WAL mode with synchronous=FULL, and
// migrates its schema to the current version. FAILED_PRECONDITION when the file was written by a
// newer suanli; UNAVAILABLE when it cannot be opened or locked (another server uses it).
core::Result<std::unique_ptr<Store>> OpenSqliteStore(const std::filesystem::path& file);

// Connects to the PostgreSQL database at `url` (postgres://USER:PASSWORD@HOST:PORT/DATABASE),
// takes the server's advisory lock and migrates the schema. UNAVAILABLE when PostgreSQL cannot be
// reached or another suanli server holds the database; FAILED_PRECONDITION when a newer suanli
// wrote it.
core::Result<std::unique_ptr<Store>> OpenPostgresStore(const std::string& url);

// Several `suanli server` replicas on one PostgreSQL database: one at a time holds the store (its
// writer session holds the server lock, so PostgreSQL itself is the referee and no second system
// such as etcd is needed) and serves; the others stand by, forward requests to it and try, every
// so often, to take the lock, which PostgreSQL frees when the holder's session ends (kill -9 and a
// lost link included). The holder's session carries its advertised URL (as its application_name),
// so a standby finds the one to forward to from the lock itself, never from a row that could be
// stale.
//
// Thread-safety: one thread at a time.
class Election {
 public:
  // Connects to `url` as a replica that others reach at `advertise_url` (http://HOST:PORT).
  static core::Result<std::unique_ptr<Election>> Join(const std::string& url,
                                                      std::string advertise_url);
  virtual ~Election() = default;
  // One try, without waiting: the store (as OpenPostgresStore opens it) when this replica now
  // holds it, nullptr while another does.
  virtual core::Result<std::unique_ptr<Store>> TryLead() = 0;
  // The advertised URL of the replica that holds the store, "" while none does.
  virtual core::Result<std::string> Leader() = 0;
};

// True for a store URL whose store can have several replicas (PostgreSQL).
bool SupportsReplicas(std::string_view url);

// The store `url` names: "" (the default) is SQLite in `data_dir`/suanli.db, "sqlite://PATH" a
// SQLite file, "postgres://..." or "postgresql://..." PostgreSQL. INVALID_ARGUMENT for anything
// else, saying how to write it.
core::Result<std::unique_ptr<Store>> OpenStore(std::string_view url,
                                               const std::filesystem::path& data_dir);

// `url` with its password (if any) replaced by "***", for logs and messages.
std::string RedactedUrl(std::string_view url);

struct CopyCounts {
  size_t documents = 0;
  size_t transitions = 0;
  size_t ledger_entries = 0;
  size_t events = 0;
  size_t audit_entries = 0;
};

// Copies every document, transition, ledger entry, event and audit entry of `from` into `to`, in
// one commit, and checks that `to` then holds as many of each with the same last seqs: how a SQLite
// deployment moves to PostgreSQL (`suanli store migrate`). FAILED_PRECONDITION when `to` is not
// empty.
core::Result<CopyCounts> CopyStore(Store& from, Store& to);

}  // namespace suanli::store
