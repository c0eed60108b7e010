// The control plane's event stream and audit log: reading them, the events that are not a pod's
// state change (those come with every transition: Change::Append), a low balance, retention.
#include <chrono>
#include <future>

#include "billing/meter.h"
#include "billing/spend.h"
#include "server/control_plane.h"
#include "server/control_plane_internal.h"
#include "server/events.h"
#include "server/secrets.h"
#include "server/webhooks.h"
#include "wire/views.h"

namespace suanli::server {

namespace {

// How often old events and audit entries are deleted.
constexpr core::Duration kExpiryEvery = std::chrono::hours(1);
constexpr size_t kMaxWebhooksPerUser = 10;
constexpr size_t kWebhookLogLength = 20;
constexpr size_t kMaxWebhookKinds = 32;

}  // namespace

void ControlPlane::LoadEvents(const store::Snapshot& snapshot,
                              std::vector<core::EventWebhook> webhooks) {
  for (core::EventWebhook& hook : webhooks) webhooks_by_id_[hook.id] = std::move(hook);
  // This month's charges so far, for the budgets. Read once, at start; then counted as written.
  if (Result<core::TimePoint> month_start =
          core::ParseTime(billing::MonthOf(Now()) + "-01T00:00:00Z");
      month_start.ok()) {
    store::HistoryQuery query;
    query.from = *month_start;
    if (Result<std::vector<core::LedgerEntry>> charges = store_.Ledger(query); charges.ok()) {
      for (const core::LedgerEntry& entry : *charges) NoteCharge(entry);
    }
  }
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
  if (!caller.is_admin()) {
    query.user_id = caller.user_id;
    // A project's pod's events are its payer's (the project's owner): whoever may see the pod
    // reads them too, asked for by the pod (why it stopped is a member's question as well).
    core::MutexLock lock(mutex_);
    if (const auto pod = pods_.find(query.object_id);
        pod != pods_.end() && !pod->second.project_id.empty() &&
        access_.Allowed(caller, pod->second.owner_id, pod->second.project_id, Access::kRead)) {
      query.user_id = pod->second.owner_id;
    }
  }
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
  AutoTerminate(change, now);
  CheckBudgets(change, now);
  if (!last_expiry_ || now - *last_expiry_ >= kExpiryEvery) {
    last_expiry_ = now;
    change.Expire(now - options_.event_retention, now - options_.audit_retention);
  }
  return change.Commit();
}

// --- Event webhooks ------------------------------------------------------------------------------

Result<Written<EventWebhookInfo>> ControlPlane::CreateEventWebhook(const Principal& caller,
                                                                   std::string url,
                                                                   std::vector<std::string> kinds) {
  SUANLI_RETURN_IF_ERROR(PersonOnly(caller));
  if (Status valid = CheckWebhookUrl(url); !valid.ok()) return valid.WithContext("url");
  if (kinds.size() > kMaxWebhookKinds) {
    return core::InvalidArgumentError("kinds: at most " + std::to_string(kMaxWebhookKinds));
  }
  for (const std::string& kind : kinds) {
    if (kind.empty() || kind.size() > 64) {
      return core::InvalidArgumentError("kinds: '" + kind +
                                        "' is not an event kind (pod.state, pod.idle_stop, ...)");
    }
  }
  Locked locked(*this);
  const size_t owned =
      std::count_if(webhooks_by_id_.begin(), webhooks_by_id_.end(),
                    [&](const auto& entry) { return entry.second.owner_id == caller.user_id; });
  if (owned >= kMaxWebhooksPerUser) {
    return core::ResourceExhaustedError("you have " + std::to_string(owned) +
                                        " webhooks, the most allowed; delete one first");
  }
  core::EventWebhook hook;
  hook.id = NewId("whk");
  hook.owner_id = caller.user_id;
  hook.url = std::move(url);
  hook.secret = HexEncode(entropy_.Bytes(32));
  hook.kinds = std::move(kinds);
  hook.delivered_seq = last_event_seq_;  // from now on
  hook.created_at = Now();
  webhooks_by_id_[hook.id] = hook;
  Change change(*this);
  change.Dirty(Collection::kWebhooks, hook.id);
  return Written<EventWebhookInfo>{{std::move(hook), {}}, change.Commit()};
}

Result<Written<std::vector<EventWebhookInfo>>> ControlPlane::ListEventWebhooks(
    const Principal& caller) const {
  SUANLI_RETURN_IF_ERROR(PersonOnly(caller));
  core::MutexLock lock(mutex_);
  std::vector<EventWebhookInfo> out;
  for (const auto& [id, hook] : webhooks_by_id_) {
    if (hook.owner_id != caller.user_id && !caller.is_admin()) continue;
    const auto log = webhook_log_.find(id);
    out.push_back({hook, log == webhook_log_.end() ? std::vector<WebhookAttempt>() : log->second});
  }
  return Written<std::vector<EventWebhookInfo>>{std::move(out), queue_.submitted()};
}

Result<Written<EventWebhookInfo>> ControlPlane::DeleteEventWebhook(const Principal& caller,
                                                                   std::string_view id) {
  SUANLI_RETURN_IF_ERROR(PersonOnly(caller));
  Locked locked(*this);
  const auto it = webhooks_by_id_.find(std::string(id));
  if (it == webhooks_by_id_.end() ||
      (it->second.owner_id != caller.user_id && !caller.is_admin())) {
    return core::NotFoundError("you have no webhook " + std::string(id) + " (suanli webhooks)");
  }
  EventWebhookInfo gone{std::move(it->second), {}};
  webhooks_by_id_.erase(it);
  webhook_log_.erase(gone.hook.id);
  Change change(*this);
  change.Dirty(Collection::kWebhooks, gone.hook.id);
  return Written<EventWebhookInfo>{std::move(gone), change.Commit()};
}

std::vector<core::EventWebhook> ControlPlane::EventWebhooks() const {
  core::MutexLock lock(mutex_);
  std::vector<core::EventWebhook> out;
  for (const auto& entry : webhooks_by_id_) out.push_back(entry.second);
  return out;
}

Result<std::vector<core::Event>> ControlPlane::EventsOwed(const core::EventWebhook& hook,
                                                          size_t limit) const {
  store::EventQuery query;
  query.user_id = hook.owner_id;
  query.after = hook.delivered_seq;
  query.limit = limit;
  return store_.Events(query);
}

void ControlPlane::NoteWebhookAttempt(std::string_view id, WebhookAttempt attempt) {
  core::MutexLock lock(mutex_);
  if (!webhooks_by_id_.contains(std::string(id))) return;
  std::vector<WebhookAttempt>& log = webhook_log_[std::string(id)];
  log.push_back(std::move(attempt));
  if (log.size() > kWebhookLogLength) log.erase(log.begin());
}

void ControlPlane::WebhookDelivered(std::string_view id, int64_t through_seq) {
  uint64_t sequence = 0;
  {
    Locked locked(*this);
    const auto it = webhooks_by_id_.find(std::string(id));
    if (it == webhooks_by_id_.end() || through_seq <= it->second.delivered_seq) return;
    it->second.delivered_seq = through_seq;
    Change change(*this);
    change.Dirty(Collection::kWebhooks, it->first);
    sequence = change.Commit();
  }
  // A store that fails latches its error (the server stops taking writes); the cursor then stays
  // where it was on disk, and a restart sends the event again: at least once still holds.
  std::promise<Status> durable;
  queue_.AfterDurable(sequence, [&durable](const Status& status) { durable.set_value(status); });
  (void)durable.get_future().get();
}

// --- Budgets
// ---------------------------------------------------------------------------------------

Result<Written<core::User>> ControlPlane::SetBudget(const Principal& caller, Money monthly,
                                                    core::BudgetAction action) {
  SUANLI_RETURN_IF_ERROR(PersonOnly(caller));
  if (monthly.micros() < 0) {
    return core::InvalidArgumentError("monthly budget: give a positive amount, or 0 for none");
  }
  Locked locked(*this);
  core::User& user = users_.at(caller.user_id);
  if (monthly != user.monthly_budget || action != user.budget_action) {
    // A new budget starts over this month: warned at its 80 %, acted on at its 100 %, and creates
    // refused for the old one are allowed again.
    user.budget_warned_month.clear();
    user.budget_reached_month.clear();
  }
  user.monthly_budget = monthly;
  user.budget_action = action;
  Change change(*this);
  change.Dirty(Collection::kUsers, user.id);
  return Written<core::User>{Shown(user), change.Commit()};
}

ControlPlane::Budget ControlPlane::BudgetOf(core::User& user) {
  return Budget{user.id,
                "you have",
                "your",
                "your",
                "raise it (suanli users set-budget AMOUNT)",
                user.monthly_budget,
                user.budget_action,
                &user.budget_warned_month,
                &user.budget_reached_month,
                user.id};
}

ControlPlane::Budget ControlPlane::BudgetOf(core::Project& project) {
  return Budget{
      project.id,
      "project " + project.name + " has",
      "project " + project.name + "'s",
      "its",
      "its owner can raise it (suanli projects set-budget " + project.name + " --monthly AMOUNT)",
      project.monthly_budget,
      project.budget_action,
      &project.budget_warned_month,
      &project.budget_reached_month,
      project.owner_id};
}

Status ControlPlane::CheckBudget(const Budget& budget, bool interruptible,
                                 core::TimePoint now) const {
  if (budget.monthly.micros() <= 0 || *budget.reached_month != billing::MonthOf(now)) {
    return Status::Ok();
  }
  const core::BudgetAction action = budget.action;
  if (action == core::BudgetAction::kNotify ||
      (action == core::BudgetAction::kStopInterruptible && !interruptible)) {
    return Status::Ok();
  }
  // What the budget's action stopped must not start again the same month by a create or start.
  return core::FailedPreconditionError(
      budget.whose + " monthly budget of " + Dollars(budget.monthly) + " is reached for " +
      *budget.reached_month + " and its action (" + std::string(wire::BudgetActionName(action)) +
      ") stops " +
      (action == core::BudgetAction::kStopAll ? "all " + budget.its + " pods"
                                              : "interruptible pods") +
      "; " + budget.raise + " or wait for next month");
}

Status ControlPlane::CheckPayerBudgets(const core::Pod& pod, Money rate, core::TimePoint now) {
  SUANLI_RETURN_IF_ERROR(CheckBudget(BudgetOf(users_.at(pod.owner_id)), pod.interruptible, now));
  core::Project* project = access_.Find(pod.project_id);
  if (project == nullptr) return Status::Ok();
  SUANLI_RETURN_IF_ERROR(CheckBudget(BudgetOf(*project), pod.interruptible, now));
  const Money cap = project->spend_cap_per_hour;
  if (cap.micros() <= 0) return Status::Ok();
  Money running;
  for (const std::string& id : pods_.InProject(pod.project_id)) {
    const core::Pod& other = pods_.at(id);
    if (id != pod.id && other.desired == core::DesiredState::kRunning) {
      running = running + PodGpuRate(other);
    }
  }
  if (running + rate <= cap) return Status::Ok();
  return core::ResourceExhaustedError(
      "project " + project->name + "'s pods would cost " + Dollars(running + rate) + "/h (" +
      Dollars(running) + "/h running, this one " + Dollars(rate) + "/h), over its cap of " +
      Dollars(cap) + "/h; stop one of its pods, or its owner can raise " +
      "the cap (suanli projects set-budget " + project->name + " --cap DOLLARS)");
}

void ControlPlane::NoteCharge(const core::LedgerEntry& entry) {
  month_spend_.Note(entry.user_id, entry);
  // A project's pod's charges count in its project's month too (a pod keeps its project).
  if (const auto pod = pods_.find(entry.pod_id);
      pod != pods_.end() && !pod->second.project_id.empty()) {
    month_spend_.Note(pod->second.project_id, entry);
  }
}

void ControlPlane::CheckBudgets(Change& change, core::TimePoint now) {
  // Not structured bindings: clang 14 (clang-tidy's, the TSan build's) cannot capture one.
  for (auto& entry : users_) {
    if (entry.second.monthly_budget.micros() <= 0) continue;
    CheckBudget(change, BudgetOf(entry.second), pods_.OfOwner(entry.first), now);
  }
  for (auto& entry : access_.mutable_projects()) {
    if (entry.second.monthly_budget.micros() <= 0) continue;
    CheckBudget(change, BudgetOf(entry.second), pods_.InProject(entry.first), now);
  }
}

void ControlPlane::CheckBudget(Change& change, const Budget& budget,
                               const std::set<std::string>& pod_ids, core::TimePoint now) {
  const std::string month = billing::MonthOf(now);
  if (budget.monthly.micros() <= 0 || *budget.reached_month == month) return;
  // Charged this month, and what has accrued since each running pod's last slice: exact to the
  // micro-dollar at this tick.
  Money spent = month_spend_.SpentIn(budget.id, month);
  // Those of its pods that accrue charges now: its payer's billable pods (a few), not all of
  // `pod_ids` (every pod it ever had), walked at every tick.
  if (const auto billable = spend_.billable_by_owner().find(budget.told_user_id);
      billable != spend_.billable_by_owner().end()) {
    for (const std::string& id : billable->second) {
      if (!pod_ids.contains(id)) continue;
      const core::Pod& pod = pods_.at(id);
      spent = spent + billing::Unbilled(pod, MeteredTo(pod, nodes_, now));
    }
  }
  const int64_t limit = budget.monthly.micros();
  core::User& told = users_.at(budget.told_user_id);
  auto tell = [&](std::string kind, std::string message) REQUIRES(mutex_) {
    core::Event event;
    event.kind = std::move(kind);
    event.object_id = budget.id;
    event.user_id = told.id;
    event.message = std::move(message);
    event.detail = "{\"spent_micros\":" + std::to_string(spent.micros()) +
                   ",\"monthly_budget_micros\":" + std::to_string(limit) + ",\"month\":\"" + month +
                   "\",\"action\":\"" + std::string(wire::BudgetActionName(budget.action)) + "\"}";
    Notify(change, told, event.message);  // which also writes a user's flags set below
    // A project's are its own.
    if (access_.Find(budget.id) != nullptr) change.Dirty(Collection::kProjects, budget.id);
    change.Emit(std::move(event));
  };
  const billing::BudgetStep step = billing::StepBudget(budget.monthly, spent, month,
                                                       *budget.warned_month, *budget.reached_month);
  if (step.warn) {
    *budget.warned_month = month;
    tell("budget.warning", budget.subject + " spent " + Dollars(spent) + " of " + budget.its +
                               " monthly budget of " + Dollars(budget.monthly) +
                               " (80 % or more) in " + month);
  }
  if (!step.reach) return;
  *budget.reached_month = month;
  const core::BudgetAction action = budget.action;
  tell("budget.reached",
       budget.subject + " spent " + Dollars(spent) + ", " + budget.its + " monthly budget of " +
           Dollars(budget.monthly) + ", in " + month +
           (action == core::BudgetAction::kNotify ? "; nothing is stopped (notify only)"
            : action == core::BudgetAction::kStopAll
                ? "; all " + budget.its + " pods are stopped (volumes kept)"
                : "; " + budget.its + " interruptible pods are stopped (volumes kept)"));
  if (action == core::BudgetAction::kNotify) return;
  const std::string reason =
      "stopped: " + budget.whose + " monthly budget of " + Dollars(budget.monthly) + " is reached";
  for (const std::string& id : pod_ids) {
    core::Pod& pod = pods_.at(id);
    if (pod.desired != core::DesiredState::kRunning) continue;
    if (action == core::BudgetAction::kStopInterruptible && !pod.interruptible) continue;
    SetDesired(change, pod, core::DesiredState::kStopped, reason);
    change.Emit(PodEvent(pod, "pod.budget_stop", reason));
  }
}

}  // namespace suanli::server
