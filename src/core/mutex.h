// Mutex, MutexLock and CondVar: std::mutex and std::condition_variable with the annotations that
// let clang check every GUARDED_BY field and REQUIRES function (core/thread_annotations.h).
//
//   mutable core::Mutex mutex_;
//   int count_ GUARDED_BY(mutex_) = 0;
//   void Bump() EXCLUDES(mutex_) { core::MutexLock lock(mutex_); ++count_; }
//
// A predicate that reads guarded fields says so: `[this]() REQUIRES(mutex_) { return done_; }`.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>

#include "core/thread_annotations.h"

namespace suanli::core {

class CAPABILITY("mutex") Mutex {
 public:
  Mutex() = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  void Lock() ACQUIRE() { mutex_.lock(); }
  void Unlock() RELEASE() { mutex_.unlock(); }
  // Tells the analysis what a caller's contract already guarantees (a callback run under the lock).
  void AssertHeld() const ASSERT_CAPABILITY(this) {}

 private:
  friend class CondVar;
  std::mutex mutex_;
};

// Holds `mutex` from construction to destruction (or to Unlock, for a tail that must run outside
// it, such as callbacks).
class SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex& mutex) ACQUIRE(mutex) : mutex_(mutex) { mutex_.Lock(); }
  ~MutexLock() RELEASE() {
    if (held_) mutex_.Unlock();
  }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

  void Unlock() RELEASE() {
    held_ = false;
    mutex_.Unlock();
  }

 private:
  Mutex& mutex_;
  bool held_ = true;
};

class CondVar {
 public:
  CondVar() = default;
  CondVar(const CondVar&) = delete;
  CondVar& operator=(const CondVar&) = delete;

  // Each REQUIRES `mutex` held; it is released while waiting and held again on return.
  template <typename Predicate>
  void Wait(Mutex& mutex, Predicate done) REQUIRES(mutex) NO_THREAD_SAFETY_ANALYSIS {
    std::unique_lock<std::mutex> lock(mutex.mutex_, std::adopt_lock);
    condition_.wait(lock, done);
    lock.release();
  }
  // Whether `done()` holds (false: the timeout passed first).
  template <typename Rep, typename Period, typename Predicate>
  bool WaitFor(Mutex& mutex, std::chrono::duration<Rep, Period> timeout, Predicate done)
      REQUIRES(mutex) NO_THREAD_SAFETY_ANALYSIS {
    std::unique_lock<std::mutex> lock(mutex.mutex_, std::adopt_lock);
    const bool result = condition_.wait_for(lock, timeout, done);
    lock.release();
    return result;
  }
  template <typename Clock, typename ClockDuration, typename Predicate>
  bool WaitUntil(Mutex& mutex, std::chrono::time_point<Clock, ClockDuration> deadline,
                 Predicate done) REQUIRES(mutex) NO_THREAD_SAFETY_ANALYSIS {
    std::unique_lock<std::mutex> lock(mutex.mutex_, std::adopt_lock);
    const bool result = condition_.wait_until(lock, deadline, done);
    lock.release();
    return result;
  }

  void NotifyOne() { condition_.notify_one(); }
  void NotifyAll() { condition_.notify_all(); }

 private:
  std::condition_variable condition_;
};

}  // namespace suanli::core
