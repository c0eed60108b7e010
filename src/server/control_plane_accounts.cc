// The control plane: authentication, users, API tokens, SSH keys and templates.
#include "core/mount_path.h"
#include "core/suggest.h"
#include "server/control_plane.h"
#include "server/control_plane_internal.h"
#include "server/secrets.h"

namespace suanli::server {

// --- Credentials ---------------------------------------------------------------------------------

Result<Principal> ControlPlane::Authenticate(std::string_view bearer) const {
  if (bearer.empty()) {
    return core::UnauthenticatedError(
        "no API token; send 'Authorization: Bearer <token>' (suanli login saves one)");
  }
  const std::string hash = Credentials::SecretHash(bearer);  // not under the lock every call takes
  core::MutexLock lock(mutex_);
  if (const std::optional<Credentials::Holder> holder = credentials_.FindByHash(hash)) {
    if (!holder->node_id.empty()) return Principal{"", core::Role::kUser, holder->node_id, ""};
    const core::User& user = users_.at(holder->user_id);
    Principal principal{user.id,          user.role,         "",
                        holder->token_id, holder->read_only, holder->project_id};
    // A project token is never an admin's: it reaches its project as the member its user is.
    if (!principal.project_id.empty()) principal.role = core::Role::kUser;
    return principal;
  }
  // Not "suanli tokens create": that needs a token that works, which is what the caller lacks.
  return core::UnauthenticatedError(
      "the API token is unknown or revoked; ask an admin of this server for a token, or use the "
      "admin token in <data-dir>/admin-token on the server's machine, then suanli login --token "
      "TOKEN");
}

// --- Users ---------------------------------------------------------------------------------------

Result<Written<core::User>> ControlPlane::CreateUser(const Principal& caller, std::string name,
                                                     core::Role role, Money credits) {
  SUANLI_RETURN_IF_ERROR(AdminOnly(caller));
  SUANLI_RETURN_IF_ERROR(CheckName("user name", name));
  if (credits.micros() < 0) return core::InvalidArgumentError("credits cannot be negative");
  if (Result<Money> balance = Money::AddToBalance(Money(), credits); !balance.ok()) {
    return core::FailedPreconditionError("credits: " + balance.status().message());
  }
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
  return Written<core::User>{Shown(users_[user.id]), change.Commit()};
}

void ControlPlane::Credit(Change& change, core::User& user, Money amount, std::string note) {
  const core::TimePoint now = Now();
  user.balance = user.balance + amount;
  change.Append(core::LedgerEntry{0, user.id, "", core::LedgerKind::kCredit, amount, now, now, now,
                                  std::move(note)});
  change.Dirty(Collection::kUsers, user.id);
}

std::string ControlPlane::UserIdFor(std::string_view id_or_name) const {
  if (users_.contains(std::string(id_or_name))) return std::string(id_or_name);
  for (const auto& [id, user] : users_) {
    if (user.name == id_or_name) return id;
  }
  return "";
}

Result<Written<std::vector<core::User>>> ControlPlane::ListUsers(const Principal& caller) const {
  SUANLI_RETURN_IF_ERROR(AdminOnly(caller));
  core::MutexLock lock(mutex_);
  std::vector<core::User> users;
  for (const auto& entry : users_) users.push_back(Shown(entry.second));
  return Written<std::vector<core::User>>{std::move(users), queue_.submitted()};
}

Result<Written<core::User>> ControlPlane::GetUser(const Principal& caller,
                                                  std::string_view id) const {
  SUANLI_RETURN_IF_ERROR(PersonOnly(caller));
  core::MutexLock lock(mutex_);
  const std::string wanted = id == "me" ? caller.user_id : UserIdFor(id);
  // Who is not an admin learns nothing about other names or IDs, not even whether they exist.
  if (wanted != caller.user_id) SUANLI_RETURN_IF_ERROR(AdminOnly(caller));
  const auto it = users_.find(wanted);
  if (it == users_.end()) {
    return core::NotFoundError("no user with the ID or name '" + std::string(id) +
                               "'; suanli users list shows them");
  }
  core::User user = Shown(it->second);
  user.balance = LiveBalance(user, Now());
  return Written<core::User>{std::move(user), queue_.submitted()};
}

Result<Written<core::User>> ControlPlane::AddCredits(const Principal& caller,
                                                     std::string_view user_id, Money amount,
                                                     std::string note) {
  SUANLI_RETURN_IF_ERROR(AdminOnly(caller));
  if (amount.micros() == 0) return core::InvalidArgumentError("credits: give a non-zero amount");
  Locked locked(*this);
  const auto it = users_.find(UserIdFor(user_id));
  if (it == users_.end()) {
    return core::NotFoundError("no user with the ID or name '" + std::string(user_id) +
                               "'; suanli users list shows them");
  }
  // Each amount is within the API's range, but their sum must be too (9,300 calls of $1e9 once
  // wrapped a balance to -$9.1e12).
  if (Result<Money> balance = Money::AddToBalance(it->second.balance, amount); !balance.ok()) {
    return core::FailedPreconditionError("credits: " + balance.status().message());
  }
  Change change(*this);
  Credit(change, it->second, amount, note.empty() ? "credits from an admin" : std::move(note));
  return Written<core::User>{Shown(it->second), change.Commit()};
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
  return Written<core::User>{Shown(user), change.Commit()};
}

// --- Quotas --------------------------------------------------------------------------------------

core::User ControlPlane::Shown(core::User user) const {
  if (user.max_pods == 0) user.max_pods = options_.default_max_pods;
  if (user.max_pending_pods == 0) user.max_pending_pods = options_.default_max_pending_pods;
  if (user.max_endpoints == 0) user.max_endpoints = options_.default_max_endpoints;
  return user;
}

Status ControlPlane::CheckQuota(const core::User& user, bool new_pod) const {
  const core::User limits = Shown(user);
  const PodRegistry::Counts owned = pods_.CountsOf(user.id);
  const int pods = owned.live;
  const int pending = owned.pending;
  const std::string raise = "; or ask an admin to raise it (suanli users set-quota " + user.name;
  if (new_pod && pods >= limits.max_pods) {
    return core::ResourceExhaustedError(
        "you have " + std::to_string(pods) + " pods, your quota's limit of pods not terminated (" +
        std::to_string(limits.max_pods) + "); remove some (suanli pods rm)" + raise + " --pods N)");
  }
  if (pending >= limits.max_pending_pods) {
    return core::ResourceExhaustedError(
        "you have " + std::to_string(pending) +
        " pods waiting for a GPU, your quota's limit of pending pods (" +
        std::to_string(limits.max_pending_pods) + "); wait for them to start or remove some" +
        raise + " --pending N)");
  }
  return Status::Ok();
}

Result<Written<core::User>> ControlPlane::SetQuota(const Principal& caller,
                                                   std::string_view user_id, QuotaChange quota) {
  SUANLI_RETURN_IF_ERROR(AdminOnly(caller));
  if (quota.max_pods.value_or(0) < 0 || quota.max_pending_pods.value_or(0) < 0 ||
      quota.max_endpoints.value_or(0) < 0) {
    return core::InvalidArgumentError(
        "a quota is a number of pods or endpoints, or 0 for the default");
  }
  Locked locked(*this);
  const auto it = users_.find(UserIdFor(user_id));
  if (it == users_.end()) {
    return core::NotFoundError("no user with the ID or name '" + std::string(user_id) +
                               "'; suanli users list shows them");
  }
  core::User& user = it->second;
  if (quota.max_pods) user.max_pods = *quota.max_pods;
  if (quota.max_pending_pods) user.max_pending_pods = *quota.max_pending_pods;
  if (quota.max_endpoints) user.max_endpoints = *quota.max_endpoints;
  Change change(*this);
  change.Dirty(Collection::kUsers, user.id);
  return Written<core::User>{Shown(user), change.Commit()};
}

// --- Tokens and SSH keys -------------------------------------------------------------------------

Result<Written<std::pair<core::ApiToken, std::string>>> ControlPlane::CreateToken(
    const Principal& caller, std::string name, std::string_view for_user, bool read_only,
    std::string_view project) {
  SUANLI_RETURN_IF_ERROR(PersonOnly(caller));
  if (caller.read_only) {
    return core::PermissionDeniedError("a read-only token cannot make tokens; use a full one");
  }
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
  if (credentials_.ApiTokenCount(owner) >= kMaxTokensPerUser) {
    return core::ResourceExhaustedError("at most 100 tokens per user; revoke unused ones first");
  }
  core::ApiToken scope;
  scope.read_only = read_only;
  if (!project.empty()) {
    if (owner != caller.user_id) {
      return core::InvalidArgumentError("project: a project token is made by its own user");
    }
    Result<std::string> found = access_.FindProject(caller, project);
    if (!found.ok()) return found.status().WithContext("project");
    if (!access_.RoleIn(caller, *found)) {
      return core::PermissionDeniedError("project: you are not in " + access_.at(*found).name +
                                         "; a project token acts as one of its members");
    }
    scope.project_id = *found;
  }
  Change change(*this);
  auto [token, secret] =
      credentials_.IssueApiToken(NewId("tok"), owner, std::move(name), Now(), scope);
  change.Dirty(Collection::kApiTokens, token.id);
  return Written<std::pair<core::ApiToken, std::string>>{{std::move(token), std::move(secret)},
                                                         change.Commit()};
}

Result<Written<std::vector<core::ApiToken>>> ControlPlane::ListTokens(
    const Principal& caller) const {
  SUANLI_RETURN_IF_ERROR(PersonOnly(caller));
  core::MutexLock lock(mutex_);
  return Written<std::vector<core::ApiToken>>{credentials_.ApiTokensOf(caller.user_id),
                                              queue_.submitted()};
}

Result<Written<core::ApiToken>> ControlPlane::RevokeToken(const Principal& caller,
                                                          std::string_view id) {
  SUANLI_RETURN_IF_ERROR(PersonOnly(caller));
  Locked locked(*this);
  const core::ApiToken* found = credentials_.FindApiToken(id);
  if (found == nullptr || (found->user_id != caller.user_id && !caller.is_admin())) {
    return core::NotFoundError("you have no token " + std::string(id));
  }
  core::ApiToken token = *found;
  credentials_.RevokeApiToken(id);
  Change change(*this);
  change.Dirty(Collection::kApiTokens, token.id);
  return Written<core::ApiToken>{std::move(token), change.Commit()};
}

namespace {

// The KeyHolders whose pods take `user_id`'s SSH keys (DesiredFor): the person's own pods, and
// those of each project where they are a member or its owner.
std::set<std::string> KeyHoldersOf(const AccessPolicy& access, const std::string& user_id) {
  std::set<std::string> holders = {user_id};
  Principal holder;
  holder.user_id = user_id;
  for (const auto& [id, project] : access.projects()) {
    if (access.Allowed(holder, project.owner_id, id, AccessPolicy::Access::kWrite))
      holders.insert(id);
  }
  return holders;
}

}  // namespace

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
  // Running pods take the new key within seconds, not at their next start.
  TouchKeyHolders(change, KeyHoldersOf(access_, key.user_id));
  return Written<core::SshKey>{std::move(key), change.Commit()};
}

