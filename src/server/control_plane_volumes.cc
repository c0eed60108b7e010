// The control plane: volumes as a resource of their own (create, resize, delete, who uses them,
// their storage bill), and the data that follows a pod to a node that lacks it: the scheduler's
// preference for the node holding a pod's data, and moves (docs/architecture.md, "Moving a
// volume").
#include <algorithm>

#include "billing/meter.h"
#include "billing/spend.h"
#include "core/mount_path.h"
#include "server/control_plane.h"
#include "server/control_plane_internal.h"

namespace suanli::server {
namespace {

constexpr int kMaxVolumeGb = 100'000;
constexpr size_t kMaxVolumesPerUser = 100;

std::string Joined(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& item : items) out += (out.empty() ? "" : ", ") + item;
  return out;
}

bool HasSharedBackend(const core::Node& node) {
  const auto label = node.labels.find(std::string(core::kSharedVolumesLabel));
  return label != node.labels.end() && label->second == core::kSharedVolumesLabelValue;
}

}  // namespace

// --- Volumes -------------------------------------------------------------------------------------

void ControlPlane::LoadVolumes(std::vector<core::Volume> volumes) {
  for (core::Volume& volume : volumes) {
    spend_.UpdateVolume(volume, true);
    if (volume.state == core::VolumeState::kRestoring) storage_work_[volume.id] = {};
    volumes_[volume.id] = std::move(volume);
  }
}

std::vector<const core::Pod*> ControlPlane::UsersOf(const std::string& volume_id) const {
  std::vector<const core::Pod*> users;
  for (const auto& [id, pod] : pods_) {
    if (pod.state == PodState::kTerminated) continue;
    for (const core::VolumeMount& mount : pod.volumes) {
      if (mount.volume_id == volume_id) users.push_back(&pod);
    }
  }
  return users;
}

VolumeInfo ControlPlane::InfoOf(const core::Volume& volume, core::TimePoint now) const {
  VolumeInfo info{volume, {}};
  for (const core::Pod* pod : UsersOf(volume.id)) {
    info.use.pod_ids.push_back(pod->id);
    for (const core::VolumeMount& mount : pod->volumes) {
      if (mount.volume_id == volume.id && !mount.read_only) info.use.read_write = true;
    }
  }
  info.use.home_node_name =
      volume.home_node_id == core::kAnyNode
          ? std::string(core::kAnyNode)
          : (volume.home_node_id.empty() ? std::string() : NodeName(volume.home_node_id));
  info.use.cost = volume.cost + billing::UnbilledStorage(volume, now);
  return info;
}

