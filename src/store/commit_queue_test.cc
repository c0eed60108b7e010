#include "store/commit_queue.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <functional>
#include <future>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "store/store_testing.h"
#include "testing/temp_dir.h"

namespace suanli::store {
namespace {

using core::Status;
using core::StatusCode;
using suanli::testing::TempDir;
using testing::MakeCharge;
using testing::MakeTransition;

// A real SqliteStore that can be slowed down, held at the start of a commit, or made to fail its
// N-th commit (1-based) without writing anything, as a full disk would.
class FailingStore final : public Store {
 public:
  explicit FailingStore(std::unique_ptr<Store> real) : real_(std::move(real)) {}

  void FailCommit(int n) { fail_on_ = n; }
  void SetDelay(std::chrono::microseconds delay) { delay_ = delay; }
  // Runs at the start of every commit, on the writer thread, with the commit's number.
  void SetBeforeCommit(std::function<void(int)> hook) { before_commit_ = std::move(hook); }
  int commits() const { return commits_.load(); }
  size_t largest_group() const { return largest_group_.load(); }

  core::Result<Snapshot> Load() override { return real_->Load(); }
  Status Commit(std::span<const Batch> batches) override {
    const int n = ++commits_;
    largest_group_ = std::max(largest_group_.load(), batches.size());
    if (before_commit_) before_commit_(n);
    if (delay_.count() > 0) std::this_thread::sleep_for(delay_);
    if (n == fail_on_) return core::UnavailableError("injected: the disk is full");
    return real_->Commit(batches);
  }
  core::Result<std::vector<core::LedgerEntry>> Ledger(const HistoryQuery& query) override {
    return real_->Ledger(query);
  }
  core::Result<std::vector<core::Transition>> Transitions(const HistoryQuery& query) override {
    return real_->Transitions(query);
  }
  core::Result<std::vector<core::Event>> Events(const EventQuery& query) override {
    return real_->Events(query);
  }
  core::Result<std::vector<core::AuditEntry>> Audit(const AuditQuery& query) override {
    return real_->Audit(query);
  }

 private:
  std::unique_ptr<Store> real_;
  int fail_on_ = 0;
  std::chrono::microseconds delay_{0};
  std::function<void(int)> before_commit_;
  std::atomic<int> commits_{0};
  std::atomic<size_t> largest_group_{0};
};

std::unique_ptr<FailingStore> OpenFailingStore(const std::filesystem::path& file) {
  core::Result<std::unique_ptr<Store>> store = OpenSqliteStore(file);
  EXPECT_TRUE(store.ok()) << store.status().ToString();
  return store.ok() ? std::make_unique<FailingStore>(std::move(store).value()) : nullptr;
}

Batch ChargeBatch(int64_t seq) {
  Batch batch;
  batch.ledger = {MakeCharge(seq, "alice", "pod-a", seq * 60, seq * 60 + 60)};
  return batch;
}

// Submits `batch` and waits for its `done`.
Status SubmitAndWait(CommitQueue& queue, Batch batch) {
  std::promise<Status> done;
  std::future<Status> result = done.get_future();
  (void)queue.Submit(std::move(batch), [&done](const Status& status) { done.set_value(status); });
  return result.get();
}

std::vector<int64_t> LedgerSeqs(Store& store) {
  core::Result<std::vector<core::LedgerEntry>> ledger = store.Ledger({});
  EXPECT_TRUE(ledger.ok()) << ledger.status().ToString();
  std::vector<int64_t> seqs;
  if (!ledger.ok()) return seqs;
  for (const core::LedgerEntry& entry : *ledger) seqs.push_back(entry.seq);
  return seqs;
}

// A latch the test opens once: what a held commit waits on.
class Gate {
 public:
  void Open() {
    std::lock_guard lock(mutex_);
    open_ = true;
    opened_.notify_all();
  }
  void Wait() {
    std::unique_lock lock(mutex_);
    opened_.wait(lock, [this] { return open_; });
  }

