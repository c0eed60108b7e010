#include "billing/spend.h"

#include <algorithm>

#include "billing/meter.h"
#include "core/pod_state.h"

namespace suanli::billing {

using core::Money;
using core::PodState;

Money GpuRate(Money per_gpu_hour, int gpu_count, int gpu_milli) {
  return Money::FromMicros(per_gpu_hour.micros() * gpu_count * gpu_milli / core::kMilliGpu);
}

Money StoragePerHour(Money per_gb_month, int64_t gigabytes) {
  constexpr int64_t kHoursPerMonth = 720;
  const int64_t per_month = per_gb_month.micros() * gigabytes;
  return Money::FromMicros((per_month + kHoursPerMonth - 1) / kHoursPerMonth);
}

PodAccrual AccruedSince(const core::Pod& pod, core::TimePoint gpu_from,
                        core::TimePoint storage_from, core::TimePoint now) {
  PodAccrual accrued;
  if (pod.running_since && now > std::max(gpu_from, *pod.running_since)) {
    accrued.gpu_from = std::max(gpu_from, *pod.running_since);
    accrued.gpu = ChargeBetween(pod.gpu_price_per_hour, *pod.running_since, *accrued.gpu_from, now);
  }
  if (pod.volume_gb > 0 && pod.ran && pod.state != PodState::kTerminated &&
      now > std::max(storage_from, pod.created_at)) {
    accrued.storage_from = std::max(storage_from, pod.created_at);
    accrued.storage = StorageChargeBetween(pod.storage_price_per_gb_month, pod.volume_gb,
                                           pod.created_at, *accrued.storage_from, now);
  }
  return accrued;
}

Money Unbilled(const core::Pod& pod, core::TimePoint now) {
  const PodAccrual accrued = AccruedSince(pod, pod.gpu_billed_to, pod.storage_billed_to, now);
  return accrued.gpu + accrued.storage;
}

Money UnbilledStorage(const core::Volume& volume, core::TimePoint now,
                      std::optional<core::TimePoint> from) {
  const core::TimePoint start =
      std::max(from.value_or(volume.storage_billed_to), volume.created_at);
  if (now <= start) return Money();
  return StorageChargeBetween(volume.storage_price_per_gb_month, volume.size_gb, volume.created_at,
                              start, now);
}

int64_t SnapshotGigabytes(const core::Snapshot& snapshot) {
  constexpr int64_t kGigabyte = 1'000'000'000;
  return std::max<int64_t>(1, (snapshot.size_bytes + kGigabyte - 1) / kGigabyte);
}

Money UnbilledSnapshot(const core::Snapshot& snapshot, core::TimePoint now,
                       std::optional<core::TimePoint> from) {
  if (snapshot.state != core::SnapshotState::kReady) return Money();
  const core::TimePoint start =
      std::max(from.value_or(snapshot.storage_billed_to), snapshot.created_at);
  if (now <= start) return Money();
  return StorageChargeBetween(snapshot.storage_price_per_gb_month, SnapshotGigabytes(snapshot),
                              snapshot.created_at, start, now);
}

core::Status CheckCanAfford(Money balance, Money rate_after, Money spend_cap_per_hour,
                            core::Duration minimum_runway) {
  if (!CanStart(balance, rate_after, minimum_runway)) {
    const auto minutes = std::chrono::duration_cast<std::chrono::minutes>(minimum_runway).count();
    return core::ResourceExhaustedError(
        "your balance of " + balance.ToString() + " does not cover " + std::to_string(minutes) +
        " minutes at " + rate_after.ToString() +
        "/h (all your pods and volumes with this one); ask an admin for credits");
  }
  if (spend_cap_per_hour.micros() > 0 && rate_after > spend_cap_per_hour) {
    return core::ResourceExhaustedError(
        "this would make you spend " + rate_after.ToString() + "/h, above your spend cap of " +
        spend_cap_per_hour.ToString() + "/h; raise the cap or stop another pod");
  }
  return core::Status::Ok();
}

void SpendTracker::Update(const core::Pod& pod, Money gpu_per_hour) {
  Contribution now;
  if (pod.state != PodState::kTerminated) {
    // A pod that has not run has no volume yet: its storage is wanted, not yet paid for.
    now.wanted = StoragePerHour(pod.storage_price_per_gb_month, pod.volume_gb).micros();
    if (pod.ran) now.rate = now.wanted;
    const int64_t gpus = GpuRate(gpu_per_hour, pod.gpu_count, pod.gpu_milli).micros();
    const bool wanted = pod.desired == core::DesiredState::kRunning;
    if (wanted || core::HoldsGpus(pod.state)) now.rate += gpus;
    if (wanted) now.wanted += gpus;
  }
  Contribution& before = by_pod_[pod.id];
  Contribution& user = by_user_[pod.owner_id];
  user.rate += now.rate - before.rate;
  user.wanted += now.wanted - before.wanted;
  before = now;
  const bool billable = pod.running_since.has_value() ||
                        (pod.volume_gb > 0 && pod.ran && pod.state != PodState::kTerminated);
  if (billable) {
    billable_by_owner_[pod.owner_id].insert(pod.id);
  } else if (const auto owner = billable_by_owner_.find(pod.owner_id);
             owner != billable_by_owner_.end()) {
    owner->second.erase(pod.id);
    if (owner->second.empty()) billable_by_owner_.erase(owner);
  }
}

void SpendTracker::UpdateVolume(const core::Volume& volume, bool exists) {
  UpdateStorage(volume.id, volume.owner_id,
                StoragePerHour(volume.storage_price_per_gb_month, volume.size_gb).micros(), exists);
}

void SpendTracker::UpdateSnapshot(const core::Snapshot& snapshot, bool exists) {
  const int64_t rate =
      snapshot.state == core::SnapshotState::kReady
          ? StoragePerHour(snapshot.storage_price_per_gb_month, SnapshotGigabytes(snapshot))
                .micros()
          : 0;
  UpdateStorage(snapshot.id, snapshot.owner_id, rate, exists);
}

void SpendTracker::UpdateStorage(const std::string& id, const std::string& owner_id,
                                 int64_t rate_micros, bool exists) {
  Contribution now;
  if (exists) {
    now.rate = rate_micros;
    now.wanted = rate_micros;
  }
  Contribution& before = by_pod_[id];
  Contribution& user = by_user_[owner_id];
  user.rate += now.rate - before.rate;
  user.wanted += now.wanted - before.wanted;
  before = now;
  if (!exists) by_pod_.erase(id);
}

Money SpendTracker::Rate(const std::string& user_id) const {
  const auto it = by_user_.find(user_id);
  return Money::FromMicros(it == by_user_.end() ? 0 : it->second.rate);
}

Money SpendTracker::WantedRate(const std::string& user_id) const {
  const auto it = by_user_.find(user_id);
  return Money::FromMicros(it == by_user_.end() ? 0 : it->second.wanted);
}

}  // namespace suanli::billing
