// CommitQueue: group commit in front of a Store.
//
// Requests submit their batches here, in the order they changed the in-memory state; one writer
// thread takes everything queued so far and commits it in one transaction, so N concurrent requests
// cost one fsync, not N. A batch's `done` runs (on the writer thread) only after its transaction is
// durable, or with the error when it failed: callers acknowledge a write to a client only from
// `done`.
//
// A failed commit is latched (as LevelDB latches a background error): every later Submit fails at
// once with the same error, because the in-memory state is now ahead of the disk and only a restart
// (which reloads from the store) makes them agree again. failed() tells the server to stop.
//
// Thread-safe. The destructor commits what is queued, then joins the writer.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <thread>
#include <vector>

#include "core/mutex.h"
#include "core/status.h"
#include "store/store.h"

namespace suanli::store {

class CommitQueue {
 public:
  using Done = std::function<void(const core::Status&)>;

  explicit CommitQueue(Store& store);
  ~CommitQueue();
  CommitQueue(const CommitQueue&) = delete;
  CommitQueue& operator=(const CommitQueue&) = delete;

  // Queues `batch` (an empty batch is allowed: it completes after everything before it is durable)
  // and returns its sequence number (1, 2, ...). Once a failure is latched, nothing is queued:
  // `done` runs at once, on the caller's thread, with the latched error, before Submit returns.
  uint64_t Submit(Batch batch, Done done);

  // Runs `done` once every batch up to `sequence` is durable (at once, on the caller's thread, if
  // it already is), or with the latched error.
  void AfterDurable(uint64_t sequence, Done done);

  uint64_t submitted() const;  // the last sequence handed out
  uint64_t durable() const;    // every batch up to this one is committed
  core::Status latched_error() const;

  // Commits per transaction, for /metrics.
  uint64_t transactions() const;

 private:
  void WriterLoop() EXCLUDES(mutex_);

  Store& store_;
  mutable core::Mutex mutex_;
  core::CondVar wake_;
  struct Pending {
    uint64_t sequence;
    Batch batch;
    Done done;
  };
  std::deque<Pending> queue_ GUARDED_BY(mutex_);
  std::vector<std::pair<uint64_t, Done>> durability_waiters_ GUARDED_BY(mutex_);
  uint64_t submitted_ GUARDED_BY(mutex_) = 0;
  uint64_t durable_ GUARDED_BY(mutex_) = 0;
  uint64_t transactions_ GUARDED_BY(mutex_) = 0;
  core::Status latched_ GUARDED_BY(mutex_);
  bool stopping_ GUARDED_BY(mutex_) = false;
  std::thread writer_;
};

}  // namespace suanli::store
