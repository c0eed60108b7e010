// The control plane's event stream and audit log: reading them, the events that are not a pod's
// state change (those come with every transition: Change::Append), a low balance, retention.
#include <chrono>

#include "billing/meter.h"
#include "server/control_plane.h"
#include "server/control_plane_internal.h"
#include "server/events.h"

namespace suanli::server {

namespace {

// How often old events and audit entries are deleted.
constexpr core::Duration kExpiryEvery = std::chrono::hours(1);

}  // namespace

void ControlPlane::LoadHistorySeqs(const store::Snapshot& snapshot) {
  last_transition_seq_ = snapshot.last_transition_seq;
  last_ledger_seq_ = snapshot.last_ledger_seq;
  last_event_seq_ = snapshot.last_event_seq;
  last_audit_seq_ = snapshot.last_audit_seq;
  started_at_ = Now();
}

void ControlPlane::NotifyPod(Change& change, const core::Pod& pod, std::string_view kind,
                             const std::string& reason) {
  Notify(change, users_.at(pod.owner_id), "pod " + pod.id + " " + reason);
  change.Emit(PodEvent(pod, kind, reason));
}

void ControlPlane::MarkUnreachable(Change& change, core::Node& node) {
  node.state = core::NodeState::kUnreachable;
  change.Dirty(Collection::kNodes, node.id);
  const auto seconds =
      std::chrono::duration_cast<std::chrono::seconds>(options_.unreachable_after).count();
  change.Emit(NodeEvent(node, "node.unreachable",
                        "is unreachable: no heartbeat for " + std::to_string(seconds) +
                            " s; its pods keep running and billing until their agent reports"));
}

Result<std::vector<core::Event>> ControlPlane::Events(const Principal& caller,
                                                      store::EventQuery query) const {
  SUANLI_RETURN_IF_ERROR(PersonOnly(caller));
  if (!caller.is_admin()) query.user_id = caller.user_id;
  return store_.Events(query);
}

uint64_t ControlPlane::RecordAudit(core::AuditEntry entry) {
  Locked locked(*this);
  Change change(*this);
  if (entry.at == core::TimePoint()) entry.at = Now();
  change.Append(std::move(entry));
  return change.Commit();
}

Result<std::vector<core::AuditEntry>> ControlPlane::AuditLog(const Principal& caller,
                                                             const store::AuditQuery& query) const {
  SUANLI_RETURN_IF_ERROR(AdminOnly(caller));
  return store_.Audit(query);
}

uint64_t ControlPlane::TickEvents() {
  Locked locked(*this);
  const core::TimePoint now = Now();
  Change change(*this);
  // A low balance, told once until it lasts again (credits, or fewer pods).
  std::set<std::string> low;
  for (const auto& [user_id, pod_ids] : spend_.billable_by_owner()) {
    const core::User& user = users_.at(user_id);
    const Money rate = spend_.Rate(user_id);
    const Money balance = LiveBalance(user, now);
    const core::Duration runway = billing::Runway(balance, rate);
    if (balance.micros() <= 0 || runway >= options_.low_balance_runway) continue;
    low.insert(user_id);
    if (low_balance_warned_.contains(user_id)) continue;
    const int64_t runway_s = std::chrono::duration_cast<std::chrono::seconds>(runway).count();
    core::Event event = LowBalanceEvent(user, balance, rate, runway_s);
    Notify(change, users_.at(user_id), event.message);
    change.Emit(std::move(event));
  }
  low_balance_warned_ = std::move(low);
  AutoStop(change, now);
  if (!last_expiry_ || now - *last_expiry_ >= kExpiryEvery) {
    last_expiry_ = now;
    change.Expire(now - options_.event_retention, now - options_.audit_retention);
  }
  return change.Commit();
}

}  // namespace suanli::server
