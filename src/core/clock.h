// Clock: the one way suanli code reads the time.
//
// Billing, heartbeats and timeouts take a Clock& so tests step time instead of sleeping.
// SystemClock (in clock.cc, the only file that reads the real time) is for production; ManualClock
// is for tests and benchmarks. Both are thread-safe.
#pragma once

#include <atomic>
#include <chrono>
#include <string>
#include <string_view>

#include "core/status.h"

namespace suanli::core {

using TimePoint = std::chrono::system_clock::time_point;
using Duration = std::chrono::system_clock::duration;
// For measuring how long something took (request latency, rate limits): never goes backwards.
using MonotonicTime = std::chrono::steady_clock::time_point;

class Clock {
 public:
  virtual ~Clock() = default;
  // Wall-clock time (UTC); usage intervals are stored in these units.
  virtual TimePoint Now() const = 0;
};

class SystemClock final : public Clock {
 public:
  TimePoint Now() const override;
};

// Starts at `start` and moves only when told to.
class ManualClock final : public Clock {
 public:
  explicit ManualClock(TimePoint start = TimePoint{}) : now_(start.time_since_epoch().count()) {}
  ManualClock(const ManualClock&) = delete;
  ManualClock& operator=(const ManualClock&) = delete;

  TimePoint Now() const override { return TimePoint(Duration(now_.load())); }
  void Advance(Duration step) { now_ += step.count(); }
  void Set(TimePoint time) { now_ = time.time_since_epoch().count(); }

 private:
  std::atomic<Duration::rep> now_;
};

// The monotonic clock's reading (clock.cc, like SystemClock, is the only file that reads it).
MonotonicTime MonotonicNow();

// `time` without its fraction of a millisecond: what the store and the API keep, so a time read
// back equals the time written.
TimePoint TruncateToMillis(TimePoint time);

// The API's time text, "2026-12-02T14:46:25.123Z": UTC, milliseconds. ParseTime also takes fewer
// or more fraction digits (Docker writes nanoseconds) and keeps milliseconds.
std::string FormatTime(TimePoint time);
Result<TimePoint> ParseTime(std::string_view text);

}  // namespace suanli::core