Result<Written<VolumeInfo>> ControlPlane::CreateVolume(const Principal& caller, VolumeSpec spec) {
  SUANLI_RETURN_IF_ERROR(PersonOnly(caller));
  SUANLI_RETURN_IF_ERROR(CheckName("volume name", spec.name));
  // From a snapshot, the size may be left to it (0).
  if ((spec.size_gb < 1 && !(spec.size_gb == 0 && !spec.from_snapshot.empty())) ||
      spec.size_gb > kMaxVolumeGb) {
    return core::InvalidArgumentError("size_gb: must be from 1 to " + std::to_string(kMaxVolumeGb));
  }
  Locked locked(*this);
  const core::TimePoint now = Now();
  core::Volume volume;
  // A project's volume is its owner's to pay, and its name is the project's.
  Result<AccessPolicy::CreateScope> scope = access_.ScopeToCreateIn(caller, spec.project);
  if (!scope.ok()) return scope.status();
  volume.project_id = scope->project_id;
  core::User& user = users_.at(scope->payer_id);
  size_t owned = 0;
  for (const auto& [id, other] : volumes_) {
    if (other.owner_id != user.id) continue;
    ++owned;
    if (other.project_id == volume.project_id && other.name == spec.name) {
      return core::AlreadyExistsError(
          std::string(volume.project_id.empty() ? "you have" : "the project has") +
          " a volume named " + spec.name + " already (" + id + "); pick another name");
    }
  }
  if (owned >= kMaxVolumesPerUser) {
    return core::ResourceExhaustedError(
        std::string(volume.project_id.empty() ? "you have " : "the project's owner has ") +
        std::to_string(owned) +
        " volumes, the most one user may have (a project's count as its owner's); delete one "
        "first");
  }
  volume.size_gb = spec.size_gb;
  if (spec.shared) {
    if (!spec.from_snapshot.empty()) {
      return core::InvalidArgumentError(
          "shared and from_snapshot: a restore lands on the node that keeps the snapshot; restore "
          "it into a volume of its own");
    }
    if (!std::ranges::any_of(nodes_,
                             [](const auto& node) { return HasSharedBackend(node.second); })) {
      return core::FailedPreconditionError(
          "no node of this cloud has the shared backend: an operator starts agents with "
          "--shared-volumes PATH (a directory every such node mounts, e.g. an NFS export); or "
          "create the volume without shared, on the node of its first pod");
    }
    volume.home_node_id = core::kAnyNode;
  }
  if (!spec.from_snapshot.empty()) {
    SUANLI_RETURN_IF_ERROR(RestoreInto(caller, spec.from_snapshot, volume));
  }
  volume.storage_price_per_gb_month = options_.storage_per_gb_month;
  SUANLI_RETURN_IF_ERROR(
      CheckCanAfford(user,
                     spend_.Rate(user.id) +
                         billing::StoragePerHour(volume.storage_price_per_gb_month, volume.size_gb),
                     now));
  volume.id = NewId("vol");
  volume.owner_id = user.id;  // the caller, or the project's owner
  volume.name = std::move(spec.name);
  volume.created_at = now;
  volume.storage_billed_to = now;
  Change change(*this);
  const core::Volume& stored = volumes_[volume.id] = std::move(volume);
  spend_.UpdateVolume(stored, true);
  change.Dirty(Collection::kVolumes, stored.id);
  if (!stored.restored_from.empty()) {
    storage_work_[stored.id] = {};
    change.Emit(VolumeEvent(stored, "volume.restore_started",
                            "is being restored from snapshot " + stored.restored_from +
                                " on node " + NodeName(stored.home_node_id)));
  }
  return Written<VolumeInfo>{InfoOf(stored, now), change.Commit()};
}

Result<Written<std::vector<VolumeInfo>>> ControlPlane::ListVolumes(const Principal& caller) const {
  SUANLI_RETURN_IF_ERROR(PersonOnly(caller));
  core::MutexLock lock(mutex_);
  const core::TimePoint now = Now();
  std::vector<VolumeInfo> out;
  for (const auto& [id, volume] : volumes_) {
    if (access_.Allowed(caller, volume.owner_id, volume.project_id, Access::kRead)) {
      out.push_back(InfoOf(volume, now));
    }
  }
  return Written<std::vector<VolumeInfo>>{std::move(out), queue_.submitted()};
}

Result<Written<VolumeInfo>> ControlPlane::GetVolume(const Principal& caller,
                                                    std::string_view id) const {
  SUANLI_RETURN_IF_ERROR(PersonOnly(caller));
  core::MutexLock lock(mutex_);
  Result<std::string> found = FindVolume(caller, id, Access::kRead);
  if (!found.ok()) return found.status();
  return Written<VolumeInfo>{InfoOf(volumes_.at(*found), Now()), queue_.submitted()};
}

Result<Written<VolumeInfo>> ControlPlane::ResizeVolume(const Principal& caller, std::string_view id,
                                                       int size_gb) {
  SUANLI_RETURN_IF_ERROR(PersonOnly(caller));
  if (size_gb < 1 || size_gb > kMaxVolumeGb) {
    return core::InvalidArgumentError("size_gb: must be from 1 to " + std::to_string(kMaxVolumeGb));
  }
  Locked locked(*this);
  Result<std::string> found = FindVolume(caller, id, Access::kWrite);
  if (!found.ok()) return found.status();
  core::Volume& volume = volumes_.at(*found);
  const core::TimePoint now = Now();
  if (size_gb < volume.size_gb) {
    return core::InvalidArgumentError(
        "size_gb: a volume only grows (its data may not fit in less); it has " +
        std::to_string(volume.size_gb) + " GB. Copy what you need into a new, smaller volume");
  }
  core::User& user = users_.at(volume.owner_id);
  const Money more = billing::StoragePerHour(volume.storage_price_per_gb_month, size_gb) -
                     billing::StoragePerHour(volume.storage_price_per_gb_month, volume.size_gb);
  SUANLI_RETURN_IF_ERROR(CheckCanAfford(user, spend_.Rate(user.id) + more, now));
  Change change(*this);
  // The old size is charged up to now, the new one from now on: no second at two prices.
  ChargeVolume(change, volume, now);
  volume.size_gb = size_gb;
  spend_.UpdateVolume(volume, true);
  change.Dirty(Collection::kVolumes, volume.id);
  return Written<VolumeInfo>{InfoOf(volume, now), change.Commit()};
}

