#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <string>
#include <thread>
#include <vector>

#include "store/store.h"
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

TEST(SqliteStoreTest, RoundTripsDocumentsTransitionsAndLedger) {
  TempDir dir;
  std::unique_ptr<Store> store = OpenOrDie(dir.File("suanli.db"));
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
  first.puts = {{Collection::kUsers, "alice", R"({"name":"Alice"})"},
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
                                   R"(users/alice={"name":"Alice"})",
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

TEST(SqliteStoreTest, EmptyStoreLoadsNothing) {
  TempDir dir;
  std::unique_ptr<Store> store = OpenOrDie(dir.File("suanli.db"));
  ASSERT_NE(store, nullptr);
  core::Result<Snapshot> snapshot = store->Load();
  ASSERT_TRUE(snapshot.ok());
  EXPECT_TRUE(snapshot->documents.empty());
  EXPECT_EQ(snapshot->last_transition_seq, 0);
  EXPECT_EQ(snapshot->last_ledger_seq, 0);
  EXPECT_TRUE(store->Commit({}).ok());
}

TEST(SqliteStoreTest, ReopeningKeepsEverything) {
  TempDir dir;
  {
    std::unique_ptr<Store> store = OpenOrDie(dir.File("suanli.db"));
    ASSERT_NE(store, nullptr);
    Batch batch;
    batch.puts = {{Collection::kNodes, "node-1", R"({"gpus":8})"}};
    batch.transitions = {MakeTransition(7, "pod-a", "alice", 5)};
    batch.ledger = {MakeCharge(9, "alice", "pod-a", 5, 65)};
    ASSERT_TRUE(CommitOne(*store, batch).ok());
  }
  std::unique_ptr<Store> store = OpenOrDie(dir.File("suanli.db"));
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(Documents(*store), std::vector<std::string>{R"(nodes/node-1={"gpus":8})"});
  core::Result<Snapshot> snapshot = store->Load();
  ASSERT_TRUE(snapshot.ok());
  EXPECT_EQ(snapshot->last_transition_seq, 7);
  EXPECT_EQ(snapshot->last_ledger_seq, 9);
  ASSERT_TRUE(store->Ledger({}).ok());
  EXPECT_EQ(Seqs(*store->Ledger({})), std::vector<int64_t>{9});
}

TEST(SqliteStoreTest, ReusedLedgerSeqAppliesNothingOfTheWholeCommit) {
  TempDir dir;
  std::unique_ptr<Store> store = OpenOrDie(dir.File("suanli.db"));
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

TEST(SqliteStoreTest, ReusedTransitionSeqIsInvalidArgument) {
  TempDir dir;
  std::unique_ptr<Store> store = OpenOrDie(dir.File("suanli.db"));
  ASSERT_NE(store, nullptr);
  Batch batch;
  batch.transitions = {MakeTransition(4, "pod-a", "alice", 0)};
  ASSERT_TRUE(CommitOne(*store, batch).ok());
  batch.puts = {{Collection::kUsers, "bob", "{}"}};
  Status status = CommitOne(*store, batch);
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << status.ToString();
  EXPECT_TRUE(Documents(*store).empty());
}

TEST(SqliteStoreTest, DocumentThatIsNotJsonAppliesNothing) {
  TempDir dir;
  std::unique_ptr<Store> store = OpenOrDie(dir.File("suanli.db"));
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

TEST(SqliteStoreTest, HistoryFiltersByUserPodAndTime) {
  TempDir dir;
  std::unique_ptr<Store> store = OpenOrDie(dir.File("suanli.db"));
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

TEST(SqliteStoreTest, SecondOpenOfTheSameFileIsUnavailableUntilTheFirstCloses) {
  TempDir dir;
  std::unique_ptr<Store> first = OpenOrDie(dir.File("suanli.db"));
  ASSERT_NE(first, nullptr);
  core::Result<std::unique_ptr<Store>> second = OpenSqliteStore(dir.File("suanli.db"));
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(second.status().message().find("in use by another suanli server"), std::string::npos)
      << second.status().message();
  EXPECT_NE(second.status().message().find("pid " + std::to_string(::getpid())), std::string::npos)
      << second.status().message();
  first.reset();
  EXPECT_NE(OpenOrDie(dir.File("suanli.db")), nullptr);
}

TEST(SqliteStoreTest, SchemaFromANewerSuanliIsFailedPrecondition) {
  TempDir dir;
  ASSERT_NE(OpenOrDie(dir.File("suanli.db")), nullptr);
  EXPECT_EQ(RawQuery(dir.File("suanli.db"), "PRAGMA user_version"), "2");
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
  EXPECT_EQ(RawQuery(dir.File("suanli.db"), "PRAGMA user_version = 1"), "");
  std::unique_ptr<Store> store = OpenOrDie(dir.File("suanli.db"));
  EXPECT_EQ(RawQuery(dir.File("suanli.db"), "PRAGMA user_version"), "2");
  Batch batch;
  batch.puts = {{Collection::kEndpoints, "ep_1", R"({"name":"echo"})"},
                {Collection::kJobs, "job_1", R"({"status":"IN_QUEUE"})"}};
  ASSERT_TRUE(store->Commit(std::span<const Batch>(&batch, 1)).ok());
  core::Result<Snapshot> snapshot = store->Load();
  ASSERT_TRUE(snapshot.ok());
  EXPECT_EQ(snapshot->documents.size(), 3u);  // alice kept; the endpoint and the job
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

TEST(SqliteStoreTest, HistoryReadsRunBesideCommits) {
  TempDir dir;
  std::unique_ptr<Store> store = OpenOrDie(dir.File("suanli.db"));
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

}  // namespace
}  // namespace suanli::store
