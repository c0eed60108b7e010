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

TEST(ParseTimeTest, ReadsTheApisFormAndRoundTrips) {
  const Result<TimePoint> parsed = ParseTime("2026-12-02T14:46:25.123Z");
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(FormatTime(*parsed), "2026-12-02T14:46:25.123Z");
  EXPECT_TRUE(ParseTime("2200-12-31T23:59:59Z").ok());
  EXPECT_TRUE(ParseTime("1970-01-01T00:00:00Z").ok());
}

TEST(ParseTimeTest, RefusesWhatATimePointCannotHold) {
  // Found by fuzzing: year 9026 overflowed the nanosecond count (undefined behaviour).
  for (const char* text :
       {"9026-12-02T14:00:00Z", "2201-01-01T00:00:00Z", "1969-12-31T23:59:59Z",
        "2026-12-02T-1:00:00Z", "2026-12-02T14:-5:00Z", "2026-12-02T14:00:-1Z"}) {
    const Result<TimePoint> parsed = ParseTime(text);
    EXPECT_FALSE(parsed.ok()) << text;
    EXPECT_EQ(parsed.status().code(), StatusCode::kInvalidArgument) << text;
  }
  EXPECT_EQ(ParseTime("9026-12-02T14:00:00Z").status().message(),
            "'9026-12-02T14:00:00Z': the year must be 1970 to 2200");
}

}  // namespace
}  // namespace suanli::core
