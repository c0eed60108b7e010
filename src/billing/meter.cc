#include "billing/meter.h"

#include <limits>

#include "core/check.h"

namespace suanli::billing {
namespace {

// floor(a x b / c) for a, b >= 0 and c > 0, without the int64 overflow of a x b (a rate of
// micro-dollars times a century of seconds exceeds it), saturating at the int64 maximum.
int64_t MulDivFloor(int64_t a, int64_t b, int64_t c) {
  SUANLI_CHECK(a >= 0 && b >= 0 && c > 0, "billing arithmetic on non-negative amounts and times");
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  const int64_t whole = a / c;
  const int64_t rest = a % c;  // < c
  if (b != 0 && whole > kMax / b) return kMax;
  if (b != 0 && rest > kMax / b) {  // only for absurd c: fall back to long double, still floored
    return static_cast<int64_t>(static_cast<long double>(a) * b / c);
  }
  const int64_t high = whole * b;
  const int64_t low = rest * b / c;
  return high > kMax - low ? kMax : high + low;
}

int64_t WholeSeconds(core::Duration duration) {
  return std::chrono::duration_cast<std::chrono::seconds>(duration).count();
}

constexpr int64_t kSecondsPerMonth = 30 * 86'400;

}  // namespace

core::Money CumulativeCharge(core::Money per_hour, int64_t seconds) {
  SUANLI_CHECK(seconds >= 0 && per_hour.micros() >= 0,
               "a charge is a non-negative rate for non-negative time");
  return core::Money::FromMicros(MulDivFloor(per_hour.micros(), seconds, 3'600));
}

core::Money ChargeBetween(core::Money per_hour, core::TimePoint start, core::TimePoint from,
                          core::TimePoint to) {
  SUANLI_CHECK(start <= from && from <= to, "a charged slice lies within its interval, in order");
  return CumulativeCharge(per_hour, WholeSeconds(to - start)) -
         CumulativeCharge(per_hour, WholeSeconds(from - start));
}

core::Money StorageChargeBetween(core::Money per_gb_month, int64_t gigabytes,
                                 core::TimePoint created, core::TimePoint from,
                                 core::TimePoint to) {
  SUANLI_CHECK(created <= from && from <= to, "a charged slice lies within its interval, in order");
  auto cumulative = [&](core::TimePoint at) {
    return MulDivFloor(per_gb_month.micros() * gigabytes, WholeSeconds(at - created),
                       kSecondsPerMonth);
  };
  return core::Money::FromMicros(cumulative(to) - cumulative(from));
}

core::Duration Runway(core::Money balance, core::Money per_hour) {
  if (balance.micros() <= 0) return core::Duration::zero();
  if (per_hour.micros() <= 0) return core::Duration::max();
  const int64_t seconds = MulDivFloor(balance.micros(), 3'600, per_hour.micros());
  // Duration counts nanoseconds: a large balance at a small rate (centuries) saturates.
  constexpr int64_t kMaxSeconds =
      std::chrono::duration_cast<std::chrono::seconds>(core::Duration::max()).count();
  if (seconds >= kMaxSeconds) return core::Duration::max();
  return std::chrono::duration_cast<core::Duration>(std::chrono::seconds(seconds));
}

bool CanStart(core::Money balance, core::Money per_hour_after_start, core::Duration minimum) {
  return Runway(balance, per_hour_after_start) >= minimum;
}

}  // namespace suanli::billing
