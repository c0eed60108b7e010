// Projects: a team's pods, seen and run by its members, billed to its owner (core::Project).
#include <algorithm>

#include "server/control_plane.h"
#include "server/control_plane_internal.h"
#include "server/project_documents.h"

namespace suanli::server {

using core::Money;
using core::Result;
using core::Status;

Result<Written<core::Project>> ControlPlane::CreateProject(const Principal& caller,
                                                           std::string_view name) {
  SUANLI_RETURN_IF_ERROR(PersonOnly(caller));
  SUANLI_RETURN_IF_ERROR(CheckName("project name", name));
  Locked locked(*this);
  if (std::ranges::any_of(access_.projects(),
                          [&](const auto& entry) { return entry.second.name == name; })) {
    return core::AlreadyExistsError("a project named '" + std::string(name) +
                                    "' exists; choose another name");
  }
  core::Project project;
  project.id = NewId("prj");
  project.name = name;
  project.owner_id = caller.user_id;
  project.members[caller.user_id] = core::ProjectRole::kOwner;
  project.created_at = Now();
  Change change(*this);
  const core::Project& stored = access_.Put(std::move(project));
  change.Dirty(Collection::kProjects, stored.id);
  return Written<core::Project>{stored, change.Commit()};
}

Result<Written<std::vector<core::Project>>> ControlPlane::ListProjects(
    const Principal& caller) const {
  SUANLI_RETURN_IF_ERROR(PersonOnly(caller));
  core::MutexLock lock(mutex_);
  std::vector<core::Project> out;
  for (const auto& [id, project] : access_.projects()) {
    if (AccessPolicy::SeesProject(caller, project)) out.push_back(project);
  }
  return Written<std::vector<core::Project>>{std::move(out), queue_.submitted()};
}

Result<Written<core::Project>> ControlPlane::GetProject(const Principal& caller,
                                                        std::string_view id) const {
  SUANLI_RETURN_IF_ERROR(PersonOnly(caller));
  core::MutexLock lock(mutex_);
  Result<std::string> found = access_.FindProject(caller, id);
  if (!found.ok()) return found.status();
  return Written<core::Project>{access_.at(*found), queue_.submitted()};
}

std::string ControlPlane::UserName(std::string_view user_id) const {
  core::MutexLock lock(mutex_);
  const auto user = users_.find(std::string(user_id));
  return user == users_.end() ? "" : user->second.name;
}

namespace {

// The project's owner, or an admin: PERMISSION_DENIED for its other members.
Status OwnerOnly(const Principal& caller, const core::Project& project) {
  if (caller.is_admin() || project.owner_id == caller.user_id) return Status::Ok();
  return core::PermissionDeniedError(
      "only the project's owner may change its members or budget, or delete it");
}

bool HasSshKey(const std::map<std::string, core::SshKey>& keys, const std::string& user_id) {
  return std::ranges::any_of(keys,
                             [&](const auto& entry) { return entry.second.user_id == user_id; });
}

}  // namespace

Result<Written<core::Project>> ControlPlane::SetProjectMember(const Principal& caller,
                                                              std::string_view id,
                                                              std::string_view user,
                                                              core::ProjectRole role) {
  SUANLI_RETURN_IF_ERROR(PersonOnly(caller));
  Locked locked(*this);
  Result<std::string> found = access_.FindProject(caller, id);
  if (!found.ok()) return found.status();
  core::Project& project = access_.at(*found);
  SUANLI_RETURN_IF_ERROR(OwnerOnly(caller, project));
  if (role == core::ProjectRole::kOwner) {
    return core::InvalidArgumentError(
        "role: member or viewer; a project has one owner, whose balance its pods bill");
  }
  const std::string user_id = UserIdFor(user);
  if (user_id.empty()) {
    return core::NotFoundError("no user with the ID or name '" + std::string(user) + "'");
  }
  if (user_id == project.owner_id) {
    return core::InvalidArgumentError("the project's owner stays its owner");
  }
  Principal holder;
  holder.user_id = user_id;
  const bool had_keys_in = access_.Allowed(holder, project.owner_id, project.id, Access::kWrite);
  project.members[user_id] = role;
  Change change(*this);
  change.Dirty(Collection::kProjects, project.id);
  // A member's keys go into the project's running pods, a viewer's come out (DesiredFor).
  if (had_keys_in != access_.Allowed(holder, project.owner_id, project.id, Access::kWrite) &&
      HasSshKey(ssh_keys_, user_id)) {
    TouchKeyHolders(change, {project.id});
  }
  return Written<core::Project>{project, change.Commit()};
}

Result<Written<core::Project>> ControlPlane::RemoveProjectMember(const Principal& caller,
                                                                 std::string_view id,
                                                                 std::string_view user) {
  SUANLI_RETURN_IF_ERROR(PersonOnly(caller));
  Locked locked(*this);
  Result<std::string> found = access_.FindProject(caller, id);
  if (!found.ok()) return found.status();
  core::Project& project = access_.at(*found);
  const std::string user_id = UserIdFor(user);
  // A member may leave on their own; only the owner removes others.
  if (user_id != caller.user_id) SUANLI_RETURN_IF_ERROR(OwnerOnly(caller, project));
  if (user_id == project.owner_id) {
    return core::InvalidArgumentError(
        "the project's owner cannot leave it; delete the project instead");
  }
  const auto member = project.members.find(user_id);
  if (user_id.empty() || member == project.members.end()) {
    return core::NotFoundError("'" + std::string(user) + "' is not a member of " + project.name);
  }
  const bool had_keys_in = member->second >= core::ProjectRole::kMember;
  project.members.erase(member);
  Change change(*this);
  change.Dirty(Collection::kProjects, project.id);
  // Their keys leave the project's running pods within seconds, not at the pods' next start.
  if (had_keys_in && HasSshKey(ssh_keys_, user_id)) TouchKeyHolders(change, {project.id});
  return Written<core::Project>{project, change.Commit()};
}

Result<Written<core::Project>> ControlPlane::DeleteProject(const Principal& caller,
                                                           std::string_view id) {
  SUANLI_RETURN_IF_ERROR(PersonOnly(caller));
  Locked locked(*this);
  Result<std::string> found = access_.FindProject(caller, id);
  if (!found.ok()) return found.status();
  SUANLI_RETURN_IF_ERROR(OwnerOnly(caller, access_.at(*found)));
  core::Project project = access_.at(*found);
  for (const std::string& pod_id : pods_.InProject(project.id)) {
    if (pods_.at(pod_id).desired != core::DesiredState::kTerminated) {
      return core::FailedPreconditionError("project " + project.name + " still has pod " + pod_id +
                                           "; terminate its pods first");
    }
  }
  for (const auto& [endpoint_id, endpoint] : serverless_.endpoints()) {
    if (endpoint.project_id == project.id) {
      return core::FailedPreconditionError("project " + project.name + " still has endpoint " +
                                           endpoint.name + "; delete its endpoints first");
    }
  }
  // Its volumes and snapshots are its data: deleted on purpose first, not handed to anyone.
  for (const auto& [volume_id, volume] : volumes_) {
    if (volume.project_id == project.id) {
      return core::FailedPreconditionError("project " + project.name + " still has volume " +
                                           volume.name + "; delete its volumes first");
    }
  }
  for (const auto& [snapshot_id, snapshot] : snapshots_) {
    if (snapshot.project_id == project.id) {
      return core::FailedPreconditionError("project " + project.name + " still has snapshot " +
                                           snapshot.name + "; delete its snapshots first");
    }
  }
  access_.Erase(project.id);
  Change change(*this);
  change.Dirty(Collection::kProjects, project.id);
  return Written<core::Project>{std::move(project), change.Commit()};
}

Result<Written<core::Project>> ControlPlane::SetProjectBudget(const Principal& caller,
                                                              std::string_view id,
                                                              const ProjectBudgetChange& budget) {
  SUANLI_RETURN_IF_ERROR(PersonOnly(caller));
  for (const std::optional<Money>& amount : {budget.spend_cap_per_hour, budget.monthly_budget}) {
    if (amount && amount->micros() < 0) {
      return core::InvalidArgumentError("a project's cap and budget are positive, or 0 for none");
    }
  }
  Locked locked(*this);
  Result<std::string> found = access_.FindProject(caller, id);
  if (!found.ok()) return found.status();
  core::Project& project = access_.at(*found);
  SUANLI_RETURN_IF_ERROR(OwnerOnly(caller, project));
  if (budget.spend_cap_per_hour) project.spend_cap_per_hour = *budget.spend_cap_per_hour;
  if ((budget.monthly_budget && *budget.monthly_budget != project.monthly_budget) ||
      (budget.action && *budget.action != project.budget_action)) {
    project.budget_warned_month.clear();
    project.budget_reached_month.clear();
  }
  if (budget.monthly_budget) project.monthly_budget = *budget.monthly_budget;
  if (budget.action) project.budget_action = *budget.action;
  Change change(*this);
  change.Dirty(Collection::kProjects, project.id);
  return Written<core::Project>{project, change.Commit()};
}

}  // namespace suanli::server