Result<Written<VolumeInfo>> ControlPlane::DeleteVolume(const Principal& caller,
                                                       std::string_view id) {
  SUANLI_RETURN_IF_ERROR(PersonOnly(caller));
  Locked locked(*this);
  Result<std::string> found = FindVolume(caller, id, Access::kWrite);
  if (!found.ok()) return found.status();
  core::Volume& volume = volumes_.at(*found);
  if (volume.state == core::VolumeState::kRestoring) {
    return core::FailedPreconditionError("volume " + volume.name +
                                         " is being restored from a snapshot; delete it once "
                                         "`suanli volumes get " +
                                         volume.name + "` says available");
  }
  // First the endpoints: their workers would come back after their pods went.
  for (const auto& [endpoint_id, endpoint] : serverless_.endpoints()) {
    for (const core::VolumeMount& mount : endpoint.volumes) {
      if (mount.volume_id != volume.id) continue;
      return core::FailedPreconditionError(
          "volume " + volume.name + " (" + volume.id + ") is mounted by the workers of endpoint " +
          endpoint.name + " (" + endpoint_id +
          "); delete the endpoint first, or update it without the volume");
    }
  }
  std::vector<std::string> users;
  for (const core::Pod* pod : UsersOf(volume.id)) users.push_back(pod->id);
  if (!users.empty()) {
    return core::FailedPreconditionError("volume " + volume.name + " (" + volume.id +
                                         ") is used by pod " + Joined(users) +
                                         "; terminate those pods first (suanli pods rm ID)");
  }
  const core::TimePoint now = Now();
  Change change(*this);
  ChargeVolume(change, volume, now);
  VolumeInfo info = InfoOf(volume, now);
  if (volume.home_node_id == core::kAnyNode) {
    // Any node with the backend can delete the files; one that is there now does (none: they
    // stay, as a node's copy does while it is away).
    const auto remover = std::ranges::find_if(nodes_, [](const auto& node) {
      return node.second.state == core::NodeState::kReady && HasSharedBackend(node.second);
    });
    if (remover != nodes_.end())
      volume_removals_.emplace_back(remover->first, EngineVolume(volume.id));
  } else if (!volume.home_node_id.empty()) {
    volume_removals_.emplace_back(volume.home_node_id, EngineVolume(volume.id));
  }
  spend_.UpdateVolume(volume, false);
  const std::string volume_id = volume.id;
  volumes_.erase(volume_id);
  change.Dirty(Collection::kVolumes, volume_id);
  return Written<VolumeInfo>{std::move(info), change.Commit()};
}

std::vector<std::pair<std::string, std::string>> ControlPlane::TakeVolumeRemovals() {
  core::MutexLock lock(mutex_);
  std::vector<std::pair<std::string, std::string>> out;
  out.swap(volume_removals_);
  return out;
}

