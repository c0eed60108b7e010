#include "store/store.h"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "store/postgres_testing.h"
#include "store/store_testing.h"
#include "testing/temp_dir.h"

namespace suanli::store {
namespace {

using core::Status;
using core::StatusCode;
using suanli::testing::TempDir;
using testing::MakeCharge;
using testing::MakeTransition;

std::unique_ptr<Store> OpenOrDie(const std::filesystem::path& file) {
  core::Result<std::unique_ptr<Store>> store = OpenSqliteStore(file);
  EXPECT_TRUE(store.ok()) << store.status().ToString();
  return store.ok() ? std::move(store).value() : nullptr;
}

Status CommitOne(Store& store, const Batch& batch) { return store.Commit(std::span(&batch, 1)); }

std::vector<int64_t> Seqs(const std::vector<core::LedgerEntry>& entries) {
  std::vector<int64_t> seqs;
  for (const core::LedgerEntry& entry : entries) seqs.push_back(entry.seq);
  return seqs;
}

std::vector<int64_t> Seqs(const std::vector<core::Transition>& transitions) {
  std::vector<int64_t> seqs;
  for (const core::Transition& transition : transitions) seqs.push_back(transition.seq);
  return seqs;
}

// "collection/id=json" for every document, in Load's order.
std::vector<std::string> Documents(Store& store) {
  core::Result<Snapshot> snapshot = store.Load();
  EXPECT_TRUE(snapshot.ok()) << snapshot.status().ToString();
  std::vector<std::string> documents;
  if (!snapshot.ok()) return documents;
  for (const Document& document : snapshot->documents) {
    documents.push_back(std::string(CollectionName(document.collection)) + "/" + document.id + "=" +
                        document.json);
  }
  return documents;
}

void ExpectSameTransition(const core::Transition& got, const core::Transition& want) {
  EXPECT_EQ(got.seq, want.seq);
  EXPECT_EQ(got.pod_id, want.pod_id);
  EXPECT_EQ(got.user_id, want.user_id);
  EXPECT_EQ(got.at, want.at);
  EXPECT_EQ(got.from, want.from);
  EXPECT_EQ(got.to, want.to);
  EXPECT_EQ(got.node_id, want.node_id);
  EXPECT_EQ(got.gpu_type, want.gpu_type);
  EXPECT_EQ(got.gpu_count, want.gpu_count);
  EXPECT_EQ(got.gpu_price_per_hour, want.gpu_price_per_hour);
  EXPECT_EQ(got.reason, want.reason);
}

void ExpectSameEntry(const core::LedgerEntry& got, const core::LedgerEntry& want) {
  EXPECT_EQ(got.seq, want.seq);
  EXPECT_EQ(got.user_id, want.user_id);
  EXPECT_EQ(got.pod_id, want.pod_id);
  EXPECT_EQ(got.kind, want.kind);
  EXPECT_EQ(got.amount, want.amount);
  EXPECT_EQ(got.from, want.from);
  EXPECT_EQ(got.to, want.to);
  EXPECT_EQ(got.at, want.at);
  EXPECT_EQ(got.note, want.note);
}

// The single value of `sql` on a connection of our own, beside the store's.
std::string RawQuery(const std::filesystem::path& file, const char* sql) {
  sqlite3* db = nullptr;
  std::string value = "(error)";
  if (sqlite3_open_v2(file.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr) == SQLITE_OK) {
    sqlite3_stmt* stmt = nullptr;
    const int rc = sqlite3_prepare_v2(db, sql, -1, &stmt, nullptr) == SQLITE_OK ? sqlite3_step(stmt)
                                                                                : SQLITE_ERROR;
    if (rc == SQLITE_ROW) {
      const unsigned char* text = sqlite3_column_text(stmt, 0);
      value = text != nullptr ? reinterpret_cast<const char*>(text) : "";
    } else if (rc == SQLITE_DONE) {
      value = "";
    }
    sqlite3_finalize(stmt);
  }
  sqlite3_close(db);
  return value;
}

// Every test of the Store interface runs on both backends: SQLite in a temporary folder, and
// PostgreSQL in a database of its own on the test cluster (postgres_testing.h).
class StoreTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (GetParam() == "postgres") {
      database_.emplace();
      ASSERT_EQ(database_->error(), "");
    }
  }

  // Opens the store at the same place each call (the file, or the database).
  core::Result<std::unique_ptr<Store>> TryOpen() {
    if (database_) return OpenPostgresStore(database_->url());
    return OpenSqliteStore(dir_.File("suanli.db"));
  }

  std::unique_ptr<Store> Open() {
    core::Result<std::unique_ptr<Store>> store = TryOpen();
    EXPECT_TRUE(store.ok()) << store.status().ToString();
    return store.ok() ? std::move(store).value() : nullptr;
  }

  TempDir dir_;
  std::optional<testing::PostgresDatabase> database_;
};

INSTANTIATE_TEST_SUITE_P(Backends, StoreTest, ::testing::Values("sqlite", "postgres"),
                         [](const ::testing::TestParamInfo<std::string>& backend) {
                           return backend.param;
                         });

