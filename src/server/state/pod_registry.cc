#include "server/state/pod_registry.h"

#include <utility>

namespace suanli::server {

using core::PodState;

core::Pod& PodRegistry::Add(core::Pod pod) {
  const std::string id = pod.id;
  pods_.insert_or_assign(id, std::move(pod));
  Reindex(id);
  return pods_.at(id);
}

void PodRegistry::Reindex(const std::string& id) {
  const auto pod = pods_.find(id);
  if (pod == pods_.end()) return;
  const auto [indexed, added] = keys_.try_emplace(id);
  Keys& before = indexed->second;  // all empty for a pod not indexed yet
  // Most writes (a reason, a bill, a generation) move no index: checked without copying the keys.
  if (!added && IndexedAsIs(before, pod->second)) return;
  const Keys now = KeysOf(pod->second);
  Move(by_owner_, id, before.owner, now.owner);
  Move(by_project_, id, before.project, now.project);
  Move(on_node_, id, before.node, now.node);
  Move(leaving_, id, before.leaving, now.leaving);
  if (now.queued && !before.queued) {
    pending_.insert(id);
    newly_pending_.insert(id);
  } else if (!now.queued && before.queued) {
    pending_.erase(id);
    newly_pending_.erase(id);
  }
  if (!added) Count(before, -1);
  Count(now, +1);
  before = now;
}

uint64_t PodRegistry::Revision(const std::string& id) const {
  const auto revision = revisions_.find(id);
  return revision == revisions_.end() ? 0 : revision->second;
}

PodRegistry::Counts PodRegistry::CountsOf(const std::string& owner_id) const {
  const auto counts = counts_.find(owner_id);
  return counts == counts_.end() ? Counts{} : counts->second;
}

PodRegistry::Keys PodRegistry::KeysOf(const core::Pod& pod) {
  Keys keys;
  keys.owner = pod.owner_id;
  keys.project = pod.project_id;
  keys.node = pod.node_id;
  if (IsLeaving(pod)) keys.leaving = pod.last_node_id;
  keys.queued = pod.state == PodState::kPending && pod.node_id.empty();
  keys.live = pod.state != PodState::kTerminated;
  keys.pending = pod.state == PodState::kPending;
  return keys;
}

bool PodRegistry::IndexedAsIs(const Keys& keys, const core::Pod& pod) {
  const bool leaving = IsLeaving(pod);
  return keys.node == pod.node_id && keys.live == (pod.state != PodState::kTerminated) &&
         keys.pending == (pod.state == PodState::kPending) &&
         keys.queued == (keys.pending && pod.node_id.empty()) && keys.leaving.empty() == !leaving &&
         (!leaving || keys.leaving == pod.last_node_id) && keys.owner == pod.owner_id &&
         keys.project == pod.project_id;
}

const PodRegistry::Ids& PodRegistry::In(const std::map<std::string, Ids>& index,
                                        const std::string& key) {
  static const Ids kNone;
  const auto ids = index.find(key);
  return ids == index.end() ? kNone : ids->second;
}

void PodRegistry::Move(std::map<std::string, Ids>& index, const std::string& id,
                       const std::string& from, const std::string& to) {
  if (from == to) return;
  if (!from.empty()) {
    const auto ids = index.find(from);
    if (ids != index.end()) {
      ids->second.erase(id);
      if (ids->second.empty()) index.erase(ids);
    }
  }
  if (!to.empty()) index[to].insert(id);
}

void PodRegistry::Count(const Keys& keys, int sign) {
  Counts& counts = counts_[keys.owner];
  if (keys.live) counts.live += sign;
  if (keys.pending) counts.pending += sign;
}

core::Status PodRegistry::CheckIndexes() const {
  PodRegistry rebuilt;
  for (const auto& [id, pod] : pods_) rebuilt.Add(pod);
  const auto differs = [](const std::string& what) {
    return core::InternalError("the pod index " + what + " is not what the pods make it");
  };
  if (rebuilt.on_node_ != on_node_) return differs("by node");
  if (rebuilt.leaving_ != leaving_) return differs("of leaving pods");
  if (rebuilt.by_owner_ != by_owner_) return differs("by owner");
  if (rebuilt.by_project_ != by_project_) return differs("by project");
  if (rebuilt.pending_ != pending_) return differs("of pending pods");
  for (const auto& [owner, counts] : counts_) {
    const Counts expected = rebuilt.CountsOf(owner);
    if (expected.live != counts.live || expected.pending != counts.pending) {
      return differs("of counts (owner " + owner + ")");
    }
  }
  for (const auto& [owner, counts] : rebuilt.counts_) {
    const Counts kept = CountsOf(owner);
    if (kept.live != counts.live || kept.pending != counts.pending) {
      return differs("of counts (owner " + owner + ")");
    }
  }
  return core::Status::Ok();
}

}  // namespace suanli::server
