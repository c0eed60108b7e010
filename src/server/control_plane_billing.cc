// The control plane's billing views: a user's ledger, and their usage by pod or day with what runs
// now and is not in the ledger yet (so that usage and the balance agree).
#include <algorithm>
#include <chrono>
#include <map>

#include "billing/meter.h"
#include "server/control_plane.h"
#include "server/control_plane_internal.h"

namespace suanli::server {

// --- Billing views -------------------------------------------------------------------------------

Result<std::string> ControlPlane::BillingSubject(const Principal& caller,
                                                 std::string_view user_id) const {
  SUANLI_RETURN_IF_ERROR(PersonOnly(caller));
  const std::string wanted =
      user_id.empty() || user_id == "me" ? caller.user_id : std::string(user_id);
  if (wanted != caller.user_id) SUANLI_RETURN_IF_ERROR(AdminOnly(caller));
  return wanted;
}

Result<std::vector<core::LedgerEntry>> ControlPlane::Ledger(const Principal& caller,
                                                            std::string_view user_id) const {
  Result<std::string> subject = BillingSubject(caller, user_id);
  if (!subject.ok()) return subject.status();
  store::HistoryQuery query;
  query.user_id = *subject;
  return store_.Ledger(query);
}

Result<std::vector<core::Transition>> ControlPlane::Transitions(const Principal& caller,
                                                                std::string_view pod_id) const {
  Result<Written<core::Pod>> pod = GetPod(caller, pod_id);
  if (!pod.ok()) return pod.status();
  store::HistoryQuery query;
  query.pod_id = pod->value.id;  // `pod_id` may be its name
  return store_.Transitions(query);
}

Result<std::vector<UsageRow>> ControlPlane::Usage(const Principal& caller, std::string_view user_id,
                                                  UsageBy by) const {
  Result<std::string> subject = BillingSubject(caller, user_id);
  if (!subject.ok()) return subject.status();
  store::HistoryQuery query;
  query.user_id = *subject;
  Result<std::vector<core::LedgerEntry>> entries = store_.Ledger(query);
  if (!entries.ok()) return entries.status();
  std::map<std::string, UsageRow> rows;
  // Where the ledger just read ends, per pod (or volume) and kind: the unbilled part starts there.
  std::map<std::string, core::TimePoint> gpu_ledger_to, storage_ledger_to;
  const auto row_for = [&](const std::string& id, core::TimePoint from) -> UsageRow& {
    // A slice is at most a minute long; it counts on the day it started.
    const std::string key = by == UsageBy::kPod ? id : FormatTime(from).substr(0, 10);
    UsageRow& row = rows[key];
    row.key = key;
    return row;
  };
  for (const core::LedgerEntry& entry : *entries) {
    if (entry.kind == core::LedgerKind::kCredit) continue;
    UsageRow& row = row_for(entry.pod_id, entry.from);
    const Money cost = Money() - entry.amount;
    if (entry.kind == core::LedgerKind::kGpu) {
      row.gpu = row.gpu + cost;
      row.gpu_seconds +=
          std::chrono::duration_cast<std::chrono::seconds>(entry.to - entry.from).count();
      gpu_ledger_to[entry.pod_id] = std::max(gpu_ledger_to[entry.pod_id], entry.to);
    } else {
      row.storage = row.storage + cost;
      storage_ledger_to[entry.pod_id] = std::max(storage_ledger_to[entry.pod_id], entry.to);
    }
  }
  // The meter's memory may be a commit ahead of the ledger read: the unbilled part starts where
  // that read ends, not at billed_to, so a slice being committed is counted once, not lost.
  const auto unbilled_from = [](const std::map<std::string, core::TimePoint>& ledger_to,
                                const std::string& id, core::TimePoint billed_to) {
    const auto it = ledger_to.find(id);
    return it != ledger_to.end() && it->second < billed_to ? it->second : billed_to;
  };
  core::MutexLock lock(mutex_);
  const core::TimePoint now = Now();
  if (const auto billable = spend_.billable_by_owner().find(*subject);
      billable != spend_.billable_by_owner().end()) {
    for (const std::string& id : billable->second) {
      const core::Pod& pod = pods_.at(id);
      const core::TimePoint to = MeteredTo(pod, nodes_, now);
      // What billing::Unbilled counts, which the balance subtracts, in its two parts.
      const billing::PodAccrual accrued =
          billing::AccruedSince(pod, unbilled_from(gpu_ledger_to, id, pod.gpu_billed_to),
                                unbilled_from(storage_ledger_to, id, pod.storage_billed_to), to);
      if (accrued.gpu_from) {
        UsageRow& row = row_for(id, *accrued.gpu_from);
        row.gpu = row.gpu + accrued.gpu;
        row.unbilled = row.unbilled + accrued.gpu;
        row.gpu_seconds +=
            std::chrono::duration_cast<std::chrono::seconds>(to - *accrued.gpu_from).count();
      }
      if (accrued.storage_from) {
        UsageRow& row = row_for(id, *accrued.storage_from);
        row.storage = row.storage + accrued.storage;
        row.unbilled = row.unbilled + accrued.storage;
      }
    }
  }
  for (const auto& [id, volume] : volumes_) {
    if (volume.owner_id != *subject) continue;
    const core::TimePoint from =
        std::max(unbilled_from(storage_ledger_to, id, volume.storage_billed_to), volume.created_at);
    const Money amount = billing::UnbilledStorage(volume, now, from);
    if (amount.micros() == 0) continue;
    UsageRow& row = row_for(id, from);
    row.storage = row.storage + amount;
    row.unbilled = row.unbilled + amount;
  }
  for (const auto& [id, snapshot] : snapshots_) {
    if (snapshot.owner_id != *subject) continue;
    const core::TimePoint from = unbilled_from(storage_ledger_to, id, snapshot.storage_billed_to);
    const Money amount = billing::UnbilledSnapshot(snapshot, now, from);
    if (amount.micros() == 0) continue;
    UsageRow& row = row_for(id, std::max(from, snapshot.created_at));
    row.storage = row.storage + amount;
    row.unbilled = row.unbilled + amount;
  }
  std::vector<UsageRow> out;
  for (auto& entry : rows) {
    // A volume made this second has run up nothing yet: no row of zeros.
    if (entry.second.gpu.micros() == 0 && entry.second.storage.micros() == 0 &&
        entry.second.gpu_seconds == 0) {
      continue;
    }
    out.push_back(std::move(entry.second));
  }
  return out;
}

}  // namespace suanli::server