TEST_P(StoreTest, RoundTripsDocumentsTransitionsAndLedger) {
  std::unique_ptr<Store> store = Open();
  ASSERT_NE(store, nullptr);

  core::Transition started = MakeTransition(1, "pod-a", "alice", 10);
  core::Transition stopped = MakeTransition(2, "pod-a", "alice", 70);
  stopped.from = core::PodState::kStopping;
  stopped.to = core::PodState::kStopped;
  stopped.reason = "stopped by user";
  core::LedgerEntry credit;
  credit.seq = 1;
  credit.user_id = "alice";
  credit.kind = core::LedgerKind::kCredit;
  credit.amount = core::Money::FromMicros(25'000'000);
  credit.from = credit.to = credit.at = testing::At(0);
  credit.note = "welcome credit";
  core::LedgerEntry charge = MakeCharge(2, "alice", "pod-a", 10, 70);

  Batch first;
  first.puts = {{Collection::kUsers, "alice", R"({"name": "Alice",  "tags" : [1, 2]})"},
                {Collection::kPods, "pod-a", R"({"state":"running"})"},
                {Collection::kPods, "pod-b", R"({"state":"pending"})"},
                {Collection::kSettings, "prices", R"({"RTX 4090":0.74})"}};
  first.transitions = {started};
  first.ledger = {credit};
  Batch second;
  second.puts = {{Collection::kPods, "pod-a", R"({"state":"stopped"})"}};
  second.deletes = {{Collection::kPods, "pod-b"}, {Collection::kNodes, "never-existed"}};
  second.transitions = {stopped};
  second.ledger = {charge};
  const std::vector<Batch> batches = {first, second};
  ASSERT_TRUE(store->Commit(batches).ok());

  EXPECT_EQ(Documents(*store), (std::vector<std::string>{
                                   R"(users/alice={"name": "Alice",  "tags" : [1, 2]})",
                                   R"(pods/pod-a={"state":"stopped"})",
                                   R"(settings/prices={"RTX 4090":0.74})",
                               }));
  core::Result<Snapshot> snapshot = store->Load();
  ASSERT_TRUE(snapshot.ok());
  EXPECT_EQ(snapshot->last_transition_seq, 2);
  EXPECT_EQ(snapshot->last_ledger_seq, 2);

  core::Result<std::vector<core::Transition>> transitions = store->Transitions({});
  ASSERT_TRUE(transitions.ok()) << transitions.status().ToString();
  ASSERT_EQ(transitions->size(), 2U);
  ExpectSameTransition((*transitions)[0], started);
  ExpectSameTransition((*transitions)[1], stopped);

  core::Result<std::vector<core::LedgerEntry>> ledger = store->Ledger({});
  ASSERT_TRUE(ledger.ok()) << ledger.status().ToString();
  ASSERT_EQ(ledger->size(), 2U);
  ExpectSameEntry((*ledger)[0], credit);
  ExpectSameEntry((*ledger)[1], charge);
}

TEST_P(StoreTest, EmptyStoreLoadsNothing) {
  std::unique_ptr<Store> store = Open();
  ASSERT_NE(store, nullptr);
  core::Result<Snapshot> snapshot = store->Load();
  ASSERT_TRUE(snapshot.ok());
  EXPECT_TRUE(snapshot->documents.empty());
  EXPECT_EQ(snapshot->last_transition_seq, 0);
  EXPECT_EQ(snapshot->last_ledger_seq, 0);
  EXPECT_TRUE(store->Commit({}).ok());
}

TEST_P(StoreTest, ReopeningKeepsEverything) {
  {
    std::unique_ptr<Store> store = Open();
    ASSERT_NE(store, nullptr);
    Batch batch;
    batch.puts = {{Collection::kNodes, "node-1", R"({"gpus":8})"}};
    batch.transitions = {MakeTransition(7, "pod-a", "alice", 5)};
    batch.ledger = {MakeCharge(9, "alice", "pod-a", 5, 65)};
    ASSERT_TRUE(CommitOne(*store, batch).ok());
  }
  std::unique_ptr<Store> store = Open();
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(Documents(*store), std::vector<std::string>{R"(nodes/node-1={"gpus":8})"});
  core::Result<Snapshot> snapshot = store->Load();
  ASSERT_TRUE(snapshot.ok());
  EXPECT_EQ(snapshot->last_transition_seq, 7);
  EXPECT_EQ(snapshot->last_ledger_seq, 9);
  ASSERT_TRUE(store->Ledger({}).ok());
  EXPECT_EQ(Seqs(*store->Ledger({})), std::vector<int64_t>{9});
}