 private:
  std::mutex mutex_;
  std::condition_variable opened_;
  bool open_ = false;
};

TEST(CommitQueueTest, ConcurrentSubmitsAllCommitInOrderAndShareTransactions) {
  TempDir dir;
  std::unique_ptr<FailingStore> store = OpenFailingStore(dir.File("suanli.db"));
  ASSERT_NE(store, nullptr);
  store->SetDelay(std::chrono::milliseconds(1));  // a slow disk, so that requests pile up
  constexpr int kThreads = 8;
  constexpr int kPerThread = 125;
  constexpr int kBatches = kThreads * kPerThread;

  std::mutex done_mutex;
  std::vector<uint64_t> done_order;
  std::atomic<int> failures{0};
  {
    CommitQueue queue(*store);
    // Like the control plane: the state changes (here: the next seq) and the Submit happen under
    // one lock, so the queue's order is the order of the changes.
    std::mutex state_mutex;
    int64_t next_seq = 1;
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&] {
        for (int i = 0; i < kPerThread; ++i) {
          std::lock_guard lock(state_mutex);
          const int64_t seq = next_seq++;
          Batch batch;
          batch.puts = {{Collection::kSettings, "last", "{\"seq\":" + std::to_string(seq) + "}"}};
          batch.transitions = {MakeTransition(seq, "pod-" + std::to_string(seq % 7), "alice", seq)};
          const uint64_t sequence = queue.Submit(std::move(batch), [&, seq](const Status& status) {
            if (!status.ok()) ++failures;
            std::lock_guard done_lock(done_mutex);
            done_order.push_back(static_cast<uint64_t>(seq));
          });
          EXPECT_EQ(sequence, static_cast<uint64_t>(seq));
        }
      });
    }
    for (std::thread& thread : threads) thread.join();
    std::promise<Status> all;
    queue.AfterDurable(kBatches, [&all](const Status& status) { all.set_value(status); });
    EXPECT_TRUE(all.get_future().get().ok());
    EXPECT_EQ(queue.durable(), static_cast<uint64_t>(kBatches));
    EXPECT_EQ(queue.submitted(), static_cast<uint64_t>(kBatches));
    EXPECT_EQ(queue.transactions(), static_cast<uint64_t>(store->commits()));
    EXPECT_LT(queue.transactions(), static_cast<uint64_t>(kBatches));
    EXPECT_GT(store->largest_group(), 1U);
  }

  EXPECT_EQ(failures.load(), 0);
  ASSERT_EQ(done_order.size(), static_cast<size_t>(kBatches));
  EXPECT_TRUE(std::is_sorted(done_order.begin(), done_order.end()));
  core::Result<std::vector<core::Transition>> transitions = store->Transitions({});
  ASSERT_TRUE(transitions.ok());
  ASSERT_EQ(transitions->size(), static_cast<size_t>(kBatches));
  for (int i = 0; i < kBatches; ++i) ASSERT_EQ((*transitions)[static_cast<size_t>(i)].seq, i + 1);
  // The last put wins only if the batches were applied in submission order.
  core::Result<Snapshot> snapshot = store->Load();
  ASSERT_TRUE(snapshot.ok());
  ASSERT_EQ(snapshot->documents.size(), 1U);
  EXPECT_EQ(snapshot->documents[0].json, "{\"seq\":" + std::to_string(kBatches) + "}");
}

TEST(CommitQueueTest, FailedCommitIsLatchedAndNothingOfItReachesTheDisk) {
  TempDir dir;
  {
    std::unique_ptr<FailingStore> store = OpenFailingStore(dir.File("suanli.db"));
    ASSERT_NE(store, nullptr);
    store->FailCommit(3);
    CommitQueue queue(*store);
    EXPECT_TRUE(SubmitAndWait(queue, ChargeBatch(1)).ok());
    EXPECT_TRUE(SubmitAndWait(queue, ChargeBatch(2)).ok());
    Status failed = SubmitAndWait(queue, ChargeBatch(3));
    EXPECT_EQ(failed.code(), StatusCode::kUnavailable);
    EXPECT_EQ(failed.message(), "injected: the disk is full");
    EXPECT_EQ(queue.latched_error(), failed);
    EXPECT_EQ(queue.durable(), 2U);

    // Later submits fail at once, on this thread, without reaching the store.
    Status later;
    bool ran = false;
    (void)queue.Submit(ChargeBatch(4), [&](const Status& status) {
      later = status;
      ran = true;
    });
    EXPECT_TRUE(ran);
    EXPECT_EQ(later, failed);
    EXPECT_EQ(store->commits(), 3);

    Status durable_two = core::InternalError("not run");
    queue.AfterDurable(2, [&](const Status& status) { durable_two = status; });
    EXPECT_TRUE(durable_two.ok());
    Status durable_three;
    queue.AfterDurable(3, [&](const Status& status) { durable_three = status; });
    EXPECT_EQ(durable_three, failed);
  }
  std::unique_ptr<FailingStore> reopened = OpenFailingStore(dir.File("suanli.db"));
  ASSERT_NE(reopened, nullptr);
  EXPECT_EQ(LedgerSeqs(*reopened), (std::vector<int64_t>{1, 2}));
}

