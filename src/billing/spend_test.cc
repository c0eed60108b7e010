#include "billing/spend.h"

#include <gtest/gtest.h>

#include "billing/meter.h"

namespace suanli::billing {
namespace {

using core::DesiredState;
using core::Money;
using core::PodState;
using std::chrono::seconds;

const Money k4090PerHour = Money::FromMicros(740'000);
const Money kTenCentsPerGbMonth = Money::FromMicros(100'000);

core::Pod PodOf(std::string id, std::string owner, PodState state, DesiredState desired,
                int gpu_count = 1, int volume_gb = 0) {
  core::Pod pod;
  pod.id = std::move(id);
  pod.owner_id = std::move(owner);
  pod.state = state;
  pod.desired = desired;
  pod.gpu_count = gpu_count;
  pod.volume_gb = volume_gb;
  pod.storage_price_per_gb_month = kTenCentsPerGbMonth;
  pod.ran = state != PodState::kPending;  // a pending pod here is one that never ran
  return pod;
}

TEST(SpendTest, StoragePerHourRoundsUpSoARunwayIsNeverOverstated) {
  // 20 GB at $0.10/GB-month: $2/month, 2'000'000 / 720 = 2777.7 micro-dollars per hour.
  EXPECT_EQ(StoragePerHour(kTenCentsPerGbMonth, 20).micros(), 2778);
  EXPECT_EQ(StoragePerHour(Money::FromMicros(720), 1).micros(), 1);  // exact: no rounding
  EXPECT_EQ(StoragePerHour(kTenCentsPerGbMonth, 0).micros(), 0);
}

TEST(SpendTest, ARunningPodCountsItsGpusAndVolumeForItsOwnerOnly) {
  SpendTracker spend;
  spend.Update(PodOf("p1", "alice", PodState::kRunning, DesiredState::kRunning, 2, 20),
               k4090PerHour);
  EXPECT_EQ(spend.Rate("alice").micros(), 2 * 740'000 + 2778);
  EXPECT_EQ(spend.WantedRate("alice"), spend.Rate("alice"));
  EXPECT_EQ(spend.Rate("bob").micros(), 0);
}

TEST(SpendTest, AStoppingPodStillCountsForTheRunwayButNotForTheCap) {
  SpendTracker spend;
  core::Pod pod = PodOf("p1", "alice", PodState::kRunning, DesiredState::kRunning, 1, 20);
  spend.Update(pod, k4090PerHour);
  pod.state = PodState::kStopping;
  pod.desired = DesiredState::kStopped;
  spend.Update(pod, k4090PerHour);  // replaces, never adds to, what it counted
  EXPECT_EQ(spend.Rate("alice").micros(), 740'000 + 2778);
  EXPECT_EQ(spend.WantedRate("alice").micros(), 2778);
  pod.state = PodState::kStopped;
  spend.Update(pod, k4090PerHour);
  EXPECT_EQ(spend.Rate("alice").micros(), 2778) << "a stopped pod pays for its volume only";
  pod.state = PodState::kTerminated;
  spend.Update(pod, k4090PerHour);
  EXPECT_EQ(spend.Rate("alice").micros(), 0);
  EXPECT_TRUE(spend.billable_by_owner().empty()) << "a terminated pod accrues nothing";
}

TEST(SpendTest, BillableAreRunningPodsAndVolumesKept) {
  SpendTracker spend;
  core::Pod running = PodOf("p1", "alice", PodState::kRunning, DesiredState::kRunning);
  running.running_since = core::TimePoint(seconds(100));
  spend.Update(running, k4090PerHour);
  spend.Update(PodOf("p2", "alice", PodState::kStopped, DesiredState::kStopped, 1, 10),
               k4090PerHour);
  spend.Update(PodOf("p3", "alice", PodState::kPending, DesiredState::kRunning), k4090PerHour);
  ASSERT_EQ(spend.billable_by_owner().size(), 1u);
  EXPECT_EQ(spend.billable_by_owner().at("alice"), (std::set<std::string>{"p1", "p2"}));
}

TEST(SpendTest, APodThatNeverRanWantsItsVolumeButPaysNothingForIt) {
  SpendTracker spend;
  core::Pod pod = PodOf("p1", "alice", PodState::kPending, DesiredState::kRunning, 1, 20);
  spend.Update(pod, k4090PerHour);
  EXPECT_EQ(spend.Rate("alice").micros(), 740'000) << "its GPU, as it waits for one; no volume";
  EXPECT_EQ(spend.WantedRate("alice").micros(), 740'000 + 2778);
  EXPECT_TRUE(spend.billable_by_owner().empty());
  pod.created_at = pod.storage_billed_to = core::TimePoint(seconds(1'700'000'000));
  EXPECT_EQ(Unbilled(pod, pod.created_at + std::chrono::hours(5)).micros(), 0);
}

TEST(SpendTest, UnbilledIsWhatAccruedSinceTheLastChargeAtThePodsOwnPrices) {
  core::Pod pod = PodOf("p1", "alice", PodState::kRunning, DesiredState::kRunning, 1, 30);
  const core::TimePoint start(seconds(1'700'000'000));
  pod.created_at = pod.storage_billed_to = start;
  pod.running_since = pod.gpu_billed_to = start;
  pod.gpu_price_per_hour = k4090PerHour;
  const core::TimePoint now = start + seconds(90);
  EXPECT_EQ(Unbilled(pod, now),
            ChargeBetween(k4090PerHour, start, start, now) +
                StorageChargeBetween(kTenCentsPerGbMonth, 30, start, start, now));
  pod.gpu_billed_to = pod.storage_billed_to = now;
  EXPECT_EQ(Unbilled(pod, now).micros(), 0) << "nothing is owed twice";

  // From an earlier point (a ledger read that ends before the last charge): that part again, each
  // from its own start at the earliest; none of either when the pod accrues none.
  const PodAccrual since = AccruedSince(pod, start + seconds(30), start - seconds(50), now);
  ASSERT_TRUE(since.gpu_from && since.storage_from);
  EXPECT_EQ(*since.gpu_from, start + seconds(30));
  EXPECT_EQ(since.gpu, ChargeBetween(k4090PerHour, start, start + seconds(30), now));
  EXPECT_EQ(*since.storage_from, start) << "not before its creation";
  EXPECT_EQ(since.storage, StorageChargeBetween(kTenCentsPerGbMonth, 30, start, start, now));
  pod.state = PodState::kTerminated;
  pod.running_since.reset();
  const PodAccrual none = AccruedSince(pod, start, start, now);
  EXPECT_FALSE(none.gpu_from || none.storage_from);
  EXPECT_EQ((none.gpu + none.storage).micros(), 0);
}

TEST(SpendTest, AffordingNeedsTheRunwayAndRespectsTheCap) {
  const auto ten_minutes = std::chrono::minutes(10);
  const Money per_hour = Money::FromMicros(600'000);  // $0.10 for ten minutes
  EXPECT_TRUE(CheckCanAfford(Money::FromMicros(100'000), per_hour, Money(), ten_minutes).ok());
  const core::Status poor =
      CheckCanAfford(Money::FromMicros(99'999), per_hour, Money(), ten_minutes);
  EXPECT_EQ(poor.code(), core::StatusCode::kResourceExhausted);
  EXPECT_NE(poor.message().find("does not cover 10 minutes"), std::string::npos) << poor.message();
  const core::Status capped = CheckCanAfford(Money::FromMicros(10'000'000), per_hour,
                                             Money::FromMicros(500'000), ten_minutes);
  EXPECT_EQ(capped.code(), core::StatusCode::kResourceExhausted);
  EXPECT_NE(capped.message().find("spend cap"), std::string::npos) << capped.message();
}

}  // namespace
}  // namespace suanli::billing

namespace suanli::billing {
namespace {

core::Volume VolumeOf(std::string id, std::string owner, int size_gb) {
  core::Volume volume;
  volume.id = std::move(id);
  volume.owner_id = std::move(owner);
  volume.size_gb = size_gb;
  volume.storage_price_per_gb_month = core::Money::FromMicros(100'000);
  return volume;
}

TEST(SpendTest, AVolumeOfItsOwnCountsUntilDeletedAndAResizeReplacesItsRate) {
  SpendTracker spend;
  core::Volume volume = VolumeOf("vol_1", "alice", 20);
  spend.UpdateVolume(volume, true);
  EXPECT_EQ(spend.Rate("alice").micros(), 2778);
  EXPECT_EQ(spend.WantedRate("alice").micros(), 2778);
  volume.size_gb = 40;
  spend.UpdateVolume(volume, true);
  EXPECT_EQ(spend.Rate("alice").micros(),
            StoragePerHour(volume.storage_price_per_gb_month, 40).micros());
  spend.UpdateVolume(volume, false);
  EXPECT_EQ(spend.Rate("alice").micros(), 0);
  EXPECT_TRUE(spend.billable_by_owner().empty());  // the pods' list only
}

TEST(SpendTest, AVolumesUnbilledStorageAddsUpToTheSameAsOneChargeAndIsNoneUpToItsBilledTime) {
  core::Volume volume = VolumeOf("vol_1", "alice", 720);
  volume.created_at = core::TimePoint(std::chrono::hours(1000));
  volume.storage_billed_to = volume.created_at;
  const core::TimePoint hour = volume.created_at + std::chrono::hours(1);
  const core::Money first = UnbilledStorage(volume, volume.created_at + std::chrono::minutes(20));
  volume.storage_billed_to = volume.created_at + std::chrono::minutes(20);
  const core::Money rest = UnbilledStorage(volume, hour);
  volume.storage_billed_to = volume.created_at;
  EXPECT_EQ((first + rest).micros(), UnbilledStorage(volume, hour).micros());
  // 720 GB at $0.10 per GB-month for one hour of a 720-hour month: $0.10.
  EXPECT_EQ(UnbilledStorage(volume, hour).micros(), 100'000);
  volume.storage_billed_to = hour;
  EXPECT_EQ(UnbilledStorage(volume, hour).micros(), 0);
}

}  // namespace
}  // namespace suanli::billing
