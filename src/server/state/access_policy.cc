#include "server/state/access_policy.h"

namespace suanli::server {

std::optional<core::ProjectRole> AccessPolicy::RoleIn(const Principal& caller,
                                                      std::string_view project_id) const {
  const core::Project* project = Find(project_id);
  if (project == nullptr) return std::nullopt;
  const auto member = project->members.find(caller.user_id);
  if (member == project->members.end()) return std::nullopt;
  return member->second;
}

bool AccessPolicy::Allowed(const Principal& caller, std::string_view owner_id,
                           std::string_view project_id, Access access) const {
  if (caller.is_admin()) return true;
  if (!caller.node_id.empty()) return false;
  if (!caller.project_id.empty() && caller.project_id != project_id) return false;
  if (project_id.empty() || Find(project_id) == nullptr) return owner_id == caller.user_id;
  // A project's thing is the project's, not its owner's: the owner sees it as the project's owner.
  const std::optional<core::ProjectRole> role = RoleIn(caller, project_id);
  if (!role) return false;
  return access == Access::kRead || *role >= core::ProjectRole::kMember;
}

bool AccessPolicy::SeesProject(const Principal& caller, const core::Project& project) {
  if (!caller.project_id.empty() && caller.project_id != project.id) return false;
  return caller.is_admin() || project.members.contains(caller.user_id);
}

core::Result<std::string> AccessPolicy::FindProject(const Principal& caller,
                                                    std::string_view id) const {
  if (const core::Project* project = Find(id);
      project != nullptr && SeesProject(caller, *project)) {
    return project->id;
  }
  for (const auto& [project_id, project] : projects_) {
    if (project.name == id && SeesProject(caller, project)) return project_id;
  }
  return core::NotFoundError("you are in no project '" + std::string(id) +
                             "' (suanli projects list)");
}

core::Result<AccessPolicy::CreateScope> AccessPolicy::ScopeToCreateIn(
    const Principal& caller, std::string_view project) const {
  if (project.empty()) return CreateScope{"", caller.user_id};
  core::Result<std::string> found = FindProject(caller, project);
  if (!found.ok()) return found.status().WithContext("project");
  const core::Project& shown = projects_.at(*found);
  if (!Allowed(caller, shown.owner_id, shown.id, Access::kWrite)) {
    return core::PermissionDeniedError("project: you are a viewer of " + shown.name +
                                       "; its owner can make you a member");
  }
  return CreateScope{shown.id, shown.owner_id};
}

const core::Project* AccessPolicy::Find(std::string_view id) const {
  const auto it = projects_.find(std::string(id));
  return it == projects_.end() ? nullptr : &it->second;
}

core::Project& AccessPolicy::Put(core::Project project) {
  const std::string id = project.id;
  return projects_[id] = std::move(project);
}

}  // namespace suanli::server