TEST(CommitQueueTest, EveryBatchOfAFailedGroupAndEveryWaiterGetsTheError) {
  TempDir dir;
  {
    std::unique_ptr<FailingStore> store = OpenFailingStore(dir.File("suanli.db"));
    ASSERT_NE(store, nullptr);
    Gate release;
    std::promise<void> first_started;
    store->SetBeforeCommit([&](int n) {
      if (n != 1) return;
      first_started.set_value();
      release.Wait();
    });
    store->FailCommit(2);
    CommitQueue queue(*store);

    std::promise<Status> first;
    (void)queue.Submit(ChargeBatch(1), [&](const Status& status) { first.set_value(status); });
    first_started.get_future().wait();  // batch 1 is alone in commit 1; the rest queue behind it
    std::mutex mutex;
    std::vector<Status> group;
    for (int64_t seq = 2; seq <= 6; ++seq) {
      (void)queue.Submit(ChargeBatch(seq), [&](const Status& status) {
        std::lock_guard lock(mutex);
        group.push_back(status);
      });
    }
    std::promise<Status> waiter;
    queue.AfterDurable(4, [&](const Status& status) { waiter.set_value(status); });
    release.Open();

    EXPECT_TRUE(first.get_future().get().ok());
    Status waited = waiter.get_future().get();
    EXPECT_EQ(waited.code(), StatusCode::kUnavailable);
    std::lock_guard lock(mutex);  // the waiter runs after every done of its group
    ASSERT_EQ(group.size(), 5U);
    for (const Status& status : group) EXPECT_EQ(status, waited);
    EXPECT_EQ(store->commits(), 2);
    EXPECT_EQ(store->largest_group(), 5U);
    EXPECT_EQ(queue.durable(), 1U);
  }
  std::unique_ptr<FailingStore> reopened = OpenFailingStore(dir.File("suanli.db"));
  ASSERT_NE(reopened, nullptr);
  EXPECT_EQ(LedgerSeqs(*reopened), std::vector<int64_t>{1});
}

TEST(CommitQueueTest, AfterDurableRunsAtOnceWhenAlreadyDurable) {
  TempDir dir;
  std::unique_ptr<FailingStore> store = OpenFailingStore(dir.File("suanli.db"));
  ASSERT_NE(store, nullptr);
  CommitQueue queue(*store);
  ASSERT_TRUE(SubmitAndWait(queue, ChargeBatch(1)).ok());
  bool ran = false;
  const std::thread::id caller = std::this_thread::get_id();
  queue.AfterDurable(1, [&](const Status& status) {
    EXPECT_TRUE(status.ok());
    EXPECT_EQ(std::this_thread::get_id(), caller);
    ran = true;
  });
  EXPECT_TRUE(ran);
}

TEST(CommitQueueTest, AfterDurableWaitsForTheCommit) {
  TempDir dir;
  std::unique_ptr<FailingStore> store = OpenFailingStore(dir.File("suanli.db"));
  ASSERT_NE(store, nullptr);
  Gate release;
  store->SetBeforeCommit([&](int) { release.Wait(); });
  CommitQueue queue(*store);
  const uint64_t sequence = queue.Submit(ChargeBatch(1), nullptr);
  std::promise<Status> durable;
  std::atomic<bool> ran{false};
  queue.AfterDurable(sequence, [&](const Status& status) {
    ran = true;
    durable.set_value(status);
  });
  EXPECT_FALSE(ran.load());
  EXPECT_EQ(queue.durable(), 0U);
  release.Open();
  EXPECT_TRUE(durable.get_future().get().ok());
  EXPECT_EQ(queue.durable(), sequence);
  EXPECT_EQ(LedgerSeqs(*store), std::vector<int64_t>{1});
}