TEST_P(StoreTest, ReusedLedgerSeqAppliesNothingOfTheWholeCommit) {
  std::unique_ptr<Store> store = Open();
  ASSERT_NE(store, nullptr);
  Batch earlier;
  earlier.ledger = {MakeCharge(1, "alice", "pod-a", 0, 60)};
  ASSERT_TRUE(CommitOne(*store, earlier).ok());

  Batch good;  // valid by itself, but shares the transaction with the bad batch
  good.puts = {{Collection::kPods, "pod-b", R"({"state":"running"})"}};
  good.deletes = {{Collection::kPods, "pod-a"}};
  good.transitions = {MakeTransition(5, "pod-b", "bob", 60)};
  good.ledger = {MakeCharge(2, "bob", "pod-b", 0, 60)};
  Batch reused;
  reused.ledger = {MakeCharge(3, "alice", "pod-a", 60, 120),
                   MakeCharge(1, "alice", "pod-a", 60, 120)};
  const std::vector<Batch> batches = {good, reused};
  Status status = store->Commit(batches);
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << status.ToString();
  EXPECT_NE(status.message().find("ledger entry seq 1"), std::string::npos) << status.message();

  EXPECT_TRUE(Documents(*store).empty());
  ASSERT_TRUE(store->Transitions({}).ok());
  EXPECT_TRUE(store->Transitions({})->empty());
  ASSERT_TRUE(store->Ledger({}).ok());
  EXPECT_EQ(Seqs(*store->Ledger({})), std::vector<int64_t>{1});

  // The store goes on working after the rolled-back transaction.
  ASSERT_TRUE(CommitOne(*store, good).ok());
  EXPECT_EQ(Seqs(*store->Ledger({})), (std::vector<int64_t>{1, 2}));
}

TEST_P(StoreTest, ReusedTransitionSeqIsInvalidArgument) {
  std::unique_ptr<Store> store = Open();
  ASSERT_NE(store, nullptr);
  Batch batch;
  batch.transitions = {MakeTransition(4, "pod-a", "alice", 0)};
  ASSERT_TRUE(CommitOne(*store, batch).ok());
  batch.puts = {{Collection::kUsers, "bob", "{}"}};
  Status status = CommitOne(*store, batch);
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << status.ToString();
  EXPECT_TRUE(Documents(*store).empty());
}

TEST_P(StoreTest, DocumentThatIsNotJsonAppliesNothing) {
  std::unique_ptr<Store> store = Open();
  ASSERT_NE(store, nullptr);
  Batch batch;
  batch.transitions = {MakeTransition(1, "pod-a", "alice", 0)};
  batch.puts = {{Collection::kUsers, "alice", R"({"name":"Alice"})"},
                {Collection::kUsers, "bob", R"({"name": "Bob")"}};
  Status status = CommitOne(*store, batch);
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << status.ToString();
  EXPECT_NE(status.message().find("users/bob"), std::string::npos) << status.message();
  EXPECT_TRUE(Documents(*store).empty());
  ASSERT_TRUE(store->Transitions({}).ok());
  EXPECT_TRUE(store->Transitions({})->empty());
}

TEST_P(StoreTest, HistoryFiltersByUserPodAndTime) {
  std::unique_ptr<Store> store = Open();
  ASSERT_NE(store, nullptr);
  Batch batch;
  batch.ledger = {MakeCharge(1, "alice", "pod-a", 0, 60), MakeCharge(2, "bob", "pod-b", 0, 60),
                  MakeCharge(3, "alice", "pod-c", 60, 120),
                  MakeCharge(4, "alice", "pod-a", 60, 120),
                  MakeCharge(5, "alice", "pod-a", 120, 180)};
  batch.transitions = {
      MakeTransition(1, "pod-a", "alice", 0), MakeTransition(2, "pod-b", "bob", 30),
      MakeTransition(3, "pod-a", "alice", 60), MakeTransition(4, "pod-c", "alice", 90)};
  ASSERT_TRUE(CommitOne(*store, batch).ok());

  auto ledger = [&](HistoryQuery query) {
    core::Result<std::vector<core::LedgerEntry>> entries = store->Ledger(query);
    EXPECT_TRUE(entries.ok()) << entries.status().ToString();
    return entries.ok() ? Seqs(*entries) : std::vector<int64_t>{-1};
  };
  auto transitions = [&](HistoryQuery query) {
    core::Result<std::vector<core::Transition>> found = store->Transitions(query);
    EXPECT_TRUE(found.ok()) << found.status().ToString();
    return found.ok() ? Seqs(*found) : std::vector<int64_t>{-1};
  };
  HistoryQuery query;
  EXPECT_EQ(ledger(query), (std::vector<int64_t>{1, 2, 3, 4, 5}));
  query.user_id = "alice";
  EXPECT_EQ(ledger(query), (std::vector<int64_t>{1, 3, 4, 5}));
  EXPECT_EQ(transitions(query), (std::vector<int64_t>{1, 3, 4}));
  query.pod_id = "pod-a";
  EXPECT_EQ(ledger(query), (std::vector<int64_t>{1, 4, 5}));
  EXPECT_EQ(transitions(query), (std::vector<int64_t>{1, 3}));
  // The ledger filters on the entry's `to`, query.from <= to < query.to: [60, 180) holds the
  // charges ending at 60 and 120 but not the one ending at 180.
  query.from = testing::At(60);
  query.to = testing::At(180);
  EXPECT_EQ(ledger(query), (std::vector<int64_t>{1, 4}));
  query.user_id.clear();
  query.pod_id.clear();
  EXPECT_EQ(ledger(query), (std::vector<int64_t>{1, 2, 3, 4}));
  // Transitions filter on `at`.
  EXPECT_EQ(transitions(query), (std::vector<int64_t>{3, 4}));
  query.from.reset();
  query.to = testing::At(60);
  EXPECT_EQ(transitions(query), (std::vector<int64_t>{1, 2}));
  query.pod_id = "pod-b";
  EXPECT_TRUE(ledger(query).empty());  // its charge ends at 60, outside [-inf, 60)
  query.to = testing::At(61);
  EXPECT_EQ(ledger(query), (std::vector<int64_t>{2}));
  query.pod_id = "pod-z";
  EXPECT_TRUE(ledger(query).empty());
}