Result<std::vector<core::VolumeMount>> ControlPlane::ResolveVolumes(
    const Principal& caller, const std::vector<VolumeRequest>& requests,
    const std::string& taken_path, const std::string& project_id) const {
  if (requests.size() > wire::kMaxPodVolumes) {
    return core::InvalidArgumentError("volumes: at most " + std::to_string(wire::kMaxPodVolumes) +
                                      " per pod");
  }
  std::set<std::string> paths;
  if (!taken_path.empty()) paths.insert(taken_path);
  std::vector<core::VolumeMount> mounts;
  for (const VolumeRequest& request : requests) {
    SUANLI_RETURN_IF_ERROR(
        core::CheckMountPath(request.mount_path, "volumes: " + request.volume + "'s mount path"));
    if (!paths.insert(request.mount_path).second) {
      return core::InvalidArgumentError(
          "volumes: two volumes at " + request.mount_path +
          " (the pod's own volume is at volume_mount_path); give each its own path");
    }
    // The pod's scope: a person's pod mounts its creator's own volumes, a project's pod the
    // project's (which its creator may write, as a member).
    const core::Volume* volume = nullptr;
    const core::Volume* elsewhere = nullptr;
    for (const auto& [id, candidate] : volumes_) {
      if (id != request.volume && candidate.name != request.volume) continue;
      const bool in_scope = candidate.project_id == project_id &&
                            (!project_id.empty() || candidate.owner_id == caller.user_id);
      if (in_scope) volume = &candidate;
      if (!in_scope &&
          access_.Allowed(caller, candidate.owner_id, candidate.project_id, Access::kRead)) {
        elsewhere = &candidate;
      }
    }
    if (volume == nullptr && elsewhere != nullptr) {
      return core::FailedPreconditionError(
          "volumes: " + request.volume + " is " +
          (elsewhere->project_id.empty() ? std::string("a person's volume")
                                         : "another project's volume") +
          ", and a " +
          (project_id.empty() ? "person's pod mounts only their own volumes"
                              : "project's pod mounts only its project's volumes") +
          " (every member of a project could reach what its pods mount); create one there "
          "(suanli volumes create NAME --size GB" +
          (project_id.empty() ? std::string(")") : " --project " + project_id + ")"));
    }
    if (volume == nullptr) {
      return core::NotFoundError("volumes: you have no volume " + request.volume +
                                 " (suanli volumes list; suanli volumes create NAME --size GB)");
    }
    if (volume->state == core::VolumeState::kRestoring) {
      return core::FailedPreconditionError("volumes: " + volume->name +
                                           " is being restored from a snapshot; attach it once "
                                           "`suanli volumes get " +
                                           volume->name + "` says available");
    }
    for (const core::VolumeMount& earlier : mounts) {
      if (earlier.volume_id == volume->id) {
        return core::InvalidArgumentError("volumes: " + request.volume + " is named twice");
      }
    }
    mounts.push_back({volume->id, request.mount_path, request.read_only,
                      volume->home_node_id == core::kAnyNode});
  }
  return mounts;
}

Status ControlPlane::AttachVolumes(const Principal& caller,
                                   const std::vector<VolumeRequest>& requests,
                                   core::Pod& pod) const {
  Result<std::vector<core::VolumeMount>> mounts = ResolveVolumes(
      caller, requests, pod.volume_gb > 0 ? pod.volume_mount_path : "", pod.project_id);
  if (!mounts.ok()) return mounts.status();
  for (const core::VolumeMount& request : *mounts) {
    const core::Volume* volume = &volumes_.at(request.volume_id);
    for (const core::Pod* user : UsersOf(volume->id)) {
      for (const core::VolumeMount& mount : user->volumes) {
        if (mount.volume_id != volume->id) continue;
        if (!mount.read_only) {
          return core::FailedPreconditionError(
              "volume " + volume->name + " is attached read-write to pod " + user->id +
              "; a volume is either one pod's read-write or any number's read-only: stop and "
              "terminate that pod, or ask for it read-only in both");
        }
        if (!request.read_only) {
          return core::FailedPreconditionError(
              "volume " + volume->name + " is attached read-only to pod " + user->id +
              ", so it cannot also be read-write; attach it read-only (NAME:/path:ro)");
        }
      }
    }
    pod.volumes.push_back(request);
  }
  return Status::Ok();
}

std::string ControlPlane::VolumesKept(const core::Pod& pod) const {
  std::string kept;
  for (const core::VolumeMount& mount : pod.volumes) {
    const auto volume = volumes_.find(mount.volume_id);
    if (volume == volumes_.end()) continue;
    kept += (kept.empty() ? "" : ", ") + volume->second.name;
  }
  const std::string own =
      pod.volume_gb > 0 ? "; its own " + std::to_string(pod.volume_gb) + " GB volume is deleted"
                        : "";
  if (kept.empty()) return own;
  return own + "; its volumes " + kept + " are kept (suanli volumes)";
}