Result<Written<std::vector<core::SshKey>>> ControlPlane::ListSshKeys(
    const Principal& caller) const {
  SUANLI_RETURN_IF_ERROR(PersonOnly(caller));
  core::MutexLock lock(mutex_);
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
  // Running pods lose the key within seconds (their agents rewrite authorized_keys).
  TouchKeyHolders(change, KeyHoldersOf(access_, key.user_id));
  return Written<core::SshKey>{std::move(key), change.Commit()};
}

// --- Templates -----------------------------------------------------------------------------------

bool ControlPlane::CanSee(const Principal& caller, const core::Template& spec) const {
  return spec.is_public || spec.owner_id == caller.user_id || caller.is_admin();
}

Result<Written<core::Template>> ControlPlane::CreateTemplate(const Principal& caller,
                                                             TemplateSpec spec) {
  SUANLI_RETURN_IF_ERROR(PersonOnly(caller));
  if (spec.is_public) SUANLI_RETURN_IF_ERROR(AdminOnly(caller));
  if (spec.name.empty()) return core::InvalidArgumentError("name: is required");
  if (spec.image.empty()) return core::InvalidArgumentError("image: is required");
  SUANLI_RETURN_IF_ERROR(core::CheckMountPath(spec.volume_mount_path));
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
  core::MutexLock lock(mutex_);
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
  core::MutexLock lock(mutex_);
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

}  // namespace suanli::server