core::Event MakeEvent(int64_t seq, std::string kind, std::string object, std::string user,
                      int64_t at_s) {
  return core::Event{seq,
                     testing::At(at_s),
                     std::move(kind),
                     std::move(object),
                     std::move(user),
                     "event " + std::to_string(seq) + " \"quoted\"",
                     R"({"n":)" + std::to_string(seq) + "}"};
}

std::vector<int64_t> Seqs(const std::vector<core::Event>& events) {
  std::vector<int64_t> seqs;
  for (const core::Event& event : events) seqs.push_back(event.seq);
  return seqs;
}

TEST_P(StoreTest, EventsArePagedFilteredAndReadBackAsWritten) {
  std::unique_ptr<Store> store = Open();
  ASSERT_NE(store, nullptr);
  Batch batch;
  batch.events = {MakeEvent(1, "pod.state", "pod-a", "alice", 0),
                  MakeEvent(2, "pod.state", "pod-b", "bob", 10),
                  MakeEvent(3, "node.unreachable", "node-1", "", 20),
                  MakeEvent(4, "pod.idle_warning", "pod-a", "alice", 30),
                  MakeEvent(5, "pod.state", "pod-a", "alice", 40)};
  ASSERT_TRUE(CommitOne(*store, batch).ok());
  auto events = [&](EventQuery query) {
    core::Result<std::vector<core::Event>> found = store->Events(query);
    EXPECT_TRUE(found.ok()) << found.status().ToString();
    return found.ok() ? Seqs(*found) : std::vector<int64_t>{-1};
  };
  EventQuery query;
  EXPECT_EQ(events(query), (std::vector<int64_t>{1, 2, 3, 4, 5}));
  query.limit = 2;
  EXPECT_EQ(events(query), (std::vector<int64_t>{1, 2}));
  query.after = 2;
  EXPECT_EQ(events(query), (std::vector<int64_t>{3, 4}));
  query.after = 0;
  query.newest = true;  // the last two, still oldest first
  EXPECT_EQ(events(query), (std::vector<int64_t>{4, 5}));
  query = {};
  query.user_id = "alice";
  EXPECT_EQ(events(query), (std::vector<int64_t>{1, 4, 5}));
  query.kind = "pod.state";
  EXPECT_EQ(events(query), (std::vector<int64_t>{1, 5}));
  query = {};
  query.object_id = "pod-a";
  query.since = testing::At(30);
  EXPECT_EQ(events(query), (std::vector<int64_t>{4, 5}));
  query = {};
  query.user_id = "nobody";
  EXPECT_TRUE(events(query).empty());

  core::Result<std::vector<core::Event>> all = store->Events({});
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 5u);
  for (size_t i = 0; i < all->size(); ++i) {
    const core::Event& got = (*all)[i];
    const core::Event& want = batch.events[i];
    EXPECT_EQ(got.at, want.at);
    EXPECT_EQ(got.kind, want.kind);
    EXPECT_EQ(got.object_id, want.object_id);
    EXPECT_EQ(got.user_id, want.user_id);
    EXPECT_EQ(got.message, want.message);
    EXPECT_EQ(got.detail, want.detail);
  }
  core::Result<Snapshot> snapshot = store->Load();
  ASSERT_TRUE(snapshot.ok());
  EXPECT_EQ(snapshot->last_event_seq, 5);
}

TEST_P(StoreTest, AReusedEventSeqAppliesNothing) {
  std::unique_ptr<Store> store = Open();
  ASSERT_NE(store, nullptr);
  Batch first;
  first.events = {MakeEvent(1, "pod.state", "pod-a", "alice", 0)};
  ASSERT_TRUE(CommitOne(*store, first).ok());
  Batch again;
  again.puts = {{Collection::kUsers, "alice", "{}"}};
  again.events = {MakeEvent(1, "pod.state", "pod-b", "alice", 5)};
  const Status status = CommitOne(*store, again);
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << status.ToString();
  EXPECT_NE(status.message().find("event seq 1"), std::string::npos) << status.message();
  EXPECT_TRUE(Documents(*store).empty());
}