// --- Billing -------------------------------------------------------------------------------------

Money ControlPlane::ChargeStorage(Change& change, const std::string& owner_id,
                                  const std::string& object_id, Money amount, core::TimePoint from,
                                  core::TimePoint to, std::string note) {
  if (amount.micros() <= 0) return Money();
  core::User& user = users_.at(owner_id);
  change.Append(core::LedgerEntry{0, user.id, object_id, core::LedgerKind::kStorage,
                                  Money() - amount, from, to, Now(), std::move(note)});
  user.balance = user.balance - amount;
  charged_micros_ += amount.micros();
  change.Dirty(Collection::kUsers, user.id);
  return amount;
}

void ControlPlane::ChargeVolume(Change& change, core::Volume& volume, core::TimePoint to) {
  if (to <= volume.storage_billed_to) return;
  volume.cost =
      volume.cost + ChargeStorage(change, volume.owner_id, volume.id,
                                  billing::UnbilledStorage(volume, to), volume.storage_billed_to,
                                  to, std::to_string(volume.size_gb) + " GB volume " + volume.name);
  volume.storage_billed_to = to;
  change.Dirty(Collection::kVolumes, volume.id);
}

void ControlPlane::TickVolumes(Change& change, core::TimePoint now) {
  for (auto& [id, volume] : volumes_) {
    if (now - volume.storage_billed_to >= options_.charge_every) ChargeVolume(change, volume, now);
  }
  for (auto& [id, snapshot] : snapshots_) {
    if (now - snapshot.storage_billed_to >= options_.charge_every) {
      ChargeSnapshot(change, snapshot, now);
    }
  }
}

Money ControlPlane::UnbilledVolumes(const std::string& user_id, core::TimePoint now) const {
  Money owed;
  for (const auto& [id, volume] : volumes_) {
    if (volume.owner_id == user_id) owed = owed + billing::UnbilledStorage(volume, now);
  }
  for (const auto& [id, snapshot] : snapshots_) {
    if (snapshot.owner_id == user_id) owed = owed + billing::UnbilledSnapshot(snapshot, now);
  }
  return owed;
}

// --- Data and scheduling -------------------------------------------------------------------------

std::optional<core::TimePoint> ControlPlane::PlaceNearData(const core::Pod& pod,
                                                           sched::PodRequest& request,
                                                           core::TimePoint now) const {
  // A volume on its way somewhere, or in use by a pod bound to a node, cannot move: the pod must
  // go where it is.
  for (const core::VolumeMount& mount : pod.volumes) {
    const auto volume = volumes_.find(mount.volume_id);
    if (volume == volumes_.end() || volume->second.home_node_id == core::kAnyNode) continue;
    std::string pinned = volume->second.state == core::VolumeState::kMoving
                             ? volume->second.moving_to_node_id
                             : std::string();
    for (const core::Pod* user : UsersOf(mount.volume_id)) {
      if (user->id != pod.id && !user->node_id.empty()) pinned = user->node_id;
    }
    if (!pinned.empty()) {
      request.data_node = pinned;
      request.node_required = true;
      return std::nullopt;
    }
  }
  // Data on a node that is away cannot move: the pod waits for that node rather than start
  // elsewhere without it. On a node that is there but full, it waits a while (DataWaitEnd).
  std::optional<core::TimePoint> wait;
  const auto prefer = [&](const std::string& node_id) REQUIRES(mutex_) {
    const auto node = nodes_.find(node_id);
    if (node == nodes_.end()) return false;
    request.data_node = node_id;
    request.node_required = node->second.state != core::NodeState::kReady;
    if (!request.node_required) wait = DataWaitEnd(pod, node->second, now);
    request.node_required = request.node_required || wait.has_value();
    return true;
  };
  if (pod.ran && pod.volume_gb > 0 && prefer(pod.last_node_id)) return wait;
  for (const core::VolumeMount& mount : pod.volumes) {
    const auto volume = volumes_.find(mount.volume_id);
    if (volume != volumes_.end() && prefer(volume->second.home_node_id)) return wait;
  }
  return std::nullopt;
}

