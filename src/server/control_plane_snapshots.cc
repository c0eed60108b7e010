// The control plane: snapshots of volumes (a point-in-time tar of a volume's files with its
// SHA-256, kept by the node that held the volume) and volumes restored from them
// (docs/architecture.md, "Snapshots"). The work itself is the agents': the API hands it to them
// through the relay (TakeStorageWork) and reports back here (NoteStorageWork).
#include <algorithm>
#include <cstdio>
#include <ctime>

#include "billing/spend.h"
#include "server/control_plane.h"
#include "server/control_plane_internal.h"

namespace suanli::server {
namespace {

constexpr size_t kMaxSnapshotsPerUser = 100;
// How long after an agent said it is at work (or could not take it) the work is asked for again.
constexpr auto kAskAgainAfter = std::chrono::seconds(2);

// "20261206-193000": a default snapshot name's time, UTC.
std::string CompactUtc(core::TimePoint at) {
  const std::time_t seconds = std::chrono::system_clock::to_time_t(
      std::chrono::time_point_cast<std::chrono::system_clock::duration>(at));
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y%m%d-%H%M%S", &utc);
  return text;
}

// `snapshot` as shown: its cost with what accrued since its last charge.
core::Snapshot WithAccrued(core::Snapshot snapshot, core::TimePoint now) {
  snapshot.cost = snapshot.cost + billing::UnbilledSnapshot(snapshot, now);
  return snapshot;
}

}  // namespace

void ControlPlane::LoadSnapshots(std::vector<core::Snapshot> snapshots) {
  for (core::Snapshot& snapshot : snapshots) {
    spend_.UpdateSnapshot(snapshot, true);
    if (snapshot.state == core::SnapshotState::kCreating) storage_work_[snapshot.id] = {};
    snapshots_[snapshot.id] = std::move(snapshot);
  }
}

Result<Written<core::Snapshot>> ControlPlane::CreateSnapshot(const Principal& caller,
                                                             SnapshotSpec spec) {
  SUANLI_RETURN_IF_ERROR(PersonOnly(caller));
  if (!spec.name.empty()) SUANLI_RETURN_IF_ERROR(CheckName("snapshot name", spec.name));
  Locked locked(*this);
  Result<std::string> found = FindVolume(caller, spec.volume, Access::kWrite);
  if (!found.ok()) return found.status();
  const core::Volume& volume = volumes_.at(*found);
  const core::TimePoint now = Now();
  if (volume.home_node_id.empty()) {
    return core::FailedPreconditionError("volume " + volume.name +
                                         " holds no data yet (no pod has used it); nothing to "
                                         "snapshot");
  }
  if (volume.home_node_id == core::kAnyNode) {
    return core::FailedPreconditionError("volume " + volume.name +
                                         " is on the shared backend, which has no snapshots yet");
  }
  if (volume.state != core::VolumeState::kAvailable) {
    return core::FailedPreconditionError(
        "volume " + volume.name + " is " +
        std::string(volume.state == core::VolumeState::kMoving ? "moving to another node"
                                                               : "being restored") +
        "; snapshot it once `suanli volumes get " + volume.name + "` says available");
  }
  for (const core::Pod* user : UsersOf(volume.id)) {
    const bool writes = std::any_of(
        user->volumes.begin(), user->volumes.end(),
        [&](const core::VolumeMount& m) { return m.volume_id == volume.id && !m.read_only; });
    // Bound to a node, its container may still run (a stop not yet done).
    if (writes && (user->desired == core::DesiredState::kRunning || !user->node_id.empty())) {
      return core::FailedPreconditionError(
          "volume " + volume.name + " is attached read-write to pod " + user->id +
          ", which runs (or is about to): a snapshot of files being written is no point in "
          "time. Stop the pod first (suanli pods stop " +
          user->id + ")");
    }
  }
  const std::string name =
      spec.name.empty() ? volume.name + "-" + CompactUtc(now) : std::move(spec.name);
  size_t owned = 0;
  for (const auto& [id, snapshot] : snapshots_) {
    // An admin's snapshot is the owner's; names are unique among a person's own, or a project's.
    if (snapshot.owner_id != volume.owner_id) continue;
    ++owned;
    if (snapshot.project_id != volume.project_id) continue;
    if (snapshot.name == name) {
      return core::AlreadyExistsError("you have a snapshot named " + name + " already (" + id +
                                      "); pick another name");
    }
  }
  if (owned >= kMaxSnapshotsPerUser) {
    return core::ResourceExhaustedError(
        "you have " + std::to_string(owned) +
        " snapshots, the most one user may have; delete one first (suanli volumes snapshot-rm)");
  }
  const auto node = nodes_.find(volume.home_node_id);
  if (node == nodes_.end()) {
    return core::FailedPreconditionError("the node that held volume " + volume.name +
                                         "'s data was removed; there is nothing to snapshot");
  }
  core::Snapshot snapshot;
  snapshot.id = NewId("snap");
  snapshot.owner_id = volume.owner_id;
  snapshot.project_id = volume.project_id;
  snapshot.name = name;
  snapshot.volume_id = volume.id;
  snapshot.volume_name = volume.name;
  snapshot.volume_size_gb = volume.size_gb;
  snapshot.node_id = volume.home_node_id;
  snapshot.storage_price_per_gb_month = options_.storage_per_gb_month;
  snapshot.created_at = now;
  snapshot.storage_billed_to = now;
  Change change(*this);
  const core::Snapshot& stored = snapshots_[snapshot.id] = std::move(snapshot);
  spend_.UpdateSnapshot(stored, true);
  storage_work_[stored.id] = {};
  change.Dirty(Collection::kSnapshots, stored.id);
  change.Emit(SnapshotEvent(stored, "volume.snapshot_started",
                            "is being made on node " + NodeName(stored.node_id)));
  return Written<core::Snapshot>{stored, change.Commit()};
}

Result<Written<std::vector<core::Snapshot>>> ControlPlane::ListSnapshots(
    const Principal& caller) const {
  SUANLI_RETURN_IF_ERROR(PersonOnly(caller));
  core::MutexLock lock(mutex_);
  const core::TimePoint now = Now();
  std::vector<core::Snapshot> out;
  for (const auto& [id, snapshot] : snapshots_) {
    if (access_.Allowed(caller, snapshot.owner_id, snapshot.project_id, Access::kRead)) {
      out.push_back(WithAccrued(snapshot, now));
    }
  }
  return Written<std::vector<core::Snapshot>>{std::move(out), queue_.submitted()};
}

Result<Written<core::Snapshot>> ControlPlane::GetSnapshot(const Principal& caller,
                                                          std::string_view id) const {
  SUANLI_RETURN_IF_ERROR(PersonOnly(caller));
  core::MutexLock lock(mutex_);
  Result<std::string> found = FindSnapshot(caller, id, Access::kRead);
  if (!found.ok()) return found.status();
  return Written<core::Snapshot>{WithAccrued(snapshots_.at(*found), Now()), queue_.submitted()};
}

Result<Written<core::Snapshot>> ControlPlane::DeleteSnapshot(const Principal& caller,
                                                             std::string_view id) {
  SUANLI_RETURN_IF_ERROR(PersonOnly(caller));
  Locked locked(*this);
  Result<std::string> found = FindSnapshot(caller, id, Access::kWrite);
  if (!found.ok()) return found.status();
  core::Snapshot& snapshot = snapshots_.at(*found);
  for (const auto& [volume_id, volume] : volumes_) {
    if (volume.state == core::VolumeState::kRestoring && volume.restored_from == snapshot.id) {
      return core::FailedPreconditionError("volume " + volume.name + " is being restored from " +
                                           "snapshot " + snapshot.name +
                                           "; delete the snapshot once it is restored");
    }
  }
  Change change(*this);
  ChargeSnapshot(change, snapshot, Now());
  core::Snapshot deleted = snapshot;
  spend_.UpdateSnapshot(snapshot, false);
  snapshot_removals_.emplace_back(snapshot.node_id, snapshot.id);
  storage_work_.erase(snapshot.id);
  snapshots_.erase(deleted.id);
  change.Dirty(Collection::kSnapshots, deleted.id);
  change.Emit(SnapshotEvent(deleted, "volume.snapshot_deleted", "was deleted"));
  return Written<core::Snapshot>{std::move(deleted), change.Commit()};
}

Status ControlPlane::RestoreInto(const Principal& caller, std::string_view snapshot_id,
                                 core::Volume& volume) const {
  Result<std::string> found = FindSnapshot(caller, snapshot_id, Access::kRead);
  if (!found.ok()) return found.status();
  const core::Snapshot& snapshot = snapshots_.at(*found);
  // A project's data stays in it: its snapshots restore into its volumes, a person's into theirs.
  if (snapshot.project_id != volume.project_id) {
    return core::FailedPreconditionError(
        "snapshot " + snapshot.name + " is " +
        (snapshot.project_id.empty() ? std::string("a person's") : "a project's") +
        ", and a snapshot restores only into a volume of its own project (or, for a person's, "
        "of its owner's own); create the volume " +
        (snapshot.project_id.empty() ? std::string("without --project")
                                     : "with --project " + snapshot.project_id));
  }
  if (snapshot.state != core::SnapshotState::kReady) {
    return core::FailedPreconditionError(
        "snapshot " + snapshot.name + " is " +
        (snapshot.state == core::SnapshotState::kCreating
             ? std::string("still being made; restore it once `suanli volumes snapshots` says "
                           "ready")
             : "failed (" + snapshot.state_reason + "); it cannot be restored"));
  }
  if (!nodes_.contains(snapshot.node_id)) {
    return core::FailedPreconditionError("the node that kept snapshot " + snapshot.name +
                                         " was removed, and its archive with it");
  }
  if (volume.size_gb == 0) volume.size_gb = snapshot.volume_size_gb;
  if (volume.size_gb < snapshot.volume_size_gb) {
    return core::InvalidArgumentError("size_gb: snapshot " + snapshot.name + " is of a " +
                                      std::to_string(snapshot.volume_size_gb) +
                                      " GB volume; restore it into at least that much");
  }
  volume.home_node_id = snapshot.node_id;
  volume.state = core::VolumeState::kRestoring;
  volume.restored_from = snapshot.id;
  return Status::Ok();
}

std::vector<wire::RelayRequest> ControlPlane::TakeStorageWork(const std::string& node_id) {
  core::MutexLock lock(mutex_);
  const core::TimePoint now = Now();
  std::vector<wire::RelayRequest> work;
  // Only the work there is (every agent polls every few seconds: no walk over all volumes).
  for (auto& [id, not_before] : storage_work_) {
    if (not_before > now) continue;
    if (const auto snapshot = snapshots_.find(id); snapshot != snapshots_.end()) {
      if (snapshot->second.state != core::SnapshotState::kCreating ||
          snapshot->second.node_id != node_id) {
        continue;
      }
      wire::RelayRequest& request = work.emplace_back();
      request.kind = wire::RelayRequest::Kind::kSnapshotVolume;
      request.pod_id = snapshot->second.volume_id;  // for the agent's log: what it is about
      request.volume = EngineVolume(snapshot->second.volume_id);
      request.snapshot = id;
    } else if (const auto volume = volumes_.find(id); volume != volumes_.end()) {
      const auto from = snapshots_.find(volume->second.restored_from);
      if (volume->second.state != core::VolumeState::kRestoring ||
          volume->second.home_node_id != node_id || from == snapshots_.end()) {
        continue;
      }
      wire::RelayRequest& request = work.emplace_back();
      request.kind = wire::RelayRequest::Kind::kRestoreSnapshot;
      request.pod_id = id;
      request.volume = EngineVolume(id);
      request.snapshot = from->first;
      request.sha256 = from->second.sha256;
    } else {
      continue;
    }
    not_before = core::TimePoint::max();  // held until the agent answers
  }
  std::erase_if(snapshot_removals_, [&](const std::pair<std::string, std::string>& removal) {
    if (removal.first != node_id) return false;
    wire::RelayRequest& request = work.emplace_back();
    request.kind = wire::RelayRequest::Kind::kRemoveSnapshot;
    request.pod_id = removal.second;
    request.snapshot = removal.second;
    return true;
  });
  return work;
}

uint64_t ControlPlane::NoteStorageWork(const wire::RelayRequest& work,
                                       const StorageWorkAnswer& answer) {
  using Kind = wire::RelayRequest::Kind;
  if (work.kind != Kind::kSnapshotVolume && work.kind != Kind::kRestoreSnapshot) return 0;
  const std::string& key = work.kind == Kind::kSnapshotVolume ? work.snapshot : work.pod_id;
  // At work on it (202), or away, busy or late (5xx): asked again a moment later, when the
  // agent answers with the result. This touches nothing but the map: it also runs as the server
  // stops (the relay answers what still waits 503), when the store's queue may be gone.
  if (answer.status == 202 || answer.status >= 500) {
    core::MutexLock lock(mutex_);
    if (const auto held = storage_work_.find(key); held != storage_work_.end()) {
      held->second = Now() + kAskAgainAfter;
    }
    return 0;
  }
  Locked locked(*this);
  storage_work_.erase(key);
  const bool done = answer.status / 100 == 2;
  const std::string why =
      "its node answered " + std::to_string(answer.status) + ": " + answer.error;
  Change change(*this);
  const core::TimePoint now = Now();
  if (work.kind == Kind::kSnapshotVolume) {
    const auto found = snapshots_.find(work.snapshot);
    if (found == snapshots_.end() || found->second.state != core::SnapshotState::kCreating) {
      return queue_.submitted();
    }
    core::Snapshot& snapshot = found->second;
    if (done && answer.size_bytes >= 0 && answer.sha256.size() == 64) {
      snapshot.state = core::SnapshotState::kReady;
      snapshot.size_bytes = answer.size_bytes;
      snapshot.sha256 = answer.sha256;
      snapshot.storage_billed_to = now;  // billed from when its bytes exist
      change.Emit(SnapshotEvent(
          snapshot, "volume.snapshot_ready",
          "is ready: " + std::to_string(answer.size_bytes) + " bytes, SHA-256 " + answer.sha256));
    } else {
      snapshot.state = core::SnapshotState::kFailed;
      snapshot.state_reason =
          done ? "the node's answer lacked the archive's size or checksum" : why;
      change.Emit(
          SnapshotEvent(snapshot, "volume.snapshot_failed", "failed: " + snapshot.state_reason));
    }
    spend_.UpdateSnapshot(snapshot, true);
    change.Dirty(Collection::kSnapshots, snapshot.id);
    capacity_changed_ = true;  // a pod that waited for it may be placed now (WaitsForSnapshot)
  } else {
    const auto found = volumes_.find(work.pod_id);
    if (found == volumes_.end() || found->second.state != core::VolumeState::kRestoring) {
      return queue_.submitted();
    }
    core::Volume& volume = found->second;
    volume.state = core::VolumeState::kAvailable;
    change.Emit(VolumeEvent(volume, done ? "volume.restored" : "volume.restore_failed",
                            done ? "was restored from snapshot " + volume.restored_from
                                 : "could not be restored from snapshot " + volume.restored_from +
                                       " (" + why +
                                       "); it is empty: delete it, or use it as it is"));
    change.Dirty(Collection::kVolumes, volume.id);
  }
  return change.Commit();
}

bool ControlPlane::WaitsForSnapshot(const core::Pod& pod) const {
  if (pod.volumes.empty()) return false;
  // Only the snapshots being made (storage_work_), not all of them: this runs per pending pod.
  for (const auto& [id, not_before] : storage_work_) {
    const auto snapshot = snapshots_.find(id);
    if (snapshot == snapshots_.end() || snapshot->second.state != core::SnapshotState::kCreating) {
      continue;
    }
    for (const core::VolumeMount& mount : pod.volumes) {
      if (mount.volume_id == snapshot->second.volume_id && !mount.read_only) return true;
    }
  }
  return false;
}

void ControlPlane::LoseSnapshotsOn(Change& change, const core::Node& node) {
  const core::TimePoint now = Now();
  const std::string reason = "its node " + node.name + " was removed, and its archive with it";
  for (auto& [id, snapshot] : snapshots_) {
    if (snapshot.node_id != node.id || snapshot.state == core::SnapshotState::kFailed) continue;
    ChargeSnapshot(change, snapshot, now);
    snapshot.state = core::SnapshotState::kFailed;
    snapshot.state_reason = reason;
    spend_.UpdateSnapshot(snapshot, true);
    storage_work_.erase(id);
    change.Emit(SnapshotEvent(snapshot, "volume.snapshot_failed", "failed: " + reason));
  }
  for (auto& [id, volume] : volumes_) {
    if (volume.state != core::VolumeState::kRestoring || volume.home_node_id != node.id) continue;
    volume.state = core::VolumeState::kAvailable;
    volume.home_node_id.clear();  // nothing of it is anywhere
    storage_work_.erase(id);
    change.Emit(VolumeEvent(volume, "volume.restore_failed",
                            "could not be restored from snapshot " + volume.restored_from + " (" +
                                reason + "); it is empty"));
    change.Dirty(Collection::kVolumes, id);
  }
}

void ControlPlane::ChargeSnapshot(Change& change, core::Snapshot& snapshot, core::TimePoint to) {
  if (to <= snapshot.storage_billed_to) return;
  snapshot.cost =
      snapshot.cost +
      ChargeStorage(
          change, snapshot.owner_id, snapshot.id, billing::UnbilledSnapshot(snapshot, to),
          snapshot.storage_billed_to, to,
          std::to_string(billing::SnapshotGigabytes(snapshot)) + " GB snapshot " + snapshot.name);
  snapshot.storage_billed_to = to;
  change.Dirty(Collection::kSnapshots, snapshot.id);
}

}  // namespace suanli::server