TEST_P(StoreTest, ExpiryDeletesOldEventsAndAuditButKeepsTheLastSeq) {
  std::unique_ptr<Store> store = Open();
  ASSERT_NE(store, nullptr);
  Batch batch;
  for (int64_t seq = 1; seq <= 4; ++seq) {
    batch.events.push_back(MakeEvent(seq, "pod.state", "pod-a", "alice", seq * 100));
    batch.audit.push_back(core::AuditEntry{seq, testing::At(seq * 100), "alice", "tok_1",
                                           "POST /v1/pods", "pod-a", 201, ""});
  }
  ASSERT_TRUE(CommitOne(*store, batch).ok());
  Batch expire;
  expire.expire_events_before = testing::At(250);
  ASSERT_TRUE(CommitOne(*store, expire).ok());
  EXPECT_EQ(Seqs(*store->Events({})), (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(store->Audit({})->size(), 4u);  // only what was asked
  // Everything old: the newest row stays, so the next server start goes on from seq 4.
  Batch all;
  all.expire_events_before = testing::At(10'000);
  all.expire_audit_before = testing::At(10'000);
  ASSERT_TRUE(CommitOne(*store, all).ok());
  EXPECT_EQ(Seqs(*store->Events({})), (std::vector<int64_t>{4}));
  ASSERT_EQ(store->Audit({})->size(), 1u);
  store.reset();
  store = Open();
  ASSERT_NE(store, nullptr);
  core::Result<Snapshot> snapshot = store->Load();
  ASSERT_TRUE(snapshot.ok());
  EXPECT_EQ(snapshot->last_event_seq, 4);
  EXPECT_EQ(snapshot->last_audit_seq, 4);
}

TEST_P(StoreTest, AuditEntriesRoundTripAndFilterByUser) {
  std::unique_ptr<Store> store = Open();
  ASSERT_NE(store, nullptr);
  Batch batch;
  batch.audit = {
      core::AuditEntry{1, testing::At(0), "alice", "tok_a", "POST /v1/pods", "pod-a", 201, ""},
      core::AuditEntry{2, testing::At(5), "", "", "POST /v1/pods/{id}/stop", "pod-a", 401,
                       "UNAUTHENTICATED"},
      core::AuditEntry{3, testing::At(9), "bob", "tok_b", "DELETE /v1/pods/{id}", "pod-b", 404,
                       "NOT_FOUND"}};
  ASSERT_TRUE(CommitOne(*store, batch).ok());
  core::Result<std::vector<core::AuditEntry>> all = store->Audit({});
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  ASSERT_EQ(all->size(), 3u);
  const core::AuditEntry& got = (*all)[2];
  EXPECT_EQ(got.seq, 3);
  EXPECT_EQ(got.at, testing::At(9));
  EXPECT_EQ(got.user_id, "bob");
  EXPECT_EQ(got.token_id, "tok_b");
  EXPECT_EQ(got.action, "DELETE /v1/pods/{id}");
  EXPECT_EQ(got.object_id, "pod-b");
  EXPECT_EQ(got.status, 404);
  EXPECT_EQ(got.error_code, "NOT_FOUND");
  AuditQuery query;
  query.user_id = "alice";
  core::Result<std::vector<core::AuditEntry>> alice = store->Audit(query);
  ASSERT_TRUE(alice.ok());
  ASSERT_EQ(alice->size(), 1u);
  EXPECT_EQ((*alice)[0].token_id, "tok_a");
  query = {};
  query.since = testing::At(5);
  query.limit = 1;
  query.newest = true;
  alice = store->Audit(query);
  ASSERT_TRUE(alice.ok());
  ASSERT_EQ(alice->size(), 1u);
  EXPECT_EQ((*alice)[0].seq, 3);
}

TEST_P(StoreTest, ASecondServerCannotOpenItUntilTheFirstCloses) {
  std::unique_ptr<Store> first = Open();
  ASSERT_NE(first, nullptr);
  core::Result<std::unique_ptr<Store>> second = TryOpen();
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(second.status().message().find("in use by another suanli server"), std::string::npos)
      << second.status().message();
  if (GetParam() == "sqlite") {
    EXPECT_NE(second.status().message().find("pid " + std::to_string(::getpid())),
              std::string::npos)
        << second.status().message();
  }
  first.reset();
  EXPECT_NE(Open(), nullptr);
}

TEST(SqliteStoreTest, SchemaFromANewerSuanliIsFailedPrecondition) {
  TempDir dir;
  ASSERT_NE(OpenOrDie(dir.File("suanli.db")), nullptr);
  EXPECT_EQ(RawQuery(dir.File("suanli.db"), "PRAGMA user_version"), "6");
  EXPECT_EQ(RawQuery(dir.File("suanli.db"), "PRAGMA user_version = 99"), "");
  core::Result<std::unique_ptr<Store>> store = OpenSqliteStore(dir.File("suanli.db"));
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(store.status().message().find("newer suanli"), std::string::npos)
      << store.status().message();
}

TEST(SqliteStoreTest, AStoreOfSchemaOneGainsTheEndpointsAndJobsTablesAndKeepsItsData) {
  TempDir dir;
  {
    std::unique_ptr<Store> store = OpenOrDie(dir.File("suanli.db"));
    Batch batch;
    batch.puts = {{Collection::kUsers, "alice", R"({"name":"Alice"})"}};
    ASSERT_TRUE(store->Commit(std::span<const Batch>(&batch, 1)).ok());
  }
  // As a suanli from before serverless endpoints left it.
  EXPECT_EQ(RawQuery(dir.File("suanli.db"), "DROP TABLE endpoints"), "");
  EXPECT_EQ(RawQuery(dir.File("suanli.db"), "DROP TABLE jobs"), "");
  EXPECT_EQ(RawQuery(dir.File("suanli.db"), "DROP TABLE events"), "");
  EXPECT_EQ(RawQuery(dir.File("suanli.db"), "DROP TABLE audit"), "");
  EXPECT_EQ(RawQuery(dir.File("suanli.db"), "DROP TABLE webhooks"), "");
  EXPECT_EQ(RawQuery(dir.File("suanli.db"), "DROP TABLE volumes"), "");
  EXPECT_EQ(RawQuery(dir.File("suanli.db"), "DROP TABLE snapshots"), "");
  EXPECT_EQ(RawQuery(dir.File("suanli.db"), "DROP TABLE projects"), "");
  EXPECT_EQ(RawQuery(dir.File("suanli.db"), "PRAGMA user_version = 1"), "");
  std::unique_ptr<Store> store = OpenOrDie(dir.File("suanli.db"));
  EXPECT_EQ(RawQuery(dir.File("suanli.db"), "PRAGMA user_version"), "6");
  Batch batch;
  batch.puts = {{Collection::kEndpoints, "ep_1", R"({"name":"echo"})"},
                {Collection::kJobs, "job_1", R"({"status":"IN_QUEUE"})"}};
  ASSERT_TRUE(store->Commit(std::span<const Batch>(&batch, 1)).ok());
  core::Result<Snapshot> snapshot = store->Load();
  ASSERT_TRUE(snapshot.ok());
  EXPECT_EQ(snapshot->documents.size(), 3u);  // alice kept; the endpoint and the job
  Batch events;
  events.events = {MakeEvent(1, "pod.state", "pod-a", "alice", 0)};
  EXPECT_TRUE(store->Commit(std::span<const Batch>(&events, 1)).ok());  // and step 3's tables
}

TEST(SqliteStoreTest, AStoreOfSchemaThreeGainsTheVolumesAndSnapshotsTablesAndKeepsItsData) {
  TempDir dir;
  {
    std::unique_ptr<Store> store = OpenOrDie(dir.File("suanli.db"));
    Batch batch;
    batch.puts = {{Collection::kPods, "pod-a", R"({"name":"a"})"}};
    ASSERT_TRUE(store->Commit(std::span<const Batch>(&batch, 1)).ok());
  }
  // As a suanli from before volumes left it.
  EXPECT_EQ(RawQuery(dir.File("suanli.db"), "DROP TABLE volumes"), "");
  EXPECT_EQ(RawQuery(dir.File("suanli.db"), "DROP TABLE snapshots"), "");
  EXPECT_EQ(RawQuery(dir.File("suanli.db"), "DROP TABLE projects"), "");
  EXPECT_EQ(RawQuery(dir.File("suanli.db"), "PRAGMA user_version = 3"), "");
  std::unique_ptr<Store> store = OpenOrDie(dir.File("suanli.db"));
  EXPECT_EQ(RawQuery(dir.File("suanli.db"), "PRAGMA user_version"), "6");
  Batch batch;
  batch.puts = {{Collection::kVolumes, "vol_1", R"({"name":"data"})"},
                {Collection::kSnapshots, "snap_1", R"({"name":"before"})"}};
  ASSERT_TRUE(store->Commit(std::span<const Batch>(&batch, 1)).ok());
  core::Result<Snapshot> snapshot = store->Load();
  ASSERT_TRUE(snapshot.ok());
  ASSERT_EQ(snapshot->documents.size(), 3u);  // the pod kept, the volume and the snapshot
}

TEST(SqliteStoreTest, UsesWriteAheadLogging) {
  TempDir dir;
  std::unique_ptr<Store> store = OpenOrDie(dir.File("suanli.db"));
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(RawQuery(dir.File("suanli.db"), "PRAGMA journal_mode"), "wal");
}

TEST(SqliteStoreTest, MissingDirectoryIsUnavailable) {
  TempDir dir;
  core::Result<std::unique_ptr<Store>> store = OpenSqliteStore(dir.File("absent") / "suanli.db");
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), StatusCode::kUnavailable) << store.status().ToString();
}

TEST(SqliteStoreTest, FileThatIsNotADatabaseIsUnavailable) {
  TempDir dir;
  {
    std::FILE* file = std::fopen(dir.File("suanli.db").c_str(), "w");
    ASSERT_NE(file, nullptr);
    std::fputs("this is not an SQLite database, but it is long enough to have a header\n", file);
    std::fclose(file);
  }
  core::Result<std::unique_ptr<Store>> store = OpenSqliteStore(dir.File("suanli.db"));
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), StatusCode::kUnavailable) << store.status().ToString();
}