// Ski rental: the node that holds the data may free up at any moment or never, and a move costs
// its bytes' time. Waiting for the node as long as the move would take, then moving, never costs
// more than twice what the better choice would have, whatever the node does; moving at once can
// cost hours for a large volume whose node frees up a minute later, and waiting alone can cost
// forever. The bytes are the volumes' sizes (what they may hold: the server does not know what
// they do hold), the rate what moves have shown.
std::optional<core::TimePoint> ControlPlane::DataWaitEnd(const core::Pod& pod,
                                                         const core::Node& node,
                                                         core::TimePoint now) const {
  if (options_.max_data_wait <= core::Duration::zero() || node.cordoned || node.draining) {
    return std::nullopt;
  }
  // A node that could never hold the pod (fewer GPUs of its type than it asks for) is not waited
  // for: only a move helps.
  const auto own_type = std::ranges::count_if(
      node.gpus, [&](const core::GpuDevice& gpu) { return gpu.type == pod.gpu_type; });
  if (own_type < pod.gpu_count) return std::nullopt;
  int64_t gigabytes = pod.ran && pod.last_node_id == node.id ? pod.volume_gb : 0;
  for (const core::VolumeMount& mount : pod.volumes) {
    const auto volume = volumes_.find(mount.volume_id);
    if (volume != volumes_.end() && volume->second.home_node_id == node.id) {
      gigabytes += volume->second.size_gb;
    }
  }
  const auto move_time = std::chrono::duration_cast<core::Duration>(
      std::chrono::duration<double>(static_cast<double>(gigabytes) * 1e9 / move_bytes_per_second_));
  const core::TimePoint until = pod.state_since + std::min(move_time, options_.max_data_wait);
  if (now >= until) return std::nullopt;
  return until;
}

void ControlPlane::PlanMoves(Change& change, core::Pod& pod, const std::string& to_node,
                             core::TimePoint now) {
  pod.moves.clear();
  auto plan = [&](std::string volume, const std::string& from) REQUIRES(mutex_) {
    core::VolumeMove& move = pod.moves.emplace_back();
    move.id = NewId("mv");
    move.volume = std::move(volume);
    move.from_node_id = from;
    move.started_at = now;
    MoveFigures figures;
    figures.move_id = move.id;
    figures.volume = move.volume;
    figures.from_node_id = from;
    figures.to_node_id = to_node;
    change.Emit(MoveEvent(pod, "volume.move_started",
                          "moves volume " + move.volume + " from node " + NodeName(from) +
                              " to node " + NodeName(to_node) + " before it starts",
                          figures));
  };
  // Its own volume: on the node it last ran on (Unbind keeps that while a move is unfinished).
  if (pod.ran && pod.volume_gb > 0 && !pod.last_node_id.empty() && pod.last_node_id != to_node &&
      nodes_.contains(pod.last_node_id)) {
    plan(EngineVolume(pod.id), pod.last_node_id);
  }
  for (const core::VolumeMount& mount : pod.volumes) {
    const auto found = volumes_.find(mount.volume_id);
    if (found == volumes_.end()) continue;
    core::Volume& volume = found->second;
    if (volume.home_node_id == core::kAnyNode || volume.home_node_id == to_node) continue;
    if (volume.home_node_id.empty() || !nodes_.contains(volume.home_node_id)) {
      // Never used yet (or its node was removed with the data): it starts empty here.
      volume.home_node_id = to_node;
      change.Dirty(Collection::kVolumes, volume.id);
      continue;
    }
    plan(EngineVolume(volume.id), volume.home_node_id);
    volume.state = core::VolumeState::kMoving;
    volume.moving_to_node_id = to_node;
    change.Dirty(Collection::kVolumes, volume.id);
  }
}

void ControlPlane::AbandonMoves(Change& change, core::Pod& pod) {
  for (const core::VolumeMove& move : pod.moves) {
    if (move.volume == EngineVolume(pod.id)) {
      pod.last_node_id = move.from_node_id;  // the data is still there
      continue;
    }
    for (auto& [id, volume] : volumes_) {
      if (EngineVolume(id) != move.volume) continue;
      volume.state = core::VolumeState::kAvailable;
      volume.moving_to_node_id.clear();
      change.Dirty(Collection::kVolumes, id);
    }
  }
  pod.moves.clear();
}

