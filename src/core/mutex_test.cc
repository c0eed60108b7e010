#include "core/mutex.h"

#include <gtest/gtest.h>

#include <thread>

namespace suanli::core {
namespace {

class Counter {
 public:
  void Add() EXCLUDES(mutex_) {
    MutexLock lock(mutex_);
    ++count_;
    changed_.NotifyAll();
  }
  // Whether `count` was reached within `timeout`.
  bool WaitFor(int count, std::chrono::milliseconds timeout) EXCLUDES(mutex_) {
    MutexLock lock(mutex_);
    return changed_.WaitFor(mutex_, timeout, [&]() REQUIRES(mutex_) { return count_ >= count; });
  }

 private:
  Mutex mutex_;
  CondVar changed_;
  int count_ GUARDED_BY(mutex_) = 0;
};

TEST(MutexTest, WaitForSeesAChangeMadeByAnotherThread) {
  Counter counter;
  std::thread adder([&] {
    for (int i = 0; i < 1000; ++i) counter.Add();
  });
  EXPECT_TRUE(counter.WaitFor(1000, std::chrono::seconds(30)));
  adder.join();
}

TEST(MutexTest, WaitForGivesUpAtTheTimeout) {
  Counter counter;
  counter.Add();
  EXPECT_FALSE(counter.WaitFor(2, std::chrono::milliseconds(20)));
  EXPECT_TRUE(counter.WaitFor(1, std::chrono::milliseconds(20)));
}

TEST(MutexTest, UnlockReleasesBeforeTheScopeEnds) {
  Mutex mutex;
  MutexLock lock(mutex);
  lock.Unlock();
  std::thread other([&] { MutexLock again(mutex); });  // would deadlock were it still held
  other.join();
}

}  // namespace
}  // namespace suanli::core