TEST_P(StoreTest, HistoryReadsRunBesideCommits) {
  std::unique_ptr<Store> store = Open();
  ASSERT_NE(store, nullptr);
  constexpr int kCommits = 200;
  std::thread writer([&] {
    for (int seq = 1; seq <= kCommits; ++seq) {
      Batch batch;
      batch.ledger = {MakeCharge(seq, "alice", "pod-a", seq, seq + 1)};
      EXPECT_TRUE(CommitOne(*store, batch).ok());
    }
  });
  size_t seen = 0;
  while (seen < kCommits) {
    HistoryQuery alice;
    alice.user_id = "alice";
    core::Result<std::vector<core::LedgerEntry>> ledger = store->Ledger(alice);
    ASSERT_TRUE(ledger.ok()) << ledger.status().ToString();
    // Readers see a prefix of the commits, never a gap.
    EXPECT_GE(ledger->size(), seen);
    seen = ledger->size();
    for (size_t i = 0; i < seen; ++i) ASSERT_EQ((*ledger)[i].seq, static_cast<int64_t>(i + 1));
  }
  writer.join();
}

TEST_P(StoreTest, ADocumentDeletedAndPutAgainInOneCommitEndsAsTheLastSaid) {
  std::unique_ptr<Store> store = Open();
  ASSERT_NE(store, nullptr);
  Batch put;
  put.puts = {{Collection::kPods, "pod-a", R"({"v":1})"}, {Collection::kPods, "pod-b", "{}"}};
  Batch delete_and_put;
  delete_and_put.deletes = {{Collection::kPods, "pod-a"}, {Collection::kPods, "pod-b"}};
  delete_and_put.puts = {{Collection::kPods, "pod-a", R"({"v":2})"}};
  const std::vector<Batch> batches = {put, delete_and_put};
  ASSERT_TRUE(store->Commit(batches).ok());
  // A batch applies its puts before its deletes: pod-a's delete is its last word, as pod-b's.
  EXPECT_TRUE(Documents(*store).empty());
  Batch again;
  again.puts = {{Collection::kPods, "pod-a", R"({"v":3})"}};
  ASSERT_TRUE(CommitOne(*store, again).ok());
  EXPECT_EQ(Documents(*store), std::vector<std::string>{R"(pods/pod-a={"v":3})"});
}

