// What the control plane's source files share (control_plane.cc, control_plane_accounts.cc,
// control_plane_pods.cc, control_plane_nodes.cc): the checks every request makes, and the two
// classes through which each change is made: Locked (the lock, and the agents' wake-ups after
// it) and Change (the batch of writes it commits). Included by those files only.
#pragma once

#include <algorithm>
#include <functional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "server/control_plane.h"
#include "server/events.h"

namespace suanli::server {

using core::FormatTime;
using core::IsDown;
using core::Money;
using core::PodState;
using core::Result;
using core::Status;
using store::Collection;

inline constexpr size_t kMaxNotices = 20;
inline constexpr size_t kMaxTokensPerUser = 100;
inline constexpr size_t kMaxKeysPerUser = 50;
inline constexpr int kMaxGpusPerPod = 64;

inline Status AdminOnly(const Principal& caller) {
  if (caller.is_admin()) return Status::Ok();
  return core::PermissionDeniedError("only an admin may do this; ask your operator");
}

inline Status PersonOnly(const Principal& caller) {
  if (caller.node_id.empty()) return Status::Ok();
  return core::PermissionDeniedError("a node's token cannot be used for this");
}

// How far the meter bills `pod` now: to `now`, or, for a pod asked to stop or end whose node does
// not answer, to that node's last heartbeat and no further (docs/api.md, on nodes). The balance,
// the usage and the pod's cost count its unbilled part to the same point.
inline core::TimePoint MeteredTo(const core::Pod& pod,
                                 const std::map<std::string, core::Node>& nodes,
                                 core::TimePoint now) {
  if (pod.desired == core::DesiredState::kRunning || !pod.running_since) return now;
  const auto node = nodes.find(pod.node_id);
  if (node == nodes.end() || node->second.state != core::NodeState::kUnreachable) return now;
  return std::min(now, std::max(node->second.last_heartbeat, *pod.running_since));
}

inline bool IsAsciiAlnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

// Names: 1-64 of [A-Za-z0-9._@+-], starting with a letter or digit. Checked by hand: std::regex
// is slow on this path (every create) and heavy to compile.
inline Status CheckName(std::string_view what, std::string_view name) {
  const bool valid =
      !name.empty() && name.size() <= 64 && IsAsciiAlnum(name.front()) &&
      std::all_of(name.begin(), name.end(), [](char c) {
        return IsAsciiAlnum(c) || std::string_view("._@+-").find(c) != std::string_view::npos;
      });
  if (valid) return Status::Ok();
  return core::InvalidArgumentError(
      std::string(what) + " '" + std::string(name) +
      "' must be 1-64 letters, digits or . _ @ + - (starting with a letter or digit)");
}

inline Status CheckEnv(const std::map<std::string, std::string>& env) {
  for (const auto& entry : env) {
    const std::string& name = entry.first;
    const bool valid =
        !name.empty() && !(name.front() >= '0' && name.front() <= '9') &&
        std::all_of(name.begin(), name.end(), [](char c) { return IsAsciiAlnum(c) || c == '_'; });
    if (!valid) {
      return core::InvalidArgumentError("env: '" + name +
                                        "' is not a variable name (letters, digits, _)");
    }
  }
  return Status::Ok();
}

inline std::string Dollars(Money amount) { return amount.ToString(); }

// The engine volume that holds the data of volume or pod `id` (agent/reconcile.h's VolumeName).
inline std::string EngineVolume(std::string_view id) { return "suanli-" + std::string(id); }

// One request's changes: which documents to rewrite and which records to append, committed as one
// batch. Documents are serialized once, at Commit, from the state in memory then. Made and used
// only with the plane's mutex held (under a Locked); each method that touches the plane asserts it,
// since the analysis cannot tie `plane_.mutex_` to the caller's `mutex_`.
class ControlPlane::Change {
 public:
  explicit Change(ControlPlane& plane) : plane_(plane) {}

  // After every write to a document: it is stored at Commit, and a pod or a job is reindexed now
  // (for the rest of this change) and again at Commit (for writes after this call).
  void Dirty(Collection collection, const std::string& id) {
    plane_.mutex_.AssertHeld();
    dirty_.emplace(collection, id);
    if (collection == Collection::kPods) plane_.pods_.Reindex(id);
    if (collection == Collection::kJobs) plane_.serverless_.Reindex(id);
  }
  // A transition is also a "pod.state" event.
  void Append(core::Transition transition) {
    plane_.mutex_.AssertHeld();
    transition.seq = ++plane_.last_transition_seq_;
    Emit(PodStateEvent(transition));
    batch_.transitions.push_back(std::move(transition));
  }
  // `event` at its time (now if unset), with the next seq.
  void Emit(core::Event event) {
    plane_.mutex_.AssertHeld();
    event.seq = ++plane_.last_event_seq_;
    if (event.at == core::TimePoint()) event.at = plane_.Now();
    batch_.events.push_back(std::move(event));
  }
  void Append(core::AuditEntry entry) {
    plane_.mutex_.AssertHeld();
    entry.seq = ++plane_.last_audit_seq_;
    batch_.audit.push_back(std::move(entry));
  }
  void Expire(core::TimePoint events_before, core::TimePoint audit_before) {
    batch_.expire_events_before = events_before;
    batch_.expire_audit_before = audit_before;
  }
  void Append(core::LedgerEntry entry) {
    plane_.mutex_.AssertHeld();
    entry.seq = ++plane_.last_ledger_seq_;
    plane_.NoteCharge(entry);
    batch_.ledger.push_back(std::move(entry));
  }
  void TouchedNode(const std::string& node_id) { touched_nodes_.insert(node_id); }

  // Submits the batch and returns the sequence after which the change may be acknowledged.
  uint64_t Commit() {
    plane_.mutex_.AssertHeld();
    for (const auto& [collection, id] : dirty_) {
      if (collection == Collection::kPods) {
        plane_.pods_.Reindex(id);
        plane_.pods_.NoteStored(id);
      }
      if (collection == Collection::kJobs) plane_.serverless_.Reindex(id);
      std::optional<std::string> text = plane_.Serialize(collection, id);
      if (text) {
        batch_.puts.push_back({collection, id, std::move(*text)});
      } else {
        batch_.deletes.push_back({collection, id});
      }
    }
    for (const std::string& node_id : touched_nodes_) plane_.waiters_.Wake(node_id);
    if (batch_.empty()) return plane_.queue_.submitted();
    return plane_.queue_.Submit(std::move(batch_), [](const Status&) {});
  }

 private:
  ControlPlane& plane_;
  std::set<std::pair<Collection, std::string>> dirty_;
  std::set<std::string> touched_nodes_;
  store::Batch batch_;
};

// Holds the mutex; on release, runs the agents' wake-ups that the change queued, outside the lock
// (they call back into the control plane). A scoped capability like core::MutexLock, so the
// analysis knows `plane.mutex_` is held from construction to the end of the scope.
class SCOPED_CAPABILITY ControlPlane::Locked {
 public:
  explicit Locked(ControlPlane& plane) ACQUIRE(plane.mutex_) : plane_(plane), lock_(plane.mutex_) {}
  ~Locked() RELEASE() {
    plane_.mutex_.AssertHeld();  // lock_ holds it until the Unlock below
    std::vector<std::function<void()>> wakeups = plane_.waiters_.TakeDue();
    lock_.Unlock();
    for (auto& wakeup : wakeups) wakeup();
  }
  Locked(const Locked&) = delete;
  Locked& operator=(const Locked&) = delete;

 private:
  ControlPlane& plane_;
  core::MutexLock lock_;
};

}  // namespace suanli::server
