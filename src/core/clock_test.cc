#include "core/clock.h"

#include <gtest/gtest.h>

namespace suanli::core {
namespace {

using std::chrono::seconds;

TEST(ManualClockTest, MovesOnlyWhenTold) {
  ManualClock clock(TimePoint(seconds(1'000)));
  EXPECT_EQ(clock.Now(), TimePoint(seconds(1'000)));
  EXPECT_EQ(clock.Now(), TimePoint(seconds(1'000)));
  clock.Advance(seconds(90));
  EXPECT_EQ(clock.Now(), TimePoint(seconds(1'090)));
  clock.Set(TimePoint(seconds(5)));
  EXPECT_EQ(clock.Now(), TimePoint(seconds(5)));
}

TEST(SystemClockTest, ReadsTheRealTimeAfter2025) {
  SystemClock clock;
  const Clock& as_interface = clock;
  EXPECT_GT(as_interface.Now().time_since_epoch(), seconds(1'735'689'600));  // 2025-01-01
}

}  // namespace
}  // namespace suanli::core
