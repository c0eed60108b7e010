#include "billing/meter.h"

#include <gtest/gtest.h>

#include <limits>
#include <random>

namespace suanli::billing {
namespace {

using core::Money;
using core::TimePoint;
using std::chrono::seconds;

const Money k4090PerHour = Money::FromMicros(740'000);  // the seed's $0.74/h

TEST(MeterTest, AnHourCostsTheHourlyPriceAndASecondItsShare) {
  EXPECT_EQ(CumulativeCharge(k4090PerHour, 3'600), k4090PerHour);
  EXPECT_EQ(CumulativeCharge(k4090PerHour, 1).micros(), 205);  // 740000 / 3600 = 205.6, floored
  EXPECT_EQ(CumulativeCharge(k4090PerHour, 0).micros(), 0);
}

TEST(MeterTest, SlicesOfAnIntervalAddUpToTheWholeWhateverTheCuts) {
  const TimePoint start(seconds(1'700'000'000));
  const TimePoint end = start + seconds(9'001) + std::chrono::milliseconds(700);
  const Money whole = ChargeBetween(k4090PerHour, start, start, end);
  EXPECT_EQ(whole, CumulativeCharge(k4090PerHour, 9'001));  // the partial last second is not billed
  std::mt19937 random(7);
  for (int trial = 0; trial < 100; ++trial) {
    Money sum;
    TimePoint from = start;
    while (from < end) {
      TimePoint to = from + std::chrono::milliseconds(random() % 120'000 + 1);
      if (to > end) to = end;
      sum = sum + ChargeBetween(k4090PerHour, start, from, to);
      from = to;
    }
    ASSERT_EQ(sum, whole) << "trial " << trial;
  }
}

TEST(MeterTest, StorageIsChargedPerGigabyteMonthBySecond) {
  const Money per_gb_month = Money::FromMicros(100'000);  // $0.10 per GB-month
  const TimePoint created(seconds(0));
  const TimePoint month = created + seconds(30 * 86'400);
  EXPECT_EQ(StorageChargeBetween(per_gb_month, 50, created, created, month).micros(), 5'000'000);
  const TimePoint middle = created + seconds(12'345);
  EXPECT_EQ(StorageChargeBetween(per_gb_month, 50, created, created, middle) +
                StorageChargeBetween(per_gb_month, 50, created, middle, month),
            Money::FromMicros(5'000'000));
}

TEST(MeterTest, RunwayIsHowLongTheBalanceLasts) {
  EXPECT_EQ(Runway(Money::FromMicros(740'000), k4090PerHour), std::chrono::hours(1));
  EXPECT_EQ(Runway(Money::FromMicros(0), k4090PerHour), core::Duration::zero());
  EXPECT_EQ(Runway(Money::FromMicros(-5), k4090PerHour), core::Duration::zero());
  EXPECT_EQ(Runway(Money::FromMicros(5), Money()), core::Duration::max());
}

TEST(MeterTest, ARunwayOfCenturiesSaturatesInsteadOfOverflowing) {
  // $10,000 at $0.002/h is 570 years: more nanoseconds than an int64 holds.
  const Money balance = Money::FromMicros(10'000'000'000);
  const Money per_hour = Money::FromMicros(2'000);
  EXPECT_EQ(Runway(balance, per_hour), core::Duration::max());
  EXPECT_TRUE(CanStart(balance, per_hour));
  EXPECT_EQ(Runway(Money::FromMicros(std::numeric_limits<int64_t>::max()), Money::FromMicros(1)),
            core::Duration::max());
  // Just below the limit the runway is exact.
  EXPECT_EQ(Runway(Money::FromMicros(1'000'000'000), Money::FromMicros(1'000'000)),
            std::chrono::hours(1'000));
}

TEST(MeterTest, APodStartsOnlyWithTenMinutesOfRunway) {
  const Money ten_minutes = Money::FromMicros(740'000 / 6);  // $0.1233
  EXPECT_TRUE(CanStart(ten_minutes + Money::FromMicros(1), k4090PerHour));
  EXPECT_FALSE(CanStart(Money::FromMicros(100'000), k4090PerHour));
  EXPECT_TRUE(CanStart(Money::FromMicros(100'000), k4090PerHour, std::chrono::minutes(5)));
}

}  // namespace
}  // namespace suanli::billing
