// Spend: what a user's pods cost per hour now, what they owe since their last charge, and whether
// a user can afford one more. The rules a create, the limits and the pod views share, once.
//
// Pure: prices come in as arguments (the control plane knows the catalog and the overrides).
// SpendTracker is thread-compatible: its owner (the control plane) holds a lock around it.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>

#include "core/clock.h"
#include "core/domain.h"
#include "core/money.h"
#include "core/status.h"

namespace suanli::billing {

// A volume of `gigabytes` at `per_gb_month` per hour (a month is 720 hours), rounded up so that a
// runway check never underestimates it.
core::Money StoragePerHour(core::Money per_gb_month, int64_t gigabytes);

// What `gpu_count` GPUs at `per_gpu_hour` each cost per hour, `gpu_milli` thousandths of each (a
// share pays its part of the device's price; rounded down to the micro-dollar).
core::Money GpuRate(core::Money per_gpu_hour, int gpu_count, int gpu_milli = core::kMilliGpu);

// What `pod` has accrued since its last charge, at `now`, at the prices recorded on the pod.
core::Money Unbilled(const core::Pod& pod, core::TimePoint now);

// What `pod` accrues from `gpu_from` and `storage_from` to `now`, part by part: its GPUs while it
// runs (from its start at the earliest), its volume once it has run and until it is terminated
// (from its creation at the earliest). Unbilled starts each at the pod's billed_to; a caller
// whose ledger read ends before that (a slice being committed) starts there, so that the slice
// counts once.
struct PodAccrual {
  core::Money gpu;
  std::optional<core::TimePoint> gpu_from;  // where the GPU part starts; unset: none accrues
  core::Money storage;
  std::optional<core::TimePoint> storage_from;
};
PodAccrual AccruedSince(const core::Pod& pod, core::TimePoint gpu_from,
                        core::TimePoint storage_from, core::TimePoint now);

// What `volume` (a volume of its own, core::Volume) has accrued since `from` (its last charge when
// unset), at `now`: storage from its creation on, at the price recorded on it.
core::Money UnbilledStorage(const core::Volume& volume, core::TimePoint now,
                            std::optional<core::TimePoint> from = std::nullopt);

// The whole gigabytes (10^9 bytes, as the catalog and datasheets count) a snapshot is billed for:
// its archive's size rounded up, at least 1.
int64_t SnapshotGigabytes(const core::Snapshot& snapshot);

// What `snapshot` has accrued since `from` (its last charge when unset), at `now`: nothing until
// it is made (kReady), then its archive's gigabytes at the price recorded on it.
core::Money UnbilledSnapshot(const core::Snapshot& snapshot, core::TimePoint now,
                             std::optional<core::TimePoint> from = std::nullopt);

// OK, or RESOURCE_EXHAUSTED saying why: `balance` must cover `minimum_runway` of `rate_after`
// (everything the user would pay per hour), and `rate_after` must be within `spend_cap_per_hour`
// (zero: no cap).
core::Status CheckCanAfford(core::Money balance, core::Money rate_after,
                            core::Money spend_cap_per_hour, core::Duration minimum_runway);

// Each user's spend rate and the pods that accrue charges, kept current pod by pod so a create
// or a limit check does not walk every pod.
class SpendTracker {
 public:
  // Records what `pod` costs per hour, its GPUs at `gpu_per_hour` each (its type's price now),
  // replacing what it counted before. Call after any change to a pod's state, desired state or
  // price.
  void Update(const core::Pod& pod, core::Money gpu_per_hour);

  // Records what `volume` costs per hour (its storage, paid and wanted alike); `exists` false once
  // it is deleted.
  void UpdateVolume(const core::Volume& volume, bool exists);
  // The same for a snapshot, which costs nothing per hour until it is made.
  void UpdateSnapshot(const core::Snapshot& snapshot, bool exists);

  // Everything the user pays per hour: pods that run or are still stopping, and every volume
  // (the runway's measure).
  core::Money Rate(const std::string& user_id) const;
  // Only the pods their owner wants running, and every volume (the spend cap's measure).
  core::Money WantedRate(const std::string& user_id) const;
  // Owner -> the ids of their pods that accrue charges (running, or holding a volume).
  const std::map<std::string, std::set<std::string>>& billable_by_owner() const {
    return billable_by_owner_;
  }

 private:
  struct Contribution {
    int64_t rate = 0;    // micro-dollars per hour
    int64_t wanted = 0;  // the part its owner wants
  };
  // Replaces what `id` (a volume's or snapshot's) counted for `owner_id` with `rate_micros`.
  void UpdateStorage(const std::string& id, const std::string& owner_id, int64_t rate_micros,
                     bool exists);

  std::unordered_map<std::string, Contribution> by_pod_;
  std::unordered_map<std::string, Contribution> by_user_;
  std::map<std::string, std::set<std::string>> billable_by_owner_;
};

}  // namespace suanli::billing
