// PodRegistry: every pod, and every index of them, behind one upsert.
//
// The control plane reads pods by id, by node, by owner, by project, and as the queue of those
// waiting for a GPU; quotas count each owner's live and pending pods. Each index is a function of
// the pod's fields (Keys), so none is kept by hand: after any write to a pod, Reindex(id) moves its
// entries to where the pod now belongs. The control plane calls it from Change::Dirty and again at
// Commit, so a pod written is a pod both stored and indexed; a write without Dirty would be
// neither, and CheckIndexes (the tests') finds it.
//
// Thread-compatible: the control plane's mutex is held around every call (control_plane.h says
// why there is one lock). No I/O.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <unordered_map>

#include "core/domain.h"
#include "core/status.h"

namespace suanli::server {

// A pod asked to terminate whose volume is still on the node it last ran on: that node's agent is
// told to delete the volume, and reports the pod terminated.
inline bool IsLeaving(const core::Pod& pod) {
  return pod.desired == core::DesiredState::kTerminated &&
         pod.state != core::PodState::kTerminated && pod.node_id.empty() &&
         !pod.last_node_id.empty() && pod.volume_gb > 0;
}

class PodRegistry {
 public:
  using Ids = std::set<std::string>;
  using Map = std::map<std::string, core::Pod>;

  // What the quotas count of one owner's pods, kept as pods change so a create need not walk the
  // owner's pods: with thousands of them, that walk was most of a create's time.
  struct Counts {
    int live = 0;     // not terminated
    int pending = 0;  // waiting for a GPU
  };

  // --- The pods, by id (pages walk them in this order) ---
  Map::const_iterator begin() const { return pods_.begin(); }
  Map::const_iterator end() const { return pods_.end(); }
  Map::const_iterator find(const std::string& id) const { return pods_.find(id); }
  Map::const_iterator upper_bound(const std::string& id) const { return pods_.upper_bound(id); }
  // Writable: the caller reindexes after writing (Change::Dirty does).
  Map::iterator find(const std::string& id) { return pods_.find(id); }
  Map::iterator end() { return pods_.end(); }
  const core::Pod& at(const std::string& id) const { return pods_.at(id); }
  core::Pod& at(const std::string& id) { return pods_.at(id); }
  bool contains(const std::string& id) const { return pods_.contains(id); }
  size_t size() const { return pods_.size(); }

  // Adds a pod whose id is not taken yet, indexed; returns it as stored.
  core::Pod& Add(core::Pod pod);
  // The one upsert: moves `id`'s index entries to where the pod belongs now.
  void Reindex(const std::string& id);
  // Bumps `id`'s revision: it was written to the store (Change::Commit).
  void NoteStored(const std::string& id) { revisions_[id] = ++last_revision_; }
  // Each pod's revision, bumped when it is stored, so a list can say what changed since.
  uint64_t Revision(const std::string& id) const;

  // --- Indexes: each an empty set where nothing matches ---
  const Ids& OnNode(const std::string& node_id) const { return In(on_node_, node_id); }
  // Pods bound to a node, by node.
  const std::map<std::string, Ids>& ByNode() const { return on_node_; }
  // Unbound pods whose volume their last node still holds (IsLeaving), by that node.
  const Ids& LeavingNode(const std::string& node_id) const { return In(leaving_, node_id); }
  const Ids& OfOwner(const std::string& user_id) const { return In(by_owner_, user_id); }
  const Ids& InProject(const std::string& project_id) const { return In(by_project_, project_id); }
  // Unbound pending pods: the scheduler's queue.
  const Ids& Pending() const { return pending_; }
  // Those that joined the queue since ClearNewlyPending: a scheduling round with no new capacity
  // looks at them alone.
  const Ids& NewlyPending() const { return newly_pending_; }
  void ClearNewlyPending() { newly_pending_.clear(); }
  Counts CountsOf(const std::string& owner_id) const;

  // Whether every index is what the pods' fields make it: for tests; a description of the first
  // difference else. Walks everything.
  core::Status CheckIndexes() const;

 private:
  // Where one pod belongs in each index.
  struct Keys {
    std::string owner;
    std::string project;  // "" for none
    std::string node;     // "" for unbound
    std::string leaving;  // the node whose volume it waits on; "" for none
    bool queued = false;  // unbound and pending
    bool live = false;
    bool pending = false;
  };
  static Keys KeysOf(const core::Pod& pod);
  static bool IndexedAsIs(const Keys& keys, const core::Pod& pod);
  static const Ids& In(const std::map<std::string, Ids>& index, const std::string& key);
  // Moves `id` from `from` to `to` in `index`; "" is no entry.
  static void Move(std::map<std::string, Ids>& index, const std::string& id,
                   const std::string& from, const std::string& to);
  void Count(const Keys& keys, int sign);

  Map pods_;
  std::unordered_map<std::string, Keys> keys_;  // where each pod is indexed now
  std::map<std::string, Ids> on_node_;
  std::map<std::string, Ids> leaving_;
  std::map<std::string, Ids> by_owner_;
  std::map<std::string, Ids> by_project_;
  Ids pending_;
  Ids newly_pending_;
  std::unordered_map<std::string, Counts> counts_;
  std::unordered_map<std::string, uint64_t> revisions_;
  uint64_t last_revision_ = 0;
};

}  // namespace suanli::server