TEST(CommitQueueTest, EmptyBatchCompletesWithoutAStoreCall) {
  TempDir dir;
  std::unique_ptr<FailingStore> store = OpenFailingStore(dir.File("suanli.db"));
  ASSERT_NE(store, nullptr);
  CommitQueue queue(*store);
  EXPECT_TRUE(SubmitAndWait(queue, Batch{}).ok());
  EXPECT_EQ(queue.durable(), 1U);
  EXPECT_EQ(store->commits(), 0);
  EXPECT_EQ(queue.transactions(), 0U);
}

TEST(CommitQueueTest, DestructorCommitsEverythingQueued) {
  TempDir dir;
  std::unique_ptr<FailingStore> store = OpenFailingStore(dir.File("suanli.db"));
  ASSERT_NE(store, nullptr);
  store->SetDelay(std::chrono::milliseconds(2));
  constexpr int kBatches = 100;
  std::atomic<int> ok{0};
  {
    CommitQueue queue(*store);
    for (int64_t seq = 1; seq <= kBatches; ++seq) {
      (void)queue.Submit(ChargeBatch(seq), [&](const Status& status) {
        if (status.ok()) ++ok;
      });
    }
  }
  EXPECT_EQ(ok.load(), kBatches);
  EXPECT_EQ(LedgerSeqs(*store).size(), static_cast<size_t>(kBatches));
}

// The child: commits batches through a CommitQueue as fast as it can and writes the ledger seq of
// each acknowledged batch (8 bytes) to `ack_fd`, until it is killed. Exits 2 on any failure.
[[noreturn]] void CommitUntilKilled(const std::filesystem::path& file, int ack_fd) {
  core::Result<std::unique_ptr<Store>> store = OpenSqliteStore(file);
  if (!store.ok()) ::_exit(2);
  CommitQueue queue(**store);
  for (int64_t seq = 1;; ++seq) {
    Batch batch = ChargeBatch(seq);
    batch.puts = {testing::MakePodDocument("pod-" + std::to_string(seq % 16), seq)};
    const uint64_t sequence = queue.Submit(std::move(batch), [seq, ack_fd](const Status& status) {
      if (!status.ok() || ::write(ack_fd, &seq, sizeof seq) != sizeof seq) ::_exit(2);
    });
    // Keep at most about 64 batches in flight, so that every commit is a group.
    if (sequence > 64 && sequence % 32 == 0) {
      std::promise<void> caught_up;
      queue.AfterDurable(sequence - 32, [&caught_up](const Status&) { caught_up.set_value(); });
      caught_up.get_future().wait();
    }
  }
}

TEST(CommitQueueTest, AcknowledgedWritesSurviveKill9) {
  TempDir dir;
  const std::filesystem::path file = dir.File("suanli.db");
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::close(fds[0]);
    CommitUntilKilled(file, fds[1]);
  }
  ::close(fds[1]);

  std::set<int64_t> acknowledged;
  auto read_ack = [&]() {
    int64_t seq = 0;
    ssize_t got = 0;
    while (got < static_cast<ssize_t>(sizeof seq)) {
      const ssize_t n = ::read(fds[0], reinterpret_cast<char*>(&seq) + got, sizeof seq - got);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;
      got += n;
    }
    acknowledged.insert(seq);
    return true;
  };
  while (acknowledged.size() < 300 && read_ack()) {
  }
  ASSERT_EQ(::kill(child, SIGKILL), 0);
  int wait_status = 0;
  ASSERT_EQ(::waitpid(child, &wait_status, 0), child);
  // Acks already in the pipe were acknowledged before the kill, so they must survive too.
  while (read_ack()) {
  }
  ::close(fds[0]);
  ASSERT_TRUE(WIFSIGNALED(wait_status)) << "the child exited by itself with " << wait_status;
  ASSERT_GE(acknowledged.size(), 300U);

  std::unique_ptr<FailingStore> store = OpenFailingStore(file);
  ASSERT_NE(store, nullptr);
  const std::vector<int64_t> seqs = LedgerSeqs(*store);
  const std::set<int64_t> present(seqs.begin(), seqs.end());
  for (int64_t seq : acknowledged) ASSERT_TRUE(present.count(seq) == 1) << "lost seq " << seq;
  // Commits are applied in order, so what survived is a prefix with no gaps.
  for (size_t i = 0; i < seqs.size(); ++i) ASSERT_EQ(seqs[i], static_cast<int64_t>(i + 1));
}

}  // namespace
}  // namespace suanli::store
