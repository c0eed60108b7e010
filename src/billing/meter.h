// Meter: what a pod's use costs, to the micro-dollar, from the times its state changed.
//
// A running interval is billed per whole second from the moment the agent reported `running` until
// it reported the container stopped. Charges are cumulative: the charge for seconds [a, b) of an
// interval is Cumulative(b) - Cumulative(a), with Cumulative(s) = floor(rate x s / 3600). However
// the metering loop slices an interval (every minute, at a restart of the server, at the end), the
// slices add up to exactly the charge for the whole interval: no second is billed twice or not at
// all, and no rounding drifts. Pure and stateless; the ledger that records charges lives with the
// store.
#pragma once

#include <chrono>
#include <cstdint>

#include "core/clock.h"
#include "core/money.h"

namespace suanli::billing {

// Micro-dollars for the first `seconds` of an interval at `per_hour`. REQUIRES: seconds >= 0.
core::Money CumulativeCharge(core::Money per_hour, int64_t seconds);

// The charge for the whole seconds of [from, to) within an interval that started at `start`.
// REQUIRES: start <= from <= to. Partial seconds are billed once they complete.
core::Money ChargeBetween(core::Money per_hour, core::TimePoint start, core::TimePoint from,
                          core::TimePoint to);

// Storage: a volume of `gigabytes` at `per_gb_month` (a month is 30 days), for seconds [a, b) of
// the time it has existed, cumulative in the same way.
core::Money StorageChargeBetween(core::Money per_gb_month, int64_t gigabytes,
                                 core::TimePoint created, core::TimePoint from, core::TimePoint to);

// How long `balance` lasts at `per_hour` (all the user's running pods and volumes); zero when the
// balance is not positive, and Duration::max() when nothing is being charged.
core::Duration Runway(core::Money balance, core::Money per_hour);

// A pod may start only if the balance covers `minimum` (default 10 minutes) of everything the user
// would then be paying per hour.
bool CanStart(core::Money balance, core::Money per_hour_after_start,
              core::Duration minimum = std::chrono::minutes(10));

}  // namespace suanli::billing
