#include "billing/accounting.h"

#include <gtest/gtest.h>

#include "billing/meter.h"

namespace suanli::billing {
namespace {

using core::LedgerKind;
using core::Money;
using core::TimePoint;
using std::chrono::hours;
using std::chrono::minutes;
using std::chrono::seconds;

const TimePoint kStart(seconds(1'796'200'000));  // 2026-12-02T...Z
const Money k4090PerHour = Money::FromMicros(740'000);

// A 4090 pod with a 10 GB volume, running since kStart, billed to kStart.
core::Pod RunningPod() {
  core::Pod pod;
  pod.id = "pod_a";
  pod.owner_id = "alice";
  pod.gpu_type = "RTX 4090";
  pod.gpu_count = 1;
  pod.state = core::PodState::kRunning;
  pod.running_since = kStart;
  pod.gpu_billed_to = kStart;
  pod.gpu_price_per_hour = k4090PerHour;
  pod.created_at = kStart;
  pod.ran = true;
  pod.volume_gb = 10;
  pod.storage_price_per_gb_month = Money::FromMicros(100'000);
  pod.storage_billed_to = kStart;
  return pod;
}

TEST(AccountingTest, AChargeIsAGpuAndAStorageEntryAndMovesBothBilledTo) {
  const core::Pod pod = RunningPod();
  const PodCharge charge = ChargePod(pod, kStart + hours(1), kStart + hours(1) + seconds(2));
  ASSERT_EQ(charge.entries.size(), 2u);
  const core::LedgerEntry& gpu = charge.entries[0];
  EXPECT_EQ(gpu.kind, LedgerKind::kGpu);
  EXPECT_EQ(gpu.amount, Money() - k4090PerHour) << "a charge is negative: an hour of a 4090";
  EXPECT_EQ(gpu.user_id, "alice");
  EXPECT_EQ(gpu.from, kStart);
  EXPECT_EQ(gpu.to, kStart + hours(1));
  EXPECT_EQ(gpu.at, kStart + hours(1) + seconds(2));
  EXPECT_EQ(gpu.note, "1x RTX 4090");
  const core::LedgerEntry& storage = charge.entries[1];
  EXPECT_EQ(storage.kind, LedgerKind::kStorage);
  EXPECT_EQ(storage.note, "10 GB volume");
  EXPECT_EQ(charge.total, k4090PerHour - storage.amount);
  EXPECT_EQ(charge.gpu_billed_to, kStart + hours(1));
  EXPECT_EQ(charge.storage_billed_to, kStart + hours(1));
}

TEST(AccountingTest, ChargesSlicedEveryMinuteAddUpToOneChargeOfTheWhole) {
  core::Pod sliced = RunningPod();
  Money taken;
  for (TimePoint to = kStart + seconds(61); to <= kStart + hours(2); to += seconds(61)) {
    const PodCharge charge = ChargePod(sliced, to, to);
    taken = taken + charge.total;
    sliced.gpu_billed_to = charge.gpu_billed_to;
    sliced.storage_billed_to = charge.storage_billed_to;
  }
  const PodCharge whole = ChargePod(RunningPod(), sliced.gpu_billed_to, sliced.gpu_billed_to);
  EXPECT_EQ(taken, whole.total) << "no second billed twice or not at all";
}

TEST(AccountingTest, AStoppedPodPaysItsVolumeOnlyAndATerminatedOneNothing) {
  core::Pod pod = RunningPod();
  pod.running_since.reset();
  pod.state = core::PodState::kStopped;
  PodCharge charge = ChargePod(pod, kStart + hours(1), kStart + hours(1));
  ASSERT_EQ(charge.entries.size(), 1u);
  EXPECT_EQ(charge.entries[0].kind, LedgerKind::kStorage);
  EXPECT_EQ(charge.gpu_billed_to, kStart) << "the GPU part does not move while not running";
  pod.state = core::PodState::kTerminated;
  charge = ChargePod(pod, kStart + hours(2), kStart + hours(2));
  EXPECT_TRUE(charge.entries.empty());
  EXPECT_EQ(charge.total, Money());
}

TEST(AccountingTest, AStopReportedLateIsRefundedToItsExactSecond) {
  core::Pod pod = RunningPod();
  pod.gpu_billed_to = kStart + minutes(10);  // the meter charged to here
  const std::optional<core::LedgerEntry> refund =
      RefundGpuPast(pod, kStart + minutes(7), kStart + minutes(11));
  ASSERT_TRUE(refund.has_value());
  EXPECT_EQ(refund->amount,
            ChargeBetween(k4090PerHour, kStart, kStart + minutes(7), kStart + minutes(10)));
  EXPECT_GT(refund->amount.micros(), 0) << "a refund is positive";
  EXPECT_GT(refund->from, refund->to) << "its interval runs backwards";
  EXPECT_NE(refund->note.find("refund: stopped at"), std::string::npos);
  EXPECT_FALSE(RefundGpuPast(pod, kStart + minutes(10), kStart + minutes(11)).has_value());
  EXPECT_FALSE(RefundGpuPast(pod, kStart + minutes(12), kStart + minutes(12)).has_value());
}

core::LedgerEntry Charge(Money amount, TimePoint to) {
  core::LedgerEntry entry;
  entry.kind = LedgerKind::kGpu;
  entry.amount = Money() - amount;
  entry.to = to;
  return entry;
}

TEST(AccountingTest, MonthSpendCountsChargesOfTheMonthAndStartsAgainWithTheNext) {
  MonthSpend spend;
  const TimePoint december = kStart;
  const std::string month = MonthOf(december);
  EXPECT_EQ(month, "2026-12");
  spend.Note("alice", Charge(Money::FromMicros(300), december));
  spend.Note("alice", Charge(Money::FromMicros(200), december + hours(1)));
  core::LedgerEntry credit = Charge(Money::FromMicros(-5'000), december);
  credit.kind = LedgerKind::kCredit;
  spend.Note("alice", credit);
  EXPECT_EQ(spend.SpentIn("alice", month).micros(), 500) << "credits are not spending";
  EXPECT_EQ(spend.SpentIn("bob", month).micros(), 0);

  const TimePoint january = december + hours(24 * 31);
  spend.Note("alice", Charge(Money::FromMicros(50), january));
  EXPECT_EQ(spend.SpentIn("alice", MonthOf(january)).micros(), 50);
  EXPECT_EQ(spend.SpentIn("alice", month).micros(), 0) << "only the current month is kept";
  spend.Note("alice", Charge(Money::FromMicros(999), december));  // a late slice of December
  EXPECT_EQ(spend.SpentIn("alice", MonthOf(january)).micros(), 50);
}

TEST(AccountingTest, ABudgetWarnsAt80PercentAndIsReachedAt100OnceAMonth) {
  const Money budget = Money::FromMicros(1'000);
  const auto step = [&](int64_t spent, std::string_view warned, std::string_view reached) {
    return StepBudget(budget, Money::FromMicros(spent), "2026-12", warned, reached);
  };
  EXPECT_FALSE(step(799, "", "").warn);
  EXPECT_TRUE(step(800, "", "").warn);
  EXPECT_FALSE(step(800, "", "").reach);
  EXPECT_FALSE(step(900, "2026-12", "").warn) << "warned once this month";
  EXPECT_TRUE(step(900, "2026-11", "").warn) << "last month's warning does not count";
  EXPECT_TRUE(step(1'000, "2026-12", "").reach);
  const BudgetStep reached = step(5'000, "", "2026-12");
  EXPECT_FALSE(reached.warn || reached.reach) << "reached once this month";
  const BudgetStep none = StepBudget(Money(), Money::FromMicros(5'000), "2026-12", "", "");
  EXPECT_FALSE(none.warn || none.reach) << "no budget, no steps";
}

}  // namespace
}  // namespace suanli::billing
