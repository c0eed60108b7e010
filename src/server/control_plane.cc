#include "server/control_plane.h"

#include <algorithm>
#include <bit>
#include <future>
#include <set>

#include "advisor/advisor.h"
#include "billing/meter.h"
#include "core/suggest.h"
#include "server/documents.h"
#include "server/secrets.h"
#include "server/templates.h"

namespace suanli::server {
namespace {

using core::FormatTime;
using core::IsDown;
using core::Money;
using core::PodState;
using core::Result;
using core::Status;
using store::Collection;

constexpr size_t kMaxNotices = 20;
constexpr size_t kMaxTokensPerUser = 100;
constexpr size_t kMaxKeysPerUser = 50;
constexpr int kMaxGpusPerPod = 64;

Status AdminOnly(const Principal& caller) {
  if (caller.is_admin()) return Status::Ok();
  return core::PermissionDeniedError("only an admin may do this; ask your operator");
}

Status PersonOnly(const Principal& caller) {
  if (caller.node_id.empty()) return Status::Ok();
  return core::PermissionDeniedError("a node's token cannot be used for this");
}

bool IsAsciiAlnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

// Names: 1-64 of [A-Za-z0-9._@+-], starting with a letter or digit. Checked by hand: std::regex
// is slow on this path (every create) and heavy to compile.
Status CheckName(std::string_view what, std::string_view name) {
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

Status CheckEnv(const std::map<std::string, std::string>& env) {
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

std::string Dollars(Money amount) { return amount.ToString(); }

}  // namespace

// One request's changes: which documents to rewrite and which records to append, committed as one
// batch. Documents are serialized once, at Commit, from the state in memory then.
class ControlPlane::Change {
 public:
  explicit Change(ControlPlane& plane) : plane_(plane) {}

  void Dirty(Collection collection, const std::string& id) { dirty_.emplace(collection, id); }
  void Append(core::Transition transition) {
    transition.seq = ++plane_.last_transition_seq_;
    batch_.transitions.push_back(std::move(transition));
  }
  void Append(core::LedgerEntry entry) {
    entry.seq = ++plane_.last_ledger_seq_;
    batch_.ledger.push_back(std::move(entry));
  }
  void TouchedNode(const std::string& node_id) { touched_nodes_.insert(node_id); }

  // Submits the batch and returns the sequence after which the change may be acknowledged.
  uint64_t Commit() {
    for (const auto& [collection, id] : dirty_) {
      if (collection == Collection::kPods) plane_.pod_revision_[id] = ++plane_.last_revision_;
      std::optional<std::string> text = plane_.Serialize(collection, id);
      if (text) {
        batch_.puts.push_back({collection, id, std::move(*text)});
      } else {
        batch_.deletes.push_back({collection, id});
      }
    }
    for (const std::string& node_id : touched_nodes_) plane_.QueueWakeups(node_id);
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
// (they call back into the control plane).
class ControlPlane::Locked {
 public:
  explicit Locked(ControlPlane& plane) : plane_(plane), lock_(plane.mutex_) {}
  ~Locked() {
    std::vector<std::function<void()>> wakeups = std::move(plane_.wakeups_);
    plane_.wakeups_.clear();
    lock_.unlock();
    for (auto& wakeup : wakeups) wakeup();
  }
  Locked(const Locked&) = delete;
  Locked& operator=(const Locked&) = delete;

 private:
  ControlPlane& plane_;
  std::unique_lock<std::mutex> lock_;
};

ControlPlane::ControlPlane(store::Store& store, store::CommitQueue& queue, catalog::Catalog catalog,
                           core::Clock& clock, Entropy& entropy, ControlPlaneOptions options)
    : store_(store),
      queue_(queue),
      catalog_(std::move(catalog)),
      clock_(clock),
      entropy_(entropy),
      options_(options) {}

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
      return find(tokens_);
    case Collection::kSshKeys:
      return find(ssh_keys_);
    case Collection::kTemplates:
      return find(templates_);
    case Collection::kPods:
      return find(pods_);
    case Collection::kNodes:
      return find(nodes_);
    case Collection::kJoinTokens:
      return find(join_tokens_);
    case Collection::kSettings:
      return PricesDocumentText(price_overrides_);
  }
  return std::nullopt;
}

Status ControlPlane::Load(std::string* new_admin_token) {
  Result<store::Snapshot> snapshot = store_.Load();
  if (!snapshot.ok()) return snapshot.status();
  Result<StoredEntities> stored = DecodeDocuments(snapshot->documents);
  if (!stored.ok()) return stored.status();
  const core::TimePoint now = Now();
  for (core::User& user : stored->users) users_[user.id] = std::move(user);
  for (core::ApiToken& token : stored->tokens) {
    token_by_hash_[token.secret_hash] = token.id;
    tokens_[token.id] = std::move(token);
  }
  for (core::SshKey& key : stored->ssh_keys) ssh_keys_[key.id] = std::move(key);
  for (core::Template& spec : stored->templates) templates_[spec.id] = std::move(spec);
  for (core::Pod& pod : stored->pods) pods_[pod.id] = std::move(pod);
  for (core::Node& node : stored->nodes) {
    node.last_heartbeat = now;  // a restarted server gives every agent time to call in
    node_by_hash_[node.token_hash] = node.id;
    nodes_[node.id] = std::move(node);
  }
  for (core::JoinToken& token : stored->join_tokens) join_tokens_[token.id] = std::move(token);
  price_overrides_ = std::move(stored->gpu_prices);
  last_transition_seq_ = snapshot->last_transition_seq;
  last_ledger_seq_ = snapshot->last_ledger_seq;
  for (const auto& [id, pod] : pods_) {
    Rerate(pod);
    pods_by_owner_[pod.owner_id].insert(id);
    last_pod_sequence_ = std::max(last_pod_sequence_, pod.sequence);
    if (!pod.node_id.empty()) pods_on_node_[pod.node_id].insert(id);
    if (pod.state == PodState::kPending && pod.node_id.empty()) pending_.insert(id);
  }
  SUANLI_RETURN_IF_ERROR(AddBuiltInTemplates());

  const bool has_admin = std::any_of(users_.begin(), users_.end(), [](const auto& entry) {
    return entry.second.role == core::Role::kAdmin;
  });
  if (!has_admin) {
    Locked locked(*this);
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

void ControlPlane::QueueWakeups(const std::string& node_id) {
  const auto it = waiters_.find(node_id);
  if (it == waiters_.end()) return;
  for (Waiter& waiter : it->second) wakeups_.push_back(std::move(waiter.notify));
  waiters_.erase(it);
}

std::string ControlPlane::NewId(std::string_view prefix) {
  return std::string(prefix) + "_" + HexEncode(entropy_.Bytes(8));
}

std::string ControlPlane::IssueToken(Change& change, const std::string& user_id, std::string name) {
  const std::string secret = "sl_" + HexEncode(entropy_.Bytes(24));
  core::ApiToken token;
  token.id = NewId("tok");
  token.user_id = user_id;
  token.name = std::move(name);
  token.secret_hash = Sha256Hex(secret);
  token.secret_prefix = secret.substr(0, 10);
  token.created_at = Now();
  token_by_hash_[token.secret_hash] = token.id;
  change.Dirty(Collection::kApiTokens, token.id);
  tokens_[token.id] = std::move(token);
  return secret;
}

// --- Credentials -------------------------------------------------------------------------------

Result<Principal> ControlPlane::Authenticate(std::string_view bearer) const {
  if (bearer.empty()) {
    return core::UnauthenticatedError(
        "no API token; send 'Authorization: Bearer <token>' (suanli login saves one)");
  }
  const std::string hash = Sha256Hex(bearer);
  std::lock_guard lock(mutex_);
  const auto token = token_by_hash_.find(hash);
  if (token != token_by_hash_.end()) {
    const core::ApiToken& record = tokens_.at(token->second);
    const core::User& user = users_.at(record.user_id);
    return Principal{user.id, user.role, ""};
  }
  const auto node = node_by_hash_.find(hash);
  if (node != node_by_hash_.end()) return Principal{"", core::Role::kUser, node->second};
  return core::UnauthenticatedError(
      "the API token is unknown or revoked; create a new one (suanli tokens create) or log in "
      "again");
}

// --- Users ------------------------------------------------------------------------------------

Result<Written<core::User>> ControlPlane::CreateUser(const Principal& caller, std::string name,
                                                     core::Role role, Money credits) {
  SUANLI_RETURN_IF_ERROR(AdminOnly(caller));
  SUANLI_RETURN_IF_ERROR(CheckName("user name", name));
  if (credits.micros() < 0) return core::InvalidArgumentError("credits cannot be negative");
  Locked locked(*this);
  for (const auto& [id, user] : users_) {
    if (user.name == name) return core::AlreadyExistsError("a user named '" + name + "' exists");
  }
  Change change(*this);
  core::User user;
  user.id = NewId("usr");
  user.name = std::move(name);
  user.role = role;
  user.created_at = Now();
  users_[user.id] = user;
  change.Dirty(Collection::kUsers, user.id);
  if (credits.micros() > 0) Credit(change, users_[user.id], credits, "initial credits");
  return Written<core::User>{users_[user.id], change.Commit()};
}

void ControlPlane::Credit(Change& change, core::User& user, Money amount, std::string note) {
  const core::TimePoint now = Now();
  user.balance = user.balance + amount;
  change.Append(core::LedgerEntry{0, user.id, "", core::LedgerKind::kCredit, amount, now, now, now,
                                  std::move(note)});
  change.Dirty(Collection::kUsers, user.id);
}

Result<Written<std::vector<core::User>>> ControlPlane::ListUsers(const Principal& caller) const {
  SUANLI_RETURN_IF_ERROR(AdminOnly(caller));
  std::lock_guard lock(mutex_);
  std::vector<core::User> users;
  for (const auto& entry : users_) users.push_back(entry.second);
  return Written<std::vector<core::User>>{std::move(users), queue_.submitted()};
}

Result<Written<core::User>> ControlPlane::GetUser(const Principal& caller,
                                                  std::string_view id) const {
  SUANLI_RETURN_IF_ERROR(PersonOnly(caller));
  std::lock_guard lock(mutex_);
  const std::string wanted = id == "me" ? caller.user_id : std::string(id);
  if (wanted != caller.user_id) SUANLI_RETURN_IF_ERROR(AdminOnly(caller));
  const auto it = users_.find(wanted);
  if (it == users_.end()) return core::NotFoundError("no user " + wanted);
  core::User user = it->second;
  user.balance = LiveBalance(user, Now());
  return Written<core::User>{std::move(user), queue_.submitted()};
}

Result<Written<core::User>> ControlPlane::AddCredits(const Principal& caller,
                                                     std::string_view user_id, Money amount,
                                                     std::string note) {
  SUANLI_RETURN_IF_ERROR(AdminOnly(caller));
  if (amount.micros() == 0) return core::InvalidArgumentError("credits: give a non-zero amount");
  Locked locked(*this);
  const auto it = users_.find(std::string(user_id));
  if (it == users_.end()) return core::NotFoundError("no user " + std::string(user_id));
  Change change(*this);
  Credit(change, it->second, amount, note.empty() ? "credits from an admin" : std::move(note));
  return Written<core::User>{it->second, change.Commit()};
}

Result<Written<core::User>> ControlPlane::SetSpendCap(const Principal& caller, Money per_hour) {
  SUANLI_RETURN_IF_ERROR(PersonOnly(caller));
  if (per_hour.micros() < 0) {
    return core::InvalidArgumentError("spend cap: give a positive $/h, or 0 for no cap");
  }
  Locked locked(*this);
  core::User& user = users_.at(caller.user_id);
  Change change(*this);
  user.spend_cap_per_hour = per_hour;
  change.Dirty(Collection::kUsers, user.id);
  EnforceLimits(change, Now());
  return Written<core::User>{user, change.Commit()};
}

// --- Tokens and SSH keys
// ------------------------------------------------------------------------

Result<Written<std::pair<core::ApiToken, std::string>>> ControlPlane::CreateToken(
    const Principal& caller, std::string name, std::string_view for_user) {
  SUANLI_RETURN_IF_ERROR(PersonOnly(caller));
  SUANLI_RETURN_IF_ERROR(CheckName("token name", name));
  Locked locked(*this);
  std::string owner = caller.user_id;
  if (!for_user.empty() && for_user != caller.user_id) {
    SUANLI_RETURN_IF_ERROR(AdminOnly(caller));
    if (!users_.contains(std::string(for_user))) {
      return core::NotFoundError("no user " + std::string(for_user));
    }
    owner = for_user;
  }
  const auto count = std::count_if(tokens_.begin(), tokens_.end(), [&](const auto& entry) {
    return entry.second.user_id == owner;
  });
  if (static_cast<size_t>(count) >= kMaxTokensPerUser) {
    return core::ResourceExhaustedError("at most 100 tokens per user; revoke unused ones first");
  }
  Change change(*this);
  std::string secret = IssueToken(change, owner, std::move(name));
  const core::ApiToken& token = tokens_.at(token_by_hash_.at(Sha256Hex(secret)));
  return Written<std::pair<core::ApiToken, std::string>>{{token, std::move(secret)},
                                                         change.Commit()};
}

Result<Written<std::vector<core::ApiToken>>> ControlPlane::ListTokens(
    const Principal& caller) const {
  SUANLI_RETURN_IF_ERROR(PersonOnly(caller));
  std::lock_guard lock(mutex_);
  std::vector<core::ApiToken> tokens;
  for (const auto& entry : tokens_) {
    if (entry.second.user_id == caller.user_id) tokens.push_back(entry.second);
  }
  return Written<std::vector<core::ApiToken>>{std::move(tokens), queue_.submitted()};
}

Result<Written<core::ApiToken>> ControlPlane::RevokeToken(const Principal& caller,
                                                          std::string_view id) {
  SUANLI_RETURN_IF_ERROR(PersonOnly(caller));
  Locked locked(*this);
  const auto it = tokens_.find(std::string(id));
  if (it == tokens_.end() || (it->second.user_id != caller.user_id && !caller.is_admin())) {
    return core::NotFoundError("you have no token " + std::string(id));
  }
  core::ApiToken token = it->second;
  token_by_hash_.erase(token.secret_hash);
  tokens_.erase(it);
  Change change(*this);
  change.Dirty(Collection::kApiTokens, token.id);
  return Written<core::ApiToken>{std::move(token), change.Commit()};
}

Result<Written<core::SshKey>> ControlPlane::AddSshKey(const Principal& caller, std::string name,
                                                      std::string public_key) {
  SUANLI_RETURN_IF_ERROR(PersonOnly(caller));
  SUANLI_RETURN_IF_ERROR(CheckName("key name", name));
  while (!public_key.empty() && (public_key.back() == '\n' || public_key.back() == ' ')) {
    public_key.pop_back();
  }
  Result<std::string> fingerprint = SshKeyFingerprint(public_key);
  if (!fingerprint.ok()) return fingerprint.status();
  Locked locked(*this);
  size_t count = 0;
  for (const auto& [id, key] : ssh_keys_) {
    if (key.user_id != caller.user_id) continue;
    ++count;
    if (key.fingerprint == *fingerprint) {
      return core::AlreadyExistsError("this key is already registered as '" + key.name + "'");
    }
  }
  if (count >= kMaxKeysPerUser) return core::ResourceExhaustedError("at most 50 SSH keys per user");
  Change change(*this);
  core::SshKey key{NewId("key"),          caller.user_id,          std::move(name),
                   std::move(public_key), std::move(*fingerprint), Now()};
  ssh_keys_[key.id] = key;
  change.Dirty(Collection::kSshKeys, key.id);
  return Written<core::SshKey>{std::move(key), change.Commit()};
}

Result<Written<std::vector<core::SshKey>>> ControlPlane::ListSshKeys(
    const Principal& caller) const {
  SUANLI_RETURN_IF_ERROR(PersonOnly(caller));
  std::lock_guard lock(mutex_);
  std::vector<core::SshKey> keys;
  for (const auto& entry : ssh_keys_) {
    if (entry.second.user_id == caller.user_id) keys.push_back(entry.second);
  }
  return Written<std::vector<core::SshKey>>{std::move(keys), queue_.submitted()};
}

Result<Written<core::SshKey>> ControlPlane::DeleteSshKey(const Principal& caller,
                                                         std::string_view id) {
  SUANLI_RETURN_IF_ERROR(PersonOnly(caller));
  Locked locked(*this);
  const auto it = ssh_keys_.find(std::string(id));
  if (it == ssh_keys_.end() || it->second.user_id != caller.user_id) {
    return core::NotFoundError("you have no SSH key " + std::string(id));
  }
  core::SshKey key = it->second;
  ssh_keys_.erase(it);
  Change change(*this);
  change.Dirty(Collection::kSshKeys, key.id);
  return Written<core::SshKey>{std::move(key), change.Commit()};
}

// --- Templates ---------------------------------------------------------------------------------

bool ControlPlane::CanSee(const Principal& caller, const core::Template& spec) const {
  return spec.is_public || spec.owner_id == caller.user_id || caller.is_admin();
}

Result<Written<core::Template>> ControlPlane::CreateTemplate(const Principal& caller,
                                                             TemplateSpec spec) {
  SUANLI_RETURN_IF_ERROR(PersonOnly(caller));
  if (spec.is_public) SUANLI_RETURN_IF_ERROR(AdminOnly(caller));
  if (spec.name.empty()) return core::InvalidArgumentError("name: is required");
  if (spec.image.empty()) return core::InvalidArgumentError("image: is required");
  if (!spec.volume_mount_path.starts_with('/')) {
    return core::InvalidArgumentError(
        "volume_mount_path: must be an absolute path like /workspace");
  }
  SUANLI_RETURN_IF_ERROR(CheckEnv(spec.env));
  Locked locked(*this);
  Change change(*this);
  core::Template created;
  created.id = NewId("tpl");
  created.owner_id = caller.user_id;
  created.is_public = spec.is_public;
  created.name = std::move(spec.name);
  created.description = std::move(spec.description);
  created.image = std::move(spec.image);
  created.command = std::move(spec.command);
  created.env = std::move(spec.env);
  created.ports = std::move(spec.ports);
  created.container_disk_gb = spec.container_disk_gb;
  created.volume_gb = spec.volume_gb;
  created.volume_mount_path = std::move(spec.volume_mount_path);
  created.created_at = Now();
  templates_[created.id] = created;
  change.Dirty(Collection::kTemplates, created.id);
  return Written<core::Template>{std::move(created), change.Commit()};
}

Result<Written<std::vector<core::Template>>> ControlPlane::ListTemplates(
    const Principal& caller) const {
  SUANLI_RETURN_IF_ERROR(PersonOnly(caller));
  std::lock_guard lock(mutex_);
  std::vector<core::Template> visible;
  for (const auto& entry : templates_) {
    if (CanSee(caller, entry.second)) visible.push_back(entry.second);
  }
  return Written<std::vector<core::Template>>{std::move(visible), queue_.submitted()};
}

Result<const core::Template*> ControlPlane::FindTemplate(const Principal& caller,
                                                         std::string_view id) const {
  const auto it = templates_.find(std::string(id));
  if (it != templates_.end() && CanSee(caller, it->second)) return &it->second;
  std::vector<std::string> names;
  for (const auto& entry : templates_) {
    if (CanSee(caller, entry.second)) names.push_back(entry.first);
  }
  std::string message = "no template '" + std::string(id) + "'";
  std::vector<std::pair<std::string_view, size_t>> keys;
  for (size_t i = 0; i < names.size(); ++i) keys.emplace_back(names[i], i);
  const std::vector<size_t> close = core::ClosestMatches(id, keys, names.size(), 1);
  if (!close.empty()) message += "; did you mean '" + names[close.front()] + "'?";
  return core::NotFoundError(message + " (suanli templates lists them)");
}

Result<Written<core::Template>> ControlPlane::GetTemplate(const Principal& caller,
                                                          std::string_view id) const {
  SUANLI_RETURN_IF_ERROR(PersonOnly(caller));
  std::lock_guard lock(mutex_);
  Result<const core::Template*> found = FindTemplate(caller, id);
  if (!found.ok()) return found.status();
  return Written<core::Template>{**found, queue_.submitted()};
}

Result<Written<core::Template>> ControlPlane::DeleteTemplate(const Principal& caller,
                                                             std::string_view id) {
  SUANLI_RETURN_IF_ERROR(PersonOnly(caller));
  Locked locked(*this);
  Result<const core::Template*> found = FindTemplate(caller, id);
  if (!found.ok()) return found.status();
  core::Template spec = **found;
  if (spec.owner_id.empty()) {
    return core::FailedPreconditionError("template '" + spec.id +
                                         "' is built in and cannot be deleted");
  }
  if (spec.owner_id != caller.user_id && !caller.is_admin()) {
    return core::PermissionDeniedError("template '" + spec.id + "' belongs to another user");
  }
  templates_.erase(spec.id);
  Change change(*this);
  change.Dirty(Collection::kTemplates, spec.id);
  return Written<core::Template>{std::move(spec), change.Commit()};
}

// --- Prices and money
// ---------------------------------------------------------------------------

Money ControlPlane::GpuPrice(std::string_view gpu_type) const {
  std::lock_guard lock(mutex_);
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
  return Money::FromMicros(PriceLocked(pod.gpu_type).micros() * pod.gpu_count);
}

Money ControlPlane::PodStorageRate(const core::Pod& pod) const {
  // Per hour, rounded up so a runway check never underestimates.
  const int64_t per_month = options_.storage_per_gb_month.micros() * pod.volume_gb;
  return Money::FromMicros((per_month + 719) / 720);
}

Money ControlPlane::UserRate(const std::string& user_id) const {
  const auto it = user_rate_.find(user_id);
  return Money::FromMicros(it == user_rate_.end() ? 0 : it->second);
}

Money ControlPlane::UserWantedRate(const std::string& user_id) const {
  const auto it = user_wanted_rate_.find(user_id);
  return Money::FromMicros(it == user_wanted_rate_.end() ? 0 : it->second);
}

void ControlPlane::Rerate(const core::Pod& pod) {
  int64_t rate = 0;
  int64_t wanted = 0;
  if (pod.state != PodState::kTerminated) {
    rate = wanted = PodStorageRate(pod).micros();
    const int64_t gpu = PodGpuRate(pod).micros();
    if (pod.desired == core::DesiredState::kRunning || HoldsGpus(pod.state)) rate += gpu;
    if (pod.desired == core::DesiredState::kRunning) wanted += gpu;
  }
  std::pair<int64_t, int64_t>& contributed = pod_rate_[pod.id];
  user_rate_[pod.owner_id] += rate - contributed.first;
  user_wanted_rate_[pod.owner_id] += wanted - contributed.second;
  contributed = {rate, wanted};
  const bool billable =
      pod.running_since.has_value() || (pod.volume_gb > 0 && pod.state != PodState::kTerminated);
  if (billable) {
    billable_by_owner_[pod.owner_id].insert(pod.id);
  } else if (const auto owner = billable_by_owner_.find(pod.owner_id);
             owner != billable_by_owner_.end()) {
    owner->second.erase(pod.id);
    if (owner->second.empty()) billable_by_owner_.erase(owner);
  }
}

Money ControlPlane::SpendRate(std::string_view user_id) const {
  std::lock_guard lock(mutex_);
  return UserRate(std::string(user_id));
}

Money ControlPlane::Unbilled(const core::Pod& pod, core::TimePoint now) const {
  Money owed;
  if (pod.running_since && now > pod.gpu_billed_to) {
    owed = owed + billing::ChargeBetween(pod.gpu_price_per_hour, *pod.running_since,
                                         pod.gpu_billed_to, now);
  }
  if (pod.volume_gb > 0 && pod.state != PodState::kTerminated && now > pod.storage_billed_to) {
    owed = owed + billing::StorageChargeBetween(pod.storage_price_per_gb_month, pod.volume_gb,
                                                pod.created_at, pod.storage_billed_to, now);
  }
  return owed;
}

Money ControlPlane::LiveBalance(const core::User& user, core::TimePoint now) const {
  Money balance = user.balance;
  const auto billable = billable_by_owner_.find(user.id);
  if (billable == billable_by_owner_.end()) return balance;
  for (const std::string& id : billable->second) balance = balance - Unbilled(pods_.at(id), now);
  return balance;
}

Status ControlPlane::CheckCanAfford(const core::User& user, Money rate_after,
                                    core::TimePoint now) const {
  const Money balance = LiveBalance(user, now);
  if (!billing::CanStart(balance, rate_after, options_.minimum_runway)) {
    const auto minutes =
        std::chrono::duration_cast<std::chrono::minutes>(options_.minimum_runway).count();
    return core::ResourceExhaustedError(
        "your balance of " + Dollars(balance) + " does not cover " + std::to_string(minutes) +
        " minutes at " + Dollars(rate_after) + "/h (all your pods and volumes with this one); " +
        "ask an admin for credits");
  }
  if (user.spend_cap_per_hour.micros() > 0 && rate_after > user.spend_cap_per_hour) {
    return core::ResourceExhaustedError(
        "this would make you spend " + Dollars(rate_after) + "/h, above your spend cap of " +
        Dollars(user.spend_cap_per_hour) + "/h; raise the cap or stop another pod");
  }
  return Status::Ok();
}

void ControlPlane::ChargePod(Change& change, core::Pod& pod, core::TimePoint to) {
  core::User& user = users_.at(pod.owner_id);
  const core::TimePoint at = Now();
  if (pod.running_since && to > pod.gpu_billed_to) {
    const Money amount =
        billing::ChargeBetween(pod.gpu_price_per_hour, *pod.running_since, pod.gpu_billed_to, to);
    if (amount.micros() > 0) {
      change.Append(core::LedgerEntry{0, user.id, pod.id, core::LedgerKind::kGpu, Money() - amount,
                                      pod.gpu_billed_to, to, at,
                                      std::to_string(pod.gpu_count) + "x " + pod.gpu_type});
      user.balance = user.balance - amount;
      pod.cost = pod.cost + amount;
      charged_micros_ += amount.micros();
    }
    pod.gpu_billed_to = to;
  }
  if (pod.volume_gb > 0 && pod.state != PodState::kTerminated && to > pod.storage_billed_to) {
    const Money amount = billing::StorageChargeBetween(
        pod.storage_price_per_gb_month, pod.volume_gb, pod.created_at, pod.storage_billed_to, to);
    if (amount.micros() > 0) {
      change.Append(core::LedgerEntry{0, user.id, pod.id, core::LedgerKind::kStorage,
                                      Money() - amount, pod.storage_billed_to, to, at,
                                      std::to_string(pod.volume_gb) + " GB volume"});
      user.balance = user.balance - amount;
      pod.cost = pod.cost + amount;
      charged_micros_ += amount.micros();
    }
    pod.storage_billed_to = to;
  }
  change.Dirty(Collection::kUsers, user.id);
  change.Dirty(Collection::kPods, pod.id);
}

void ControlPlane::Notify(Change& change, core::User& user, std::string notice) {
  user.notices.push_back(FormatTime(Now()) + " " + std::move(notice));
  if (user.notices.size() > kMaxNotices) user.notices.erase(user.notices.begin());
  change.Dirty(Collection::kUsers, user.id);
}

// --- Pod state
// ----------------------------------------------------------------------------------

void ControlPlane::SetState(Change& change, core::Pod& pod, PodState to, core::TimePoint at,
                            std::string reason) {
  pod.ready = false;  // a new state: the agent probes the ports again
  if (pod.state == PodState::kRunning && to != PodState::kRunning) {
    ChargePod(change, pod, at);
    pod.running_since.reset();
  }
  if (to == PodState::kTerminated) ChargePod(change, pod, at);
  if (to == PodState::kRunning && pod.state != PodState::kRunning) {
    pod.running_since = at;
    pod.gpu_billed_to = at;
    pod.gpu_price_per_hour = PodGpuRate(pod);
  }
  change.Append(core::Transition{0, pod.id, pod.owner_id, at, pod.state, to, pod.node_id,
                                 pod.gpu_type, pod.gpu_count, pod.gpu_price_per_hour, reason});
  pod.state = to;
  pod.state_since = at;
  pod.state_reason = std::move(reason);
  if (to == PodState::kPending && pod.node_id.empty()) {
    pending_.insert(pod.id);
    new_pending_.insert(pod.id);
  } else {
    pending_.erase(pod.id);
    new_pending_.erase(pod.id);
  }
  Rerate(pod);
  change.Dirty(Collection::kPods, pod.id);
}

void ControlPlane::TouchNode(Change& change, const std::string& node_id) {
  const auto it = nodes_.find(node_id);
  if (it == nodes_.end()) return;
  ++it->second.generation;
  change.Dirty(Collection::kNodes, node_id);
  change.TouchedNode(node_id);
}

void ControlPlane::SetDesired(Change& change, core::Pod& pod, core::DesiredState desired,
                              std::string reason) {
  pod.desired = desired;
  ++pod.generation;
  Rerate(pod);
  change.Dirty(Collection::kPods, pod.id);
  const core::TimePoint now = Now();
  if (pod.node_id.empty()) {
    // Nothing runs yet: the change takes effect at once.
    if (desired == core::DesiredState::kStopped && !IsDown(pod.state)) {
      SetState(change, pod, PodState::kStopped, now, std::move(reason));
    } else if (desired == core::DesiredState::kTerminated) {
      SetState(change, pod, PodState::kTerminated, now, std::move(reason));
    }
    return;
  }
  if (desired != core::DesiredState::kRunning) pod.state_reason = std::move(reason);
  TouchNode(change, pod.node_id);
}

void ControlPlane::Unbind(Change& change, core::Pod& pod) {
  if (pod.node_id.empty()) return;
  const std::string node_id = pod.node_id;
  pods_on_node_[node_id].erase(pod.id);
  pod.last_node_id = node_id;
  pod.node_id.clear();
  pod.gpu_indices.clear();
  change.Dirty(Collection::kPods, pod.id);
  TouchNode(change, node_id);
  capacity_changed_ = true;
}

std::string ControlPlane::NodeName(const std::string& node_id) const {
  const auto it = nodes_.find(node_id);
  return it == nodes_.end() ? node_id : it->second.name;
}

Result<core::Pod*> ControlPlane::FindOwnPod(const Principal& caller, std::string_view id) {
  const auto it = pods_.find(std::string(id));
  if (it == pods_.end() || (it->second.owner_id != caller.user_id && !caller.is_admin())) {
    return core::NotFoundError("you have no pod " + std::string(id) + " (suanli pods list)");
  }
  return &it->second;
}

std::string ControlPlane::ResolveCheapest(int gpu_count) const {
  std::string best;
  std::string cheapest_anywhere;
  for (const sched::Node& node : SchedulerNodes()) {
    if (node.gpu_count == 0) continue;
    const Money price = PriceLocked(node.gpu_type);
    if (cheapest_anywhere.empty() || price < PriceLocked(cheapest_anywhere)) {
      cheapest_anywhere = node.gpu_type;
    }
    if (node.schedulable && std::popcount(node.free_gpus) >= gpu_count &&
        (best.empty() || price < PriceLocked(best))) {
      best = node.gpu_type;
    }
  }
  return best.empty() ? cheapest_anywhere : best;
}

Result<Written<catalog::Catalog>> ControlPlane::PricedCatalog(const Principal& caller) const {
  SUANLI_RETURN_IF_ERROR(PersonOnly(caller));
  catalog::Catalog priced = catalog_;
  std::lock_guard lock(mutex_);
  for (const auto& [gpu, price] : price_overrides_) {
    Result<const catalog::GpuType*> type = priced.FindExact(gpu);
    if (!type.ok()) continue;
    catalog::Price changed = (*type)->price;
    changed.rent_per_hour = price;
    priced.SetPrice(gpu, changed);
  }
  return Written<catalog::Catalog>{std::move(priced), queue_.submitted()};
}

Status ControlPlane::ResolveByAdvice(const advisor::Workload& workload, std::string* gpu_type,
                                     int* gpu_count) const {
  advisor::AdviseOptions options;
  std::set<std::string> seen;
  int most_free = 1;
  for (const sched::Node& node : SchedulerNodes()) {
    const int free = std::popcount(node.free_gpus);
    if (!node.schedulable || free == 0 || !seen.insert(node.gpu_type).second) continue;
    Result<const catalog::GpuType*> gpu = catalog_.FindExact(node.gpu_type);
    if (!gpu.ok()) continue;
    options.gpus.push_back({*gpu, 0});
    most_free = std::max(most_free, free);
  }
  if (options.gpus.empty()) {
    return core::FailedPreconditionError(
        "no GPU is free now, so the advisor has nothing to choose from; name a gpu_type to queue "
        "for one");
  }
  options.max_count = std::min(most_free, 8);
  const advisor::Advice advice = advisor::Advise(workload, catalog_, options);
  if (!advice.recommendation.index) {
    return core::ResourceExhaustedError("no free GPU type fits this workload: " +
                                        advice.recommendation.reason);
  }
  const advisor::Estimate& best = advice.estimates[*advice.recommendation.index];
  *gpu_type = best.gpu->name;
  *gpu_count = best.count;
  return Status::Ok();
}

Result<Written<core::Pod>> ControlPlane::CreatePod(const Principal& caller, PodSpec spec) {
  SUANLI_RETURN_IF_ERROR(PersonOnly(caller));
  if (!spec.name.empty()) SUANLI_RETURN_IF_ERROR(CheckName("pod name", spec.name));
  if (spec.gpu_count < 1 || spec.gpu_count > kMaxGpusPerPod) {
    return core::InvalidArgumentError("gpu_count: must be from 1 to 64");
  }
  SUANLI_RETURN_IF_ERROR(CheckEnv(spec.env));
  Locked locked(*this);
  const core::TimePoint now = Now();
  core::Pod pod;
  if (!spec.template_id.empty()) {
    Result<const core::Template*> found = FindTemplate(caller, spec.template_id);
    if (!found.ok()) return found.status();
    const core::Template& base = **found;
    pod.template_id = base.id;
    pod.image = base.image;
    pod.command = base.command;
    pod.env = base.env;
    pod.ports = base.ports;
    pod.container_disk_gb = base.container_disk_gb;
    pod.volume_gb = base.volume_gb;
    pod.volume_mount_path = base.volume_mount_path;
  } else {
    pod.container_disk_gb = 20;
    pod.volume_mount_path = "/workspace";
  }
  if (!spec.image.empty()) pod.image = spec.image;
  if (pod.image.empty()) {
    return core::InvalidArgumentError(
        "give a template (suanli templates lists them) or an image to run");
  }
  if (spec.command) pod.command = *spec.command;
  for (auto& [name, value] : spec.env) pod.env[name] = value;
  if (spec.ports) pod.ports = *spec.ports;
  if (spec.container_disk_gb) pod.container_disk_gb = *spec.container_disk_gb;
  if (spec.volume_gb) pod.volume_gb = *spec.volume_gb;
  if (spec.volume_mount_path) pod.volume_mount_path = *spec.volume_mount_path;
  if (!pod.volume_mount_path.starts_with('/')) {
    return core::InvalidArgumentError(
        "volume_mount_path: must be an absolute path like /workspace");
  }

  std::string gpu_name = spec.gpu_type;
  if ((gpu_name.empty() || gpu_name == "cheapest") && spec.workload) {
    SUANLI_RETURN_IF_ERROR(ResolveByAdvice(*spec.workload, &gpu_name, &spec.gpu_count));
  } else if (gpu_name.empty() || gpu_name == "cheapest") {
    gpu_name = ResolveCheapest(spec.gpu_count);
    if (gpu_name.empty()) {
      return core::FailedPreconditionError(
          "no node has GPUs yet, so there is no cheapest type; name one with gpu_type");
    }
  }
  Result<catalog::GpuMatch> gpu = catalog_.Find(gpu_name);
  if (!gpu.ok()) return gpu.status().WithContext("gpu_type");
  pod.gpu_type = gpu->gpu->name;
  pod.gpu_count = spec.gpu_count;
  pod.vcpu = spec.vcpu.value_or(2 * spec.gpu_count);
  pod.memory_gb = spec.memory_gb.value_or(8 * spec.gpu_count);
  pod.interruptible = spec.interruptible;
  pod.node_selector = std::move(spec.node_selector);
  pod.storage_price_per_gb_month = options_.storage_per_gb_month;

  core::User& user = users_.at(caller.user_id);
  SUANLI_RETURN_IF_ERROR(
      CheckCanAfford(user, UserRate(user.id) + PodGpuRate(pod) + PodStorageRate(pod), now));

  pod.id = NewId("pod");
  pod.jupyter_token = HexEncode(entropy_.Bytes(24));
  pod.link_token = HexEncode(entropy_.Bytes(24));
  pod.owner_id = user.id;
  pod.name = spec.name.empty() ? pod.id : std::move(spec.name);
  pod.sequence = ++last_pod_sequence_;
  pod.created_at = now;
  pod.state_since = now;
  pod.storage_billed_to = now;
  pod.gpu_billed_to = now;
  pod.state_reason = "waiting for a GPU";
  Change change(*this);
  core::Pod& stored = pods_[pod.id] = std::move(pod);
  change.Append(core::Transition{0, stored.id, stored.owner_id, now, PodState::kPending,
                                 PodState::kPending, "", stored.gpu_type, stored.gpu_count, Money(),
                                 "created"});
  pending_.insert(stored.id);
  new_pending_.insert(stored.id);
  pods_by_owner_[stored.owner_id].insert(stored.id);
  Rerate(stored);
  change.Dirty(Collection::kPods, stored.id);
  // Place it now, so a pod on an idle cluster starts at once (first come, first served: after a
  // capacity change, every pending pod is tried in order).
  Schedule(change, now);
  return Written<core::Pod>{stored, change.Commit()};
}

Result<Written<std::vector<core::Pod>>> ControlPlane::ListPods(const Principal& caller) const {
  SUANLI_RETURN_IF_ERROR(PersonOnly(caller));
  std::lock_guard lock(mutex_);
  std::vector<core::Pod> pods;
  const core::TimePoint now = Now();
  for (const auto& entry : pods_) {
    if (entry.second.owner_id == caller.user_id || caller.is_admin()) {
      pods.push_back(entry.second);
      pods.back().cost = pods.back().cost + Unbilled(entry.second, now);
    }
  }
  return Written<std::vector<core::Pod>>{std::move(pods), queue_.submitted()};
}

Result<uint64_t> ControlPlane::VisitPods(
    const Principal& caller, const std::function<void(const PodListEntry&)>& visit) const {
  SUANLI_RETURN_IF_ERROR(PersonOnly(caller));
  std::lock_guard lock(mutex_);
  const core::TimePoint now = Now();
  static const std::string kNoAddress;
  auto show = [&](const core::Pod& pod) {
    const auto revision = pod_revision_.find(pod.id);
    const auto node = nodes_.find(pod.node_id);
    visit(PodListEntry{pod, revision == pod_revision_.end() ? 0 : revision->second,
                       node == nodes_.end() ? kNoAddress : node->second.address,
                       pod.cost + Unbilled(pod, now)});
  };
  if (caller.is_admin()) {
    for (const auto& entry : pods_) show(entry.second);
  } else if (const auto owned = pods_by_owner_.find(caller.user_id);
             owned != pods_by_owner_.end()) {
    for (const std::string& id : owned->second) show(pods_.at(id));
  }
  return queue_.submitted();
}

Result<Written<core::Pod>> ControlPlane::GetPod(const Principal& caller,
                                                std::string_view id) const {
  SUANLI_RETURN_IF_ERROR(PersonOnly(caller));
  std::lock_guard lock(mutex_);
  const auto it = pods_.find(std::string(id));
  if (it == pods_.end() || (it->second.owner_id != caller.user_id && !caller.is_admin())) {
    return core::NotFoundError("you have no pod " + std::string(id) + " (suanli pods list)");
  }
  core::Pod pod = it->second;
  pod.cost = pod.cost + Unbilled(pod, Now());
  return Written<core::Pod>{std::move(pod), queue_.submitted()};
}

Result<PodPlacement> ControlPlane::Placement(const Principal& caller,
                                             std::string_view pod_id) const {
  Result<Written<core::Pod>> pod = GetPod(caller, pod_id);
  if (!pod.ok()) return pod.status();
  PodPlacement placement{std::move(pod->value), "", false};
  if (placement.pod.node_id.empty()) return placement;
  std::lock_guard lock(mutex_);
  const auto node = nodes_.find(placement.pod.node_id);
  placement.node_name = NodeName(placement.pod.node_id);
  placement.node_reachable = node != nodes_.end() && node->second.state == core::NodeState::kReady;
  return placement;
}

Result<Written<core::Pod>> ControlPlane::Act(const Principal& caller, std::string_view id,
                                             core::PodAction action, bool force) {
  SUANLI_RETURN_IF_ERROR(PersonOnly(caller));
  Locked locked(*this);
  Result<core::Pod*> found = FindOwnPod(caller, id);
  if (!found.ok()) return found.status();
  core::Pod& pod = **found;
  SUANLI_RETURN_IF_ERROR(core::CheckAction(pod.state, action));
  if (pod.desired == core::DesiredState::kTerminated) {
    return core::FailedPreconditionError("pod " + pod.id + " is being terminated");
  }
  const core::TimePoint now = Now();
  Change change(*this);
  switch (action) {
    case core::PodAction::kStop:
      if (pod.desired == core::DesiredState::kStopped) {
        return core::FailedPreconditionError("pod " + pod.id + " is already stopping");
      }
      SetDesired(change, pod, core::DesiredState::kStopped, "stopped by its owner");
      break;
    case core::PodAction::kStart: {
      core::User& user = users_.at(pod.owner_id);
      SUANLI_RETURN_IF_ERROR(CheckCanAfford(user, UserRate(user.id) + PodGpuRate(pod), now));
      pod.desired = core::DesiredState::kRunning;
      ++pod.generation;
      SetState(change, pod, PodState::kPending, now, "waiting for a GPU");
      Schedule(change, now);
      break;
    }
    case core::PodAction::kRestart:
      ++pod.restarts;
      ++pod.generation;
      change.Dirty(Collection::kPods, pod.id);
      TouchNode(change, pod.node_id);
      break;
    case core::PodAction::kTerminate:
      if (pod.volume_gb > 0 && !pod.volume_confirmed_empty && !force) {
        return core::FailedPreconditionError(
            "pod " + pod.id + " has a " + std::to_string(pod.volume_gb) +
            " GB volume that may hold data, and terminating deletes it; terminate with --force "
            "(API: ?force=true) once you have copied what you need");
      }
      SetDesired(change, pod, core::DesiredState::kTerminated, "terminated by its owner");
      break;
  }
  return Written<core::Pod>{pod, change.Commit()};
}

// --- Scheduling
// ---------------------------------------------------------------------------------

std::vector<sched::Node> ControlPlane::SchedulerNodes() const {
  std::vector<sched::Node> out;
  out.reserve(nodes_.size());
  for (const auto& [id, node] : nodes_) {
    sched::Node view;
    view.id = id;
    view.gpu_type = node.gpus.empty() ? "" : node.gpus.front().type;
    view.gpu_count = static_cast<int>(std::min<size_t>(node.gpus.size(), 64));
    view.free_gpus = view.gpu_count == 64 ? ~uint64_t{0} : (uint64_t{1} << view.gpu_count) - 1;
    view.free = {node.vcpu, int64_t{node.memory_gb} * 1024, node.disk_gb};
    view.schedulable = node.state == core::NodeState::kReady && !node.cordoned && !node.draining;
    view.labels = node.labels;
    const auto bound = pods_on_node_.find(id);
    if (bound != pods_on_node_.end()) {
      for (const std::string& pod_id : bound->second) {
        const core::Pod& pod = pods_.at(pod_id);
        if (!HoldsGpus(pod.state)) continue;
        for (int index : pod.gpu_indices) {
          if (index >= 0 && index < 64) view.free_gpus &= ~(uint64_t{1} << index);
        }
        view.free.vcpu -= pod.vcpu;
        view.free.ram_mb -= int64_t{pod.memory_gb} * 1024;
        view.free.disk_gb -= pod.container_disk_gb + pod.volume_gb;
      }
    }
    out.push_back(std::move(view));
  }
  return out;
}

void ControlPlane::Schedule(Change& change, core::TimePoint now) {
  // Pods that could not be placed stay so until the capacity changes (a node, a freed GPU), so
  // without such a change only the pods that became pending since the last round are tried.
  const std::set<std::string>& candidates = capacity_changed_ ? pending_ : new_pending_;
  if (candidates.empty()) return;
  std::vector<sched::Node> nodes = SchedulerNodes();
  std::vector<sched::PodRequest> requests;
  requests.reserve(candidates.size());
  for (const std::string& id : candidates) {
    const core::Pod& pod = pods_.at(id);
    requests.push_back({pod.id, pod.gpu_type, pod.gpu_count,
                        sched::Resources{pod.vcpu, int64_t{pod.memory_gb} * 1024,
                                         int64_t{pod.container_disk_gb} + pod.volume_gb},
                        pod.priority, pod.sequence, pod.interruptible, pod.node_selector});
  }
  std::vector<sched::RunningPod> running;
  for (const auto& [node_id, pod_ids] : pods_on_node_) {
    for (const std::string& pod_id : pod_ids) {
      const core::Pod& pod = pods_.at(pod_id);
      if (!pod.interruptible || !HoldsGpus(pod.state) ||
          pod.desired != core::DesiredState::kRunning) {
        continue;
      }
      running.push_back({pod.id, node_id, pod.gpu_count,
                         sched::Resources{pod.vcpu, int64_t{pod.memory_gb} * 1024,
                                          int64_t{pod.container_disk_gb} + pod.volume_gb},
                         pod.priority, pod.sequence, true});
    }
  }
  capacity_changed_ = false;
  new_pending_.clear();
  const sched::Plan plan = sched::Schedule(nodes, std::move(requests), running);
  for (const sched::Binding& binding : plan.bindings) {
    core::Pod& pod = pods_.at(binding.pod_id);
    pod.node_id = binding.node_id;
    pod.last_node_id = binding.node_id;
    pod.gpu_indices = binding.gpu_indices;
    ++pod.generation;
    pods_on_node_[binding.node_id].insert(pod.id);
    SetState(change, pod, PodState::kStarting, now, "scheduled on " + NodeName(pod.node_id));
    TouchNode(change, pod.node_id);
  }
  for (const sched::Unplaced& unplaced : plan.unplaced) {
    core::Pod& pod = pods_.at(unplaced.pod_id);
    if (pod.state_reason != unplaced.reason) {
      pod.state_reason = unplaced.reason;
      change.Dirty(Collection::kPods, pod.id);
    }
  }
  for (const std::string& id : plan.preempt) {
    core::Pod& pod = pods_.at(id);
    const std::string reason = "preempted: an on-demand pod needed its GPUs (it was interruptible)";
    SetDesired(change, pod, core::DesiredState::kStopped, reason);
    Notify(change, users_.at(pod.owner_id), "pod " + pod.id + " " + reason);
  }
}

// --- Nodes
// --------------------------------------------------------------------------------------

Result<Written<std::pair<core::JoinToken, std::string>>> ControlPlane::CreateJoinToken(
    const Principal& caller, std::string note) {
  SUANLI_RETURN_IF_ERROR(AdminOnly(caller));
  Locked locked(*this);
  const std::string secret = "slj_" + HexEncode(entropy_.Bytes(24));
  core::JoinToken token;
  token.id = NewId("join");
  token.secret_hash = Sha256Hex(secret);
  token.secret_prefix = secret.substr(0, 11);
  token.note = std::move(note);
  token.created_at = Now();
  token.expires_at = token.created_at + options_.join_token_lifetime;
  join_tokens_[token.id] = token;
  Change change(*this);
  change.Dirty(Collection::kJoinTokens, token.id);
  return Written<std::pair<core::JoinToken, std::string>>{{std::move(token), secret},
                                                          change.Commit()};
}

Result<Written<std::vector<core::JoinToken>>> ControlPlane::ListJoinTokens(
    const Principal& caller) const {
  SUANLI_RETURN_IF_ERROR(AdminOnly(caller));
  std::lock_guard lock(mutex_);
  std::vector<core::JoinToken> tokens;
  for (const auto& entry : join_tokens_) tokens.push_back(entry.second);
  return Written<std::vector<core::JoinToken>>{std::move(tokens), queue_.submitted()};
}

Result<Written<core::JoinToken>> ControlPlane::DeleteJoinToken(const Principal& caller,
                                                               std::string_view id) {
  SUANLI_RETURN_IF_ERROR(AdminOnly(caller));
  Locked locked(*this);
  const auto it = join_tokens_.find(std::string(id));
  if (it == join_tokens_.end()) return core::NotFoundError("no join token " + std::string(id));
  core::JoinToken token = it->second;
  join_tokens_.erase(it);
  Change change(*this);
  change.Dirty(Collection::kJoinTokens, token.id);
  return Written<core::JoinToken>{std::move(token), change.Commit()};
}

Result<Written<std::vector<core::Node>>> ControlPlane::ListNodes(const Principal& caller) const {
  SUANLI_RETURN_IF_ERROR(AdminOnly(caller));
  std::lock_guard lock(mutex_);
  std::vector<core::Node> nodes;
  for (const auto& entry : nodes_) nodes.push_back(entry.second);
  return Written<std::vector<core::Node>>{std::move(nodes), queue_.submitted()};
}

Result<Written<core::Node>> ControlPlane::GetNode(const Principal& caller,
                                                  std::string_view id) const {
  SUANLI_RETURN_IF_ERROR(AdminOnly(caller));
  std::lock_guard lock(mutex_);
  const auto it = nodes_.find(std::string(id));
  if (it == nodes_.end()) return core::NotFoundError("no node " + std::string(id));
  return Written<core::Node>{it->second, queue_.submitted()};
}

Result<Principal> ControlPlane::AuthenticatePodLink(std::string_view pod_id,
                                                    std::string_view link) const {
  std::lock_guard lock(mutex_);
  const auto pod = pods_.find(std::string(pod_id));
  // Hashes compared, so the time taken says nothing about how much of the token was right.
  if (link.empty() || pod == pods_.end() || pod->second.link_token.empty() ||
      Sha256Hex(link) != Sha256Hex(pod->second.link_token)) {
    return core::UnauthenticatedError(
        "this pod link is wrong, or the pod is gone; copy the link again from the pod's page, or "
        "send an API token");
  }
  // The owner, as a plain user: the link opens this pod's ports and nothing else.
  return Principal{pod->second.owner_id, core::Role::kUser, ""};
}

std::string ControlPlane::NodeAddress(std::string_view node_id) const {
  std::lock_guard lock(mutex_);
  const auto node = nodes_.find(std::string(node_id));
  return node == nodes_.end() ? "" : node->second.address;
}

Result<Written<core::Node>> ControlPlane::ActOnNode(const Principal& caller, std::string_view id,
                                                    NodeAction action) {
  SUANLI_RETURN_IF_ERROR(AdminOnly(caller));
  Locked locked(*this);
  const auto it = nodes_.find(std::string(id));
  if (it == nodes_.end()) return core::NotFoundError("no node " + std::string(id));
  core::Node& node = it->second;
  Change change(*this);
  switch (action) {
    case NodeAction::kCordon:
      node.cordoned = true;
      break;
    case NodeAction::kUncordon:
      node.cordoned = false;
      node.draining = false;
      node.drain_reason.clear();
      capacity_changed_ = true;
      break;
    case NodeAction::kDrain:
      Drain(change, node, "stopped: node " + node.name + " is being drained");
      break;
  }
  change.Dirty(Collection::kNodes, node.id);
  return Written<core::Node>{node, change.Commit()};
}

void ControlPlane::Drain(Change& change, core::Node& node, const std::string& reason) {
  node.cordoned = true;
  node.draining = true;
  const std::set<std::string> bound = pods_on_node_[node.id];
  for (const std::string& pod_id : bound) {
    core::Pod& pod = pods_.at(pod_id);
    if (pod.desired != core::DesiredState::kRunning) continue;
    SetDesired(change, pod, core::DesiredState::kStopped, reason);
    Notify(change, users_.at(pod.owner_id), "pod " + pod.id + " " + reason);
  }
}

Result<Written<core::Node>> ControlPlane::DeleteNode(const Principal& caller, std::string_view id) {
  SUANLI_RETURN_IF_ERROR(AdminOnly(caller));
  Locked locked(*this);
  const auto it = nodes_.find(std::string(id));
  if (it == nodes_.end()) return core::NotFoundError("no node " + std::string(id));
  if (!pods_on_node_[it->second.id].empty()) {
    return core::FailedPreconditionError("node " + it->second.name + " still has " +
                                         std::to_string(pods_on_node_[it->second.id].size()) +
                                         " pod(s); drain it first (suanli nodes drain)");
  }
  core::Node node = it->second;
  node_by_hash_.erase(node.token_hash);
  nodes_.erase(it);
  pods_on_node_.erase(node.id);
  Change change(*this);
  change.Dirty(Collection::kNodes, node.id);
  return Written<core::Node>{std::move(node), change.Commit()};
}

Result<Written<std::vector<Availability>>> ControlPlane::GpuAvailability(
    const Principal& caller) const {
  SUANLI_RETURN_IF_ERROR(PersonOnly(caller));
  std::lock_guard lock(mutex_);
  std::map<std::string, Availability> by_type;
  for (const sched::Node& view : SchedulerNodes()) {
    if (view.gpu_type.empty()) continue;
    Availability& entry = by_type[view.gpu_type];
    entry.gpu_type = view.gpu_type;
    entry.price_per_hour = PriceLocked(view.gpu_type);
    entry.simulated = entry.simulated || nodes_.at(view.id).gpus.front().simulated;
    if (!view.schedulable) continue;
    const int free = std::popcount(view.free_gpus);
    entry.total += view.gpu_count;
    entry.free += free;
    entry.largest_free_on_one_node = std::max(entry.largest_free_on_one_node, free);
  }
  std::vector<Availability> out;
  for (auto& entry : by_type) out.push_back(std::move(entry.second));
  return Written<std::vector<Availability>>{std::move(out), queue_.submitted()};
}

// --- The agent's side
// ---------------------------------------------------------------------------

Status ControlPlane::CheckNodeReport(NodeReport& report) const {
  SUANLI_RETURN_IF_ERROR(CheckName("node name", report.name));
  if (report.vcpu < 0 || report.memory_gb < 0 || report.disk_gb < 0) {
    return core::InvalidArgumentError("vcpu, memory_gb and disk_gb cannot be negative");
  }
  if (report.gpus.size() > 64) return core::InvalidArgumentError("a node has at most 64 GPUs");
  const bool address_ok =
      report.address.size() <= 253 &&
      std::all_of(report.address.begin(), report.address.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == ':';
      });
  if (!address_ok) {
    return core::InvalidArgumentError("address: '" + report.address +
                                      "' is not a host name or an IP address");
  }
  std::set<int> indices;
  for (core::GpuDevice& gpu : report.gpus) {
    Result<catalog::GpuMatch> type = catalog_.Find(gpu.type);
    if (!type.ok()) return type.status().WithContext("gpus");
    gpu.type = type->gpu->name;
    if (gpu.type != report.gpus.front().type) {
      return core::InvalidArgumentError("a node's GPUs must all be of one type; found " +
                                        report.gpus.front().type + " and " + gpu.type);
    }
    if (gpu.index < 0 || gpu.index >= 64 || !indices.insert(gpu.index).second) {
      return core::InvalidArgumentError("gpus: indices must be distinct, from 0 to 63");
    }
  }
  return Status::Ok();
}

Status ControlPlane::CheckJoinTokenLocked(std::string_view join_secret) const {
  const core::TimePoint now = Now();
  const std::string hash = Sha256Hex(join_secret);
  const bool valid = std::any_of(join_tokens_.begin(), join_tokens_.end(), [&](const auto& entry) {
    return entry.second.secret_hash == hash && entry.second.expires_at > now;
  });
  if (valid) return Status::Ok();
  return core::UnauthenticatedError(
      "the join token is unknown or expired; an admin creates one with `suanli nodes "
      "join-token`");
}

Status ControlPlane::CheckJoinToken(std::string_view join_secret) const {
  std::lock_guard lock(mutex_);
  return CheckJoinTokenLocked(join_secret);
}

Result<Written<std::pair<core::Node, std::string>>> ControlPlane::RegisterNode(
    std::string_view join_secret, NodeReport report) {
  Locked locked(*this);
  SUANLI_RETURN_IF_ERROR(CheckJoinTokenLocked(join_secret));
  SUANLI_RETURN_IF_ERROR(CheckNodeReport(report));
  const core::TimePoint now = Now();
  for (const auto& [id, node] : nodes_) {
    if (node.name == report.name) {
      return core::AlreadyExistsError("a node named '" + report.name +
                                      "' is registered; remove it first (suanli nodes rm " + id +
                                      ") or start the agent with its saved credentials");
    }
  }
  const std::string secret = "sln_" + HexEncode(entropy_.Bytes(24));
  core::Node node;
  node.id = NewId("node");
  node.name = report.name;
  node.token_hash = Sha256Hex(secret);
  node.labels = std::move(report.labels);
  node.gpus = std::move(report.gpus);
  node.vcpu = report.vcpu;
  node.memory_gb = report.memory_gb;
  node.disk_gb = report.disk_gb;
  node.agent_version = report.agent_version;
  node.address = report.address;
  node.gpu_health = std::move(report.gpu_health);
  node.registered_at = now;
  node.last_heartbeat = now;
  node_by_hash_[node.token_hash] = node.id;
  nodes_[node.id] = node;
  capacity_changed_ = true;
  Change change(*this);
  change.Dirty(Collection::kNodes, node.id);
  return Written<std::pair<core::Node, std::string>>{{std::move(node), secret}, change.Commit()};
}

Result<Written<core::Node>> ControlPlane::Heartbeat(const Principal& caller, NodeReport report) {
  if (caller.node_id.empty()) return core::PermissionDeniedError("only a node's agent may do this");
  Locked locked(*this);
  const auto it = nodes_.find(caller.node_id);
  if (it == nodes_.end()) return core::NotFoundError("this node was removed; register it again");
  report.name = it->second.name;  // the name never changes after registration
  SUANLI_RETURN_IF_ERROR(CheckNodeReport(report));
  core::Node& node = it->second;
  Change change(*this);
  node.last_heartbeat = Now();
  // Readings change with every heartbeat: kept in memory, never a write of their own.
  node.gpu_health = std::move(report.gpu_health);
  bool changed = node.state != core::NodeState::kReady;
  node.state = core::NodeState::kReady;
  auto same_gpus = [](const core::GpuDevice& a, const core::GpuDevice& b) {
    return a.index == b.index && a.uuid == b.uuid && a.type == b.type && a.simulated == b.simulated;
  };
  if (!std::equal(node.gpus.begin(), node.gpus.end(), report.gpus.begin(), report.gpus.end(),
                  same_gpus) ||
      node.vcpu != report.vcpu || node.memory_gb != report.memory_gb ||
      node.disk_gb != report.disk_gb || node.agent_version != report.agent_version ||
      node.address != report.address) {
    // Fewer GPUs than registered means a GPU failed or fell off the bus (XID 79): its pods may be
    // running on hardware that is gone, so the node takes no pods and its pods stop until an
    // admin has looked (and uncordons it). More GPUs are simply capacity.
    if (report.gpus.size() < node.gpus.size() && !node.draining) {
      node.drain_reason = "the agent found " + std::to_string(report.gpus.size()) +
                          " GPU(s) of the " + std::to_string(node.gpus.size()) + " it had";
      Drain(change, node, "stopped: node " + node.name + " lost GPUs (" + node.drain_reason + ")");
    }
    node.gpus = std::move(report.gpus);
    node.vcpu = report.vcpu;
    node.memory_gb = report.memory_gb;
    node.disk_gb = report.disk_gb;
    node.agent_version = report.agent_version;
    node.address = report.address;
    changed = true;
  }
  if (changed) {
    change.Dirty(Collection::kNodes, node.id);
    capacity_changed_ = true;
  }
  return Written<core::Node>{node, change.Commit()};
}

Result<Written<core::Pod>> ControlPlane::ReportPod(const Principal& caller, std::string_view pod_id,
                                                   const PodReport& report) {
  if (caller.node_id.empty()) return core::PermissionDeniedError("only a node's agent may do this");
  Locked locked(*this);
  const auto it = pods_.find(std::string(pod_id));
  if (it == pods_.end() ||
      (it->second.node_id != caller.node_id && it->second.last_node_id != caller.node_id)) {
    return core::PermissionDeniedError("pod " + std::string(pod_id) + " is not on this node");
  }
  core::Pod& pod = it->second;
  Change change(*this);
  if (report.seq <= pod.report_seq || pod.state == PodState::kTerminated) {
    return Written<core::Pod>{pod, change.Commit()};  // a repeat: already applied
  }
  pod.report_seq = report.seq;
  change.Dirty(Collection::kPods, pod.id);
  const core::TimePoint now = Now();
  const core::TimePoint at = std::clamp(core::TruncateToMillis(report.at), pod.state_since, now);
  if (!report.container_id.empty()) pod.container_id = report.container_id;
  if (!report.port_mappings.empty()) pod.port_mappings = report.port_mappings;
  const PodState to = report.state;
  pod.pull = to == PodState::kStarting ? report.pull : std::nullopt;
  if (to == pod.state) {
    if (!report.message.empty()) pod.state_reason = report.message;
    if (report.ready && to == PodState::kRunning) pod.ready = *report.ready;
    return Written<core::Pod>{pod, change.Commit()};
  }
  std::string reason = report.message;
  if (to == PodState::kExited && reason.empty()) {
    reason = "the container exited" +
             (report.exit_code ? " with code " + std::to_string(*report.exit_code) : "");
  }
  if (reason.empty() && to == PodState::kRunning) reason = "running on " + NodeName(pod.node_id);
  if (reason.empty() && pod.desired != core::DesiredState::kRunning) reason = pod.state_reason;
  if (reason.empty()) reason = "reported by its node";
  SetState(change, pod, to, at, reason);
  if (report.ready && to == PodState::kRunning) pod.ready = *report.ready;
  if (IsDown(to)) {
    if (pod.desired == core::DesiredState::kRunning) {
      // It stopped by itself: it stays down until its owner starts it again.
      pod.desired = core::DesiredState::kStopped;
      ++pod.generation;
      Rerate(pod);
    }
    if (to == PodState::kTerminated || pod.desired != core::DesiredState::kTerminated) {
      Unbind(change, pod);
    }
    if (to == PodState::kFailed || to == PodState::kExited) {
      Notify(change, users_.at(pod.owner_id),
             "pod " + pod.id + " " + std::string(core::PodStateName(to)) + ": " + pod.state_reason);
    }
  }
  return Written<core::Pod>{pod, change.Commit()};
}

Result<DesiredPods> ControlPlane::DesiredFor(const Principal& caller) const {
  if (caller.node_id.empty()) return core::PermissionDeniedError("only a node's agent may do this");
  std::lock_guard lock(mutex_);
  const auto node = nodes_.find(caller.node_id);
  if (node == nodes_.end()) return core::NotFoundError("this node was removed; register it again");
  DesiredPods desired;
  desired.generation = node->second.generation;
  const auto bound = pods_on_node_.find(caller.node_id);
  if (bound != pods_on_node_.end()) {
    for (const std::string& id : bound->second) {
      const core::Pod& pod = pods_.at(id);
      desired.pods.push_back(pod);
      if (desired.ssh_keys.contains(pod.owner_id)) continue;
      std::vector<std::string>& keys = desired.ssh_keys[pod.owner_id];
      for (const auto& entry : ssh_keys_) {
        if (entry.second.user_id == pod.owner_id) keys.push_back(entry.second.public_key);
      }
    }
  }
  return desired;
}

void ControlPlane::WhenNodeChanges(const Principal& caller, int64_t after, core::TimePoint deadline,
                                   std::function<void()> notify) {
  {
    std::lock_guard lock(mutex_);
    const auto node = nodes_.find(caller.node_id);
    if (node != nodes_.end() && node->second.generation <= after && deadline > clock_.Now()) {
      waiters_[caller.node_id].push_back({after, deadline, std::move(notify)});
      return;
    }
  }
  notify();
}

// --- Tick: scheduling, health, metering
// ---------------------------------------------------------

void ControlPlane::EnforceLimits(Change& change, core::TimePoint now) {
  // Only users who are being charged can run out; only users with a cap can exceed it.
  std::vector<std::pair<std::string, std::string>> stops;  // user, reason
  for (const auto& [user_id, pod_ids] : billable_by_owner_) {
    const core::User& user = users_.at(user_id);
    const Money balance = LiveBalance(user, now);
    if (balance.micros() <= 0) {
      stops.emplace_back(user_id, "stopped: your balance reached " + Dollars(balance) +
                                      "; add credits and start it again (its volume is kept)");
    }
  }
  for (const auto& [user_id, user] : users_) {
    if (user.spend_cap_per_hour.micros() > 0 && UserWantedRate(user_id) > user.spend_cap_per_hour) {
      stops.emplace_back(user_id, "stopped: your pods would spend more than your cap of " +
                                      Dollars(user.spend_cap_per_hour) + "/h");
    }
  }
  for (const auto& [user_id, reason] : stops) {
    core::User& user = users_.at(user_id);
    const bool over_cap = LiveBalance(user, now).micros() > 0;
    std::vector<core::Pod*> active;
    for (auto& [id, pod] : pods_) {
      if (pod.owner_id == user_id && pod.desired == core::DesiredState::kRunning) {
        active.push_back(&pod);
      }
    }
    // Over the cap: the newest first, only as many as the cap needs. Out of money: all of them.
    std::sort(active.begin(), active.end(),
              [](const core::Pod* a, const core::Pod* b) { return a->sequence > b->sequence; });
    for (core::Pod* pod : active) {
      if (over_cap && UserWantedRate(user_id) <= user.spend_cap_per_hour) break;
      SetDesired(change, *pod, core::DesiredState::kStopped, reason);
      Notify(change, user, "pod " + pod->id + " " + reason);
    }
  }
}

uint64_t ControlPlane::Tick() {
  Locked locked(*this);
  const core::TimePoint now = Now();
  Change change(*this);
  for (auto& [id, node] : nodes_) {
    if (node.state == core::NodeState::kReady &&
        now - node.last_heartbeat > options_.unreachable_after) {
      node.state = core::NodeState::kUnreachable;
      change.Dirty(Collection::kNodes, id);
    }
  }
  for (const auto& [owner, pod_ids] : billable_by_owner_) {
    for (const std::string& id : pod_ids) {
      core::Pod& pod = pods_.at(id);
      const bool running_due =
          pod.running_since && now - pod.gpu_billed_to >= options_.charge_every;
      const bool storage_due = pod.volume_gb > 0 && pod.state != PodState::kTerminated &&
                               now - pod.storage_billed_to >= options_.charge_every;
      if (running_due || storage_due) ChargePod(change, pod, now);
    }
  }
  EnforceLimits(change, now);
  Schedule(change, now);
  // Long polls whose time is up answer with what they have.
  for (auto it = waiters_.begin(); it != waiters_.end();) {
    std::vector<Waiter>& list = it->second;
    for (auto waiter = list.begin(); waiter != list.end();) {
      if (waiter->deadline <= now) {
        wakeups_.push_back(std::move(waiter->notify));
        waiter = list.erase(waiter);
      } else {
        ++waiter;
      }
    }
    it = list.empty() ? waiters_.erase(it) : std::next(it);
  }
  return change.Commit();
}

// --- Billing views
// ------------------------------------------------------------------------------

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
  SUANLI_RETURN_IF_ERROR(GetPod(caller, pod_id).status());
  store::HistoryQuery query;
  query.pod_id = pod_id;
  return store_.Transitions(query);
}

Result<std::vector<UsageRow>> ControlPlane::Usage(const Principal& caller, std::string_view user_id,
                                                  UsageBy by) const {
  Result<std::vector<core::LedgerEntry>> entries = Ledger(caller, user_id);
  if (!entries.ok()) return entries.status();
  std::map<std::string, UsageRow> rows;
  for (const core::LedgerEntry& entry : *entries) {
    if (entry.kind == core::LedgerKind::kCredit) continue;
    // A slice is at most a minute long; it counts on the day it started.
    const std::string key =
        by == UsageBy::kPod ? entry.pod_id : FormatTime(entry.from).substr(0, 10);
    UsageRow& row = rows[key];
    row.key = key;
    const Money cost = Money() - entry.amount;
    if (entry.kind == core::LedgerKind::kGpu) {
      row.gpu = row.gpu + cost;
      row.gpu_seconds +=
          std::chrono::duration_cast<std::chrono::seconds>(entry.to - entry.from).count();
    } else {
      row.storage = row.storage + cost;
    }
  }
  std::vector<UsageRow> out;
  for (auto& entry : rows) out.push_back(std::move(entry.second));
  return out;
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

Gauges ControlPlane::gauges() const {
  std::lock_guard lock(mutex_);
  Gauges gauges;
  for (const auto& entry : pods_)
    ++gauges.pods_by_state[std::string(PodStateName(entry.second.state))];
  for (const sched::Node& view : SchedulerNodes()) {
    if (view.gpu_type.empty()) continue;
    const int free = std::popcount(view.free_gpus);
    auto& [allocated, available] = gauges.gpus_by_type[view.gpu_type];
    allocated += view.gpu_count - free;
    available += free;
  }
  gauges.pending = static_cast<int>(pending_.size());
  for (const auto& entry : nodes_) {
    if (entry.second.state == core::NodeState::kReady) {
      ++gauges.nodes_ready;
    } else {
      ++gauges.nodes_unreachable;
    }
  }
  gauges.charged_micros = charged_micros_;
  return gauges;
}

}  // namespace suanli::server