TEST(PostgresStoreTest, SchemaFromANewerSuanliIsFailedPrecondition) {
  testing::PostgresDatabase database;
  ASSERT_EQ(database.error(), "");
  ASSERT_TRUE(OpenPostgresStore(database.url()).ok());
  core::Result<pg::Connection> raw = pg::Connection::Open(database.url());
  ASSERT_TRUE(raw.ok()) << raw.status().ToString();
  ASSERT_TRUE(raw->Exec("UPDATE suanli_schema SET version = 99", "").ok());
  core::Result<std::unique_ptr<Store>> store = OpenPostgresStore(database.url());
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(store.status().message().find("newer suanli"), std::string::npos)
      << store.status().message();
}

TEST(PostgresStoreTest, AStoreOfSchemaThreeGainsTheVolumesAndSnapshotsTablesAndKeepsItsData) {
  testing::PostgresDatabase database;
  ASSERT_EQ(database.error(), "");
  {
    core::Result<std::unique_ptr<Store>> store = OpenPostgresStore(database.url());
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    Batch batch;
    batch.puts = {{Collection::kPods, "pod-a", R"({"name":"a"})"}};
    ASSERT_TRUE((*store)->Commit(std::span<const Batch>(&batch, 1)).ok());
  }
  {
    // As a suanli from before volumes left it.
    core::Result<pg::Connection> raw = pg::Connection::Open(database.url());
    ASSERT_TRUE(raw.ok()) << raw.status().ToString();
    ASSERT_TRUE(raw->Exec("DROP TABLE volumes", "").ok());
    ASSERT_TRUE(raw->Exec("DROP TABLE snapshots", "").ok());
    ASSERT_TRUE(raw->Exec("DROP TABLE projects", "").ok());
    ASSERT_TRUE(raw->Exec("UPDATE suanli_schema SET version = 3", "").ok());
  }
  core::Result<std::unique_ptr<Store>> store = OpenPostgresStore(database.url());
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  Batch batch;
  batch.puts = {{Collection::kVolumes, "vol_1", R"({"name":"data"})"},
                {Collection::kSnapshots, "snap_1", R"({"name":"before"})"}};
  ASSERT_TRUE((*store)->Commit(std::span<const Batch>(&batch, 1)).ok());
  core::Result<Snapshot> snapshot = (*store)->Load();
  ASSERT_TRUE(snapshot.ok());
  ASSERT_EQ(snapshot->documents.size(), 3u);  // the pod kept, the volume and the snapshot
}