void ControlPlane::NoteMove(Change& change, core::Pod& pod, const wire::MoveProgress& progress,
                            const std::string& node_id) {
  const auto move =
      std::find_if(pod.moves.begin(), pod.moves.end(),
                   [&](const core::VolumeMove& m) { return m.id == progress.move_id; });
  if (move == pod.moves.end()) return;  // done already, or abandoned
  MoveFigures figures;
  figures.move_id = move->id;
  figures.volume = move->volume;
  figures.from_node_id = move->from_node_id;
  figures.to_node_id = node_id;
  figures.bytes = progress.bytes;
  figures.total_bytes = progress.total_bytes;
  figures.seconds = static_cast<double>(progress.elapsed_ms) / 1000;
  figures.restarts = progress.restarts;
  figures.sha256 = progress.sha256;
  const auto mib = [](int64_t bytes) { return std::to_string(bytes >> 20) + " MiB"; };
  if (!progress.done) {
    // An event at each tenth of the way (the agent reports about once a second).
    const int64_t total = std::max<int64_t>(progress.total_bytes, 1);
    const int64_t before = pod.pull ? pod.pull->current_bytes * 10 / total : -1;
    const int64_t after = progress.bytes * 10 / total;
    pod.pull = core::PullProgress{progress.bytes, progress.total_bytes};
    if (after != before && progress.total_bytes > 0) {
      change.Emit(MoveEvent(pod, "volume.move_progress",
                            "moving volume " + move->volume + ": " + mib(progress.bytes) + " of " +
                                mib(progress.total_bytes),
                            figures));
    }
    return;
  }
  change.Emit(MoveEvent(pod, "volume.moved",
                        "moved volume " + move->volume + " from node " +
                            NodeName(move->from_node_id) + " to node " + NodeName(node_id) + ": " +
                            std::to_string(progress.bytes) + " bytes in " +
                            std::to_string(progress.elapsed_ms) + " ms",
                        figures));
  // What the next pods' waits for their data are weighed with (DataWaitEnd). Small moves are
  // mostly the archive's and the relay's fixed costs, not a rate.
  if (progress.bytes >= 100'000'000 && progress.elapsed_ms > 0) {
    const double rate =
        static_cast<double>(progress.bytes) * 1000 / static_cast<double>(progress.elapsed_ms);
    move_bytes_per_second_ = (move_bytes_per_second_ + rate) / 2;
  }
  // The source's copy goes once the pod runs here (NoteRunning): until then it is the one that
  // a failed start would fall back on.
  leftover_copies_[pod.id].emplace_back(move->from_node_id, move->volume);
  for (auto& [id, volume] : volumes_) {
    if (EngineVolume(id) != move->volume) continue;
    volume.home_node_id = node_id;
    volume.state = core::VolumeState::kAvailable;
    volume.moving_to_node_id.clear();
    change.Dirty(Collection::kVolumes, id);
  }
  pod.moves.erase(move);
  pod.pull.reset();
  ++pod.generation;
  TouchNode(change, node_id);
}

void ControlPlane::NoteRunning(const core::Pod& pod) {
  const auto leftovers = leftover_copies_.find(pod.id);
  if (leftovers == leftover_copies_.end()) return;
  for (auto& removal : leftovers->second) volume_removals_.push_back(std::move(removal));
  leftover_copies_.erase(leftovers);
}

Result<ControlPlane::MoveSource> ControlPlane::MoveSourceFor(const Principal& caller,
                                                             std::string_view move_id) const {
  if (caller.node_id.empty()) return core::PermissionDeniedError("only a node's agent may do this");
  core::MutexLock lock(mutex_);
  for (const std::string& pod_id : pods_.OnNode(caller.node_id)) {
    for (const core::VolumeMove& move : pods_.at(pod_id).moves) {
      if (move.id != move_id) continue;
      const auto node = nodes_.find(move.from_node_id);
      return MoveSource{move.from_node_id, NodeName(move.from_node_id), move.volume,
                        node != nodes_.end() && node->second.state == core::NodeState::kReady};
    }
  }
  return core::NotFoundError("no pod on this node has move " + std::string(move_id) +
                             " (it finished, or its pod left this node)");
}

}  // namespace suanli::server
