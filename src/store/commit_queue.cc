#include "store/commit_queue.h"

#include <algorithm>
#include <utility>

namespace suanli::store {

CommitQueue::CommitQueue(Store& store) : store_(store), writer_([this] { WriterLoop(); }) {}

CommitQueue::~CommitQueue() {
  {
    core::MutexLock lock(mutex_);
    stopping_ = true;
  }
  wake_.NotifyOne();
  writer_.join();
  // Only waiters for sequences never submitted remain: tell them rather than drop them.
  std::vector<std::pair<uint64_t, Done>> orphans;
  {
    core::MutexLock lock(mutex_);
    orphans.swap(durability_waiters_);
  }
  for (auto& waiter : orphans) {
    waiter.second(core::FailedPreconditionError("the commit queue stopped before sequence " +
                                                std::to_string(waiter.first) + " was submitted"));
  }
}

uint64_t CommitQueue::Submit(Batch batch, Done done) {
  core::Status error;
  uint64_t sequence = 0;
  {
    core::MutexLock lock(mutex_);
    sequence = ++submitted_;
    if (latched_.ok()) {
      queue_.push_back({sequence, std::move(batch), std::move(done)});
      wake_.NotifyOne();
      return sequence;
    }
    error = latched_;
  }
  // Failed already: the memory is ahead of the disk, so nothing more may be written. `done` runs
  // here, on the caller's thread, before Submit returns.
  if (done) done(error);
  return sequence;
}

void CommitQueue::AfterDurable(uint64_t sequence, Done done) {
  core::Status now;
  {
    core::MutexLock lock(mutex_);
    if (sequence > durable_) {
      if (latched_.ok()) {
        durability_waiters_.emplace_back(sequence, std::move(done));
        return;
      }
      now = latched_;
    }
  }
  if (done) done(now);
}

uint64_t CommitQueue::submitted() const {
  core::MutexLock lock(mutex_);
  return submitted_;
}

uint64_t CommitQueue::durable() const {
  core::MutexLock lock(mutex_);
  return durable_;
}

core::Status CommitQueue::latched_error() const {
  core::MutexLock lock(mutex_);
  return latched_;
}

uint64_t CommitQueue::transactions() const {
  core::MutexLock lock(mutex_);
  return transactions_;
}

void CommitQueue::WriterLoop() {
  for (;;) {
    std::deque<Pending> group;
    core::Status status;
    {
      core::MutexLock lock(mutex_);
      wake_.Wait(mutex_, [this]() REQUIRES(mutex_) { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping, and everything queued is done
      group.swap(queue_);
      status = latched_;  // a group queued before an earlier one failed must not be written
    }

    if (status.ok()) {
      std::vector<Batch> batches;
      batches.reserve(group.size());
      for (Pending& pending : group) batches.push_back(std::move(pending.batch));
      const bool all_empty =
          std::all_of(batches.begin(), batches.end(), [](const Batch& b) { return b.empty(); });
      if (!all_empty) {
        status = store_.Commit(batches);
        core::MutexLock lock(mutex_);
        ++transactions_;
      }
    }

    std::vector<Done> waiters;
    {
      core::MutexLock lock(mutex_);
      if (status.ok()) {
        durable_ = group.back().sequence;
      } else if (latched_.ok()) {
        latched_ = status;
      }
      // On success the waiters now durable; on failure every waiter, since none can become so.
      auto keep = std::stable_partition(
          durability_waiters_.begin(), durability_waiters_.end(),
          [&](const std::pair<uint64_t, Done>& waiter)
              REQUIRES(mutex_) { return status.ok() && waiter.first > durable_; });
      for (auto it = keep; it != durability_waiters_.end(); ++it) {
        waiters.push_back(std::move(it->second));
      }
      durability_waiters_.erase(keep, durability_waiters_.end());
    }
    for (Pending& pending : group) {
      if (pending.done) pending.done(status);
    }
    for (Done& waiter : waiters) {
      if (waiter) waiter(status);
    }
  }
}

}  // namespace suanli::store