TEST(PostgresStoreTest, AnUnreachableServerIsUnavailableAndNoPasswordIsShown) {
  core::Result<std::unique_ptr<Store>> store =
      OpenPostgresStore("postgres://suanli:secret@127.0.0.1:1/suanli?connect_timeout=2");
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(store.status().message().find("postgres://suanli:***@127.0.0.1:1/suanli"),
            std::string::npos)
      << store.status().message();
  EXPECT_EQ(store.status().message().find("secret"), std::string::npos);
}

TEST(CopyStoreTest, MovesSqliteToPostgresAndBackWithNothingLost) {
  TempDir dir;
  testing::PostgresDatabase database;
  ASSERT_EQ(database.error(), "");
  std::unique_ptr<Store> sqlite = OpenOrDie(dir.File("suanli.db"));
  ASSERT_NE(sqlite, nullptr);
  Batch batch;
  batch.puts = {
      {Collection::kUsers, "alice", R"({"name": "Alice"})"},
      {Collection::kPods, "pod-a", R"({"state":"running","note":"a \"quoted\" \\ word"})"},
      {Collection::kSettings, "prices", "{}"}};
  for (int64_t seq = 1; seq <= 50; ++seq) {
    batch.transitions.push_back(MakeTransition(seq, "pod-a", "alice", seq));
    batch.ledger.push_back(MakeCharge(seq, "alice", "pod-a", seq * 60, seq * 60 + 60));
  }
  batch.events = {MakeEvent(1, "pod.state", "pod-a", "alice", 0),
                  MakeEvent(2, "node.unreachable", "node-1", "", 5)};
  batch.audit = {
      core::AuditEntry{1, testing::At(0), "alice", "tok_a", "POST /v1/pods", "pod-a", 201, ""}};
  ASSERT_TRUE(CommitOne(*sqlite, batch).ok());

  core::Result<std::unique_ptr<Store>> postgres = OpenPostgresStore(database.url());
  ASSERT_TRUE(postgres.ok()) << postgres.status().ToString();
  core::Result<CopyCounts> copied = CopyStore(*sqlite, **postgres);
  ASSERT_TRUE(copied.ok()) << copied.status().ToString();
  EXPECT_EQ(copied->documents, 3u);
  EXPECT_EQ(copied->transitions, 50u);
  EXPECT_EQ(copied->ledger_entries, 50u);
  EXPECT_EQ(copied->events, 2u);
  EXPECT_EQ(copied->audit_entries, 1u);
  EXPECT_EQ((*postgres)->Events({})->at(1).detail, R"({"n":2})");
  EXPECT_EQ(Documents(**postgres), Documents(*sqlite));
  const std::vector<core::LedgerEntry> ledger = *(*postgres)->Ledger({});
  ASSERT_EQ(ledger.size(), 50u);
  for (size_t i = 0; i < ledger.size(); ++i) ExpectSameEntry(ledger[i], batch.ledger[i]);
  const std::vector<core::Transition> transitions = *(*postgres)->Transitions({});
  ASSERT_EQ(transitions.size(), 50u);
  for (size_t i = 0; i < transitions.size(); ++i)
    ExpectSameTransition(transitions[i], batch.transitions[i]);

  // A store that holds anything is not a target: nothing is written to it.
  core::Result<CopyCounts> again = CopyStore(*sqlite, **postgres);
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(Seqs(*(*postgres)->Ledger({})).size(), 50u);

  // And back, into a new file.
  std::unique_ptr<Store> back = OpenOrDie(dir.File("back.db"));
  ASSERT_NE(back, nullptr);
  ASSERT_TRUE(CopyStore(**postgres, *back).ok());
  EXPECT_EQ(Documents(*back), Documents(*sqlite));
  EXPECT_EQ(Seqs(*back->Ledger({})), Seqs(*sqlite->Ledger({})));
}

TEST(OpenStoreTest, ChoosesTheBackendByItsUrl) {
  TempDir dir;
  EXPECT_TRUE(OpenStore("", dir.path()).ok());  // the default: SQLite in the data folder
  EXPECT_TRUE(std::filesystem::exists(dir.File("suanli.db")));
  EXPECT_TRUE(OpenStore("sqlite://" + dir.File("other.db").string(), dir.path()).ok());
  EXPECT_TRUE(std::filesystem::exists(dir.File("other.db")));
  core::Result<std::unique_ptr<Store>> bad = OpenStore("mysql://root:pw@db/suanli", dir.path());
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(bad.status().message(),
            "--store 'mysql://root:***@db/suanli' is not a store; write sqlite://PATH or "
            "postgres://USER:PASSWORD@HOST:PORT/DATABASE");
}

}  // namespace
}  // namespace suanli::store
