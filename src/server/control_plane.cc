// The control plane's frame: opening and loading, prices and money, the tick, billing views.
// Users and credentials are in control_plane_accounts.cc, pods and scheduling in
// control_plane_pods.cc, nodes and the agents' side in control_plane_nodes.cc.
#include "server/control_plane.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <future>

#include "billing/meter.h"
#include "billing/spend.h"
#include "server/control_plane_internal.h"
#include "server/documents.h"
#include "server/endpoint_documents.h"
#include "server/project_documents.h"
#include "server/secrets.h"
#include "server/templates.h"
#include "server/volume_documents.h"

namespace suanli::server {

ControlPlane::ControlPlane(store::Store& store, store::CommitQueue& queue, catalog::Catalog catalog,
                           core::Clock& clock, Entropy& entropy, ControlPlaneOptions options)
    : store_(store),
      queue_(queue),
      catalog_(std::move(catalog)),
      clock_(clock),
      entropy_(entropy),
      options_(options),
      credentials_(entropy) {
  move_bytes_per_second_ = static_cast<double>(std::max<int64_t>(options.move_bytes_per_second, 1));
}

Result<std::unique_ptr<ControlPlane>> ControlPlane::Open(
    store::Store& store, store::CommitQueue& queue, catalog::Catalog catalog, core::Clock& clock,
    Entropy& entropy, ControlPlaneOptions options, std::string* new_admin_token) {
  std::unique_ptr<ControlPlane> plane(
      new ControlPlane(store, queue, std::move(catalog), clock, entropy, options));
  SUANLI_RETURN_IF_ERROR(plane->Load(new_admin_token));
  return plane;
}

core::TimePoint ControlPlane::Now() const { return core::TruncateToMillis(clock_.Now()); }

std::optional<std::string> ControlPlane::Serialize(Collection collection,
                                                   const std::string& id) const {
  auto find = [&](const auto& map) -> std::optional<std::string> {
    const auto it = map.find(id);
    if (it == map.end()) return std::nullopt;
    return DocumentText(it->second);
  };
  switch (collection) {
    case Collection::kUsers:
      return find(users_);
    case Collection::kApiTokens:
      return find(credentials_.api_tokens());
    case Collection::kSshKeys:
      return find(ssh_keys_);
    case Collection::kTemplates:
      return find(templates_);
    case Collection::kPods:
      return find(pods_);
    case Collection::kNodes:
      return find(nodes_);
    case Collection::kJoinTokens:
      return find(credentials_.join_tokens());
    case Collection::kSettings:
      return PricesDocumentText(price_overrides_);
    case Collection::kEndpoints:
      return find(serverless_.endpoints());
    case Collection::kJobs:
      return find(serverless_.jobs());
    case Collection::kWebhooks:
      return find(webhooks_by_id_);
    case Collection::kVolumes:
      return find(volumes_);
    case Collection::kSnapshots:
      return find(snapshots_);
    case Collection::kProjects:
      return find(access_.projects());
  }
  return std::nullopt;
}

Status ControlPlane::Load(std::string* new_admin_token) {
  Result<store::Snapshot> snapshot = store_.Load();
  if (!snapshot.ok()) return snapshot.status();
  StoredEntities stored = DecodeDocuments(snapshot->documents);
  const core::TimePoint now = Now();
  // Open runs Load before the plane is shared with any other thread; the lock is held anyway so
  // the state is written as everywhere else (and for the admin's Change).
  Locked locked(*this);
  for (const StoredEntities::Unreadable& record : stored.unreadable) {
    unreadable_.push_back(Describe(record) + ": " + record.why);
  }
  for (core::User& user : stored.users) users_[user.id] = std::move(user);
  for (core::ApiToken& token : stored.tokens) credentials_.AddApiToken(std::move(token));
  for (core::SshKey& key : stored.ssh_keys) ssh_keys_[key.id] = std::move(key);
  for (core::Template& spec : stored.templates) templates_[spec.id] = std::move(spec);
  for (core::Pod& pod : stored.pods) pods_.Add(std::move(pod));
  for (core::Node& node : stored.nodes) {
    node.last_heartbeat = now;  // a restarted server gives every agent time to call in
    credentials_.AddNode(node.id, node.token_hash);
    nodes_[node.id] = std::move(node);
  }
  for (core::JoinToken& token : stored.join_tokens) credentials_.AddJoinToken(std::move(token));
  price_overrides_ = std::move(stored.gpu_prices);
  LoadEvents(*snapshot, std::move(stored.webhooks));
  LoadVolumes(std::move(stored.volumes));
  LoadSnapshots(std::move(stored.snapshots));
  for (core::Project& project : stored.projects) access_.Put(std::move(project));
  for (const auto& [id, pod] : pods_) {
    Rerate(pod);
    last_pod_sequence_ = std::max(last_pod_sequence_, pod.sequence);
  }
  LoadEndpoints(std::move(stored.endpoints), std::move(stored.jobs));
  SUANLI_RETURN_IF_ERROR(AddBuiltInTemplates());

  const bool has_admin = std::any_of(users_.begin(), users_.end(), [](const auto& entry) {
    return entry.second.role == core::Role::kAdmin;
  });
  if (!has_admin) {
    Change change(*this);
    core::User admin;
    admin.id = NewId("usr");
    admin.name = "admin";
    admin.role = core::Role::kAdmin;
    admin.created_at = now;
    users_[admin.id] = admin;
    change.Dirty(Collection::kUsers, admin.id);
    *new_admin_token = IssueToken(change, admin.id, "bootstrap");
    const uint64_t sequence = change.Commit();
    std::promise<Status> durable;
    queue_.AfterDurable(sequence, [&durable](const Status& status) { durable.set_value(status); });
    SUANLI_RETURN_IF_ERROR(durable.get_future().get());
  }
  return Status::Ok();
}

Status ControlPlane::AddBuiltInTemplates() {
  Result<std::vector<core::Template>> built_in = LoadBuiltInTemplates();
  if (!built_in.ok()) return built_in.status();
  for (core::Template& spec : *built_in) templates_[spec.id] = std::move(spec);
  return Status::Ok();
}

std::string ControlPlane::NewId(std::string_view prefix) {
  // Ordered by time: the millisecond (48 bits), then 48 random bits (two ids made in the same
  // millisecond differ but for a chance of 2^-48). A row keyed by a new id (a pod, its
  // transitions, its events) then goes at the end of each index on that id, where a random id
  // put it anywhere and dirtied one index page per row per commit: 26 KB written per pod created
  // (docs/benchmarks.md). Lists in id order are then in creation order too.
  const int64_t millis =
      std::chrono::duration_cast<std::chrono::milliseconds>(Now().time_since_epoch()).count();
  return fmt::format("{}_{:012x}{}", prefix, static_cast<uint64_t>(std::max<int64_t>(millis, 0)),
                     HexEncode(entropy_.Bytes(6)));
}

std::string ControlPlane::IssueToken(Change& change, const std::string& user_id, std::string name) {
  auto [token, secret] = credentials_.IssueApiToken(NewId("tok"), user_id, std::move(name), Now());
  change.Dirty(Collection::kApiTokens, token.id);
  return secret;
}

// --- Prices and money ----------------------------------------------------------------------------

Money ControlPlane::GpuPrice(std::string_view gpu_type) const {
  core::MutexLock lock(mutex_);
  return PriceLocked(gpu_type);
}

Money ControlPlane::PriceLocked(std::string_view gpu_type) const {
  // Cached: matching a name in the catalog tokenizes it, and prices are read on every create.
  const auto cached = price_cache_.find(std::string(gpu_type));
  if (cached != price_cache_.end()) return cached->second;
  Money price;
  const auto it = price_overrides_.find(std::string(gpu_type));
  if (it != price_overrides_.end()) {
    price = it->second;
  } else if (Result<const catalog::GpuType*> gpu = catalog_.FindExact(gpu_type); gpu.ok()) {
    price = (*gpu)->price.rent_per_hour;
  }
  price_cache_.emplace(std::string(gpu_type), price);
  return price;
}

Money ControlPlane::PodGpuRate(const core::Pod& pod) const {
  return billing::GpuRate(PriceLocked(pod.gpu_type), pod.gpu_count, pod.gpu_milli);
}

void ControlPlane::Rerate(const core::Pod& pod) { spend_.Update(pod, PriceLocked(pod.gpu_type)); }

Money ControlPlane::SpendRate(std::string_view user_id) const {
  core::MutexLock lock(mutex_);
  return spend_.Rate(std::string(user_id));
}

Money ControlPlane::LiveBalance(const core::User& user, core::TimePoint now) const {
  Money balance = user.balance - UnbilledVolumes(user.id, now);
  const auto billable = spend_.billable_by_owner().find(user.id);
  if (billable == spend_.billable_by_owner().end()) return balance;
  for (const std::string& id : billable->second) {
    const core::Pod& pod = pods_.at(id);
    balance = balance - billing::Unbilled(pod, MeteredTo(pod, nodes_, now));
  }
  return balance;
}

Status ControlPlane::CheckCanAfford(const core::User& user, Money rate_after,
                                    core::TimePoint now) const {
  return billing::CheckCanAfford(LiveBalance(user, now), rate_after, user.spend_cap_per_hour,
                                 options_.minimum_runway);
}

void ControlPlane::ChargePod(Change& change, core::Pod& pod, core::TimePoint to) {
  core::User& user = users_.at(pod.owner_id);
  billing::PodCharge charge = billing::ChargePod(pod, to, Now());
  for (core::LedgerEntry& entry : charge.entries) change.Append(std::move(entry));
  user.balance = user.balance - charge.total;
  pod.cost = pod.cost + charge.total;
  charged_micros_ += charge.total.micros();
  pod.gpu_billed_to = charge.gpu_billed_to;
  pod.storage_billed_to = charge.storage_billed_to;
  change.Dirty(Collection::kUsers, user.id);
  change.Dirty(Collection::kPods, pod.id);
}

void ControlPlane::RefundGpuPast(Change& change, core::Pod& pod, core::TimePoint end) {
  // The meter charges a running pod up to now every minute, its node silent or not (docs/api.md:
  // an unreachable node's pods keep running and billing); when the agent reports later that the
  // container stopped before that, the run is billed to its real end (billing::RefundGpuPast).
  if (!pod.running_since || end >= pod.gpu_billed_to) return;
  core::User& user = users_.at(pod.owner_id);
  if (std::optional<core::LedgerEntry> refund = billing::RefundGpuPast(pod, end, Now())) {
    user.balance = user.balance + refund->amount;
    pod.cost = pod.cost - refund->amount;
    change.Append(std::move(*refund));
  }
  pod.gpu_billed_to = end;
  change.Dirty(Collection::kUsers, user.id);
  change.Dirty(Collection::kPods, pod.id);
}

void ControlPlane::Notify(Change& change, core::User& user, std::string notice) {
  user.notices.push_back(FormatTime(Now()) + " " + std::move(notice));
  if (user.notices.size() > kMaxNotices) user.notices.erase(user.notices.begin());
  change.Dirty(Collection::kUsers, user.id);
}

// --- Tick: scheduling, health, metering ----------------------------------------------------------

void ControlPlane::EnforceLimits(Change& change, core::TimePoint now) {
  // Only users who are being charged can run out; only users with a cap can exceed it.
  std::vector<std::pair<std::string, std::string>> stops;  // user, reason
  for (const auto& [user_id, pod_ids] : spend_.billable_by_owner()) {
    const core::User& user = users_.at(user_id);
    const Money balance = LiveBalance(user, now);
    if (balance.micros() <= 0) {
      stops.emplace_back(user_id, "stopped: your balance reached " + Dollars(balance) +
                                      "; add credits and start it again (its volume is kept)");
    }
  }
  for (const auto& [user_id, user] : users_) {
    if (user.spend_cap_per_hour.micros() > 0 &&
        spend_.WantedRate(user_id) > user.spend_cap_per_hour) {
      stops.emplace_back(user_id, "stopped: your pods would spend more than your cap of " +
                                      Dollars(user.spend_cap_per_hour) + "/h");
    }
  }
  for (const auto& [user_id, reason] : stops) {
    core::User& user = users_.at(user_id);
    const bool over_cap = LiveBalance(user, now).micros() > 0;
    std::vector<core::Pod*> active;
    for (const std::string& id : pods_.OfOwner(user_id)) {
      core::Pod& pod = pods_.at(id);
      if (pod.desired == core::DesiredState::kRunning) active.push_back(&pod);
    }
    // Over the cap: the newest first, only as many as the cap needs. Out of money: all of them.
    std::sort(active.begin(), active.end(),
              [](const core::Pod* a, const core::Pod* b) { return a->sequence > b->sequence; });
    for (core::Pod* pod : active) {
      if (over_cap && spend_.WantedRate(user_id) <= user.spend_cap_per_hour) break;
      SetDesired(change, *pod, core::DesiredState::kStopped, reason);
      NotifyPod(change, *pod, over_cap ? "pod.spend_cap_stop" : "pod.balance_stop", reason);
    }
  }
}

uint64_t ControlPlane::Tick() { return std::max({TickPods(), TickEndpoints(), TickEvents()}); }

uint64_t ControlPlane::TickPods() {
  Locked locked(*this);
  const core::TimePoint now = Now();
  Change change(*this);
  for (auto& [id, node] : nodes_) {
    if (node.state == core::NodeState::kReady &&
        now - node.last_heartbeat > options_.unreachable_after) {
      MarkUnreachable(change, node);
    }
  }
  for (const auto& [owner, pod_ids] : spend_.billable_by_owner()) {
    for (const std::string& id : pod_ids) {
      core::Pod& pod = pods_.at(id);
      // Asked to stop or end on a node that does not answer: billed to the node's last heartbeat,
      // the last sign it ran, and no further. Nobody can stop it meanwhile, and if the node comes
      // back, its agent's report of the stop bills the rest exactly (SetState).
      if (const core::TimePoint to = MeteredTo(pod, nodes_, now); to < now) {
        RefundGpuPast(change, pod, to);
        continue;
      }
      const bool running_due =
          pod.running_since && now - pod.gpu_billed_to >= options_.charge_every;
      const bool storage_due = pod.volume_gb > 0 && pod.state != PodState::kTerminated &&
                               now - pod.storage_billed_to >= options_.charge_every;
      if (running_due || storage_due) ChargePod(change, pod, now);
    }
  }
  TickVolumes(change, now);
  EnforceLimits(change, now);
  // A pod that waited for the node holding its data long enough moves it now (PlaceNearData).
  if (data_wait_until_ && now >= *data_wait_until_) capacity_changed_ = true;
  Schedule(change, now);
  waiters_.Expire(now);  // long polls whose time is up answer with what they have
  return change.Commit();
}

Result<Written<Money>> ControlPlane::SetGpuPrice(const Principal& caller, std::string_view gpu_type,
                                                 Money per_hour) {
  SUANLI_RETURN_IF_ERROR(AdminOnly(caller));
  if (per_hour.micros() <= 0) return core::InvalidArgumentError("a price must be above $0/h");
  Result<catalog::GpuMatch> gpu = catalog_.Find(gpu_type);
  if (!gpu.ok()) return gpu.status();
  Locked locked(*this);
  price_overrides_[gpu->gpu->name] = per_hour;
  price_cache_.clear();
  for (const auto& [id, pod] : pods_) Rerate(pod);
  Change change(*this);
  change.Dirty(Collection::kSettings, std::string(kPricesDocumentId));
  return Written<Money>{per_hour, change.Commit()};
}

std::vector<std::string> ControlPlane::UnreadableRecords() const {
  core::MutexLock lock(mutex_);
  return unreadable_;
}

Gauges ControlPlane::gauges() const {
  core::MutexLock lock(mutex_);
  Gauges gauges;
  for (const auto& entry : pods_)
    ++gauges.pods_by_state[std::string(PodStateName(entry.second.state))];
  for (const sched::Node& view : SchedulerNodes()) {
    if (view.gpu_type.empty()) continue;
    const int free = view.FreeGpus();
    auto& [allocated, available] = gauges.gpus_by_type[view.gpu_type];
    allocated += static_cast<int>(view.gpu_free_milli.size()) - free;
    available += free;
  }
  gauges.pending = static_cast<int>(pods_.Pending().size());
  gauges.unreadable_records = static_cast<int>(unreadable_.size());
  for (const auto& entry : nodes_) {
    if (entry.second.state == core::NodeState::kReady) {
      ++gauges.nodes_ready;
    } else {
      ++gauges.nodes_unreachable;
    }
  }
  gauges.charged_micros = charged_micros_;
  AddEndpointGauges(gauges);
  return gauges;
}

}  // namespace suanli::server
