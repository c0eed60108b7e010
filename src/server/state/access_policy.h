// AccessPolicy: the projects, and the one rule for who may read or change what a person or a
// project owns (pods, volumes, snapshots, endpoints and their jobs).
//
// A person's own things are theirs; a project's are its members' as their role allows (a viewer
// reads, a member and the owner change too); an admin's, everything; a node's agent, none of
// these; a project token reaches its project's things only, as the member its user is, never as an
// admin. The control plane asks it before each read and change, and answers NOT_FOUND for what the
// caller may not see and PERMISSION_DENIED for what they may see but not change.
//
// Thread-compatible: the control plane's mutex is held around every call (control_plane.h says
// why there is one lock). No I/O.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "core/domain.h"
#include "core/status.h"
#include "server/state/principal.h"

namespace suanli::server {

class AccessPolicy {
 public:
  enum class Access { kRead, kWrite };

  // Where a new pod, volume or endpoint goes, and who pays for it.
  struct CreateScope {
    std::string project_id;  // "" for the caller's own
    std::string payer_id;    // the caller, or the project's owner
  };

  // The caller's role in the project; nullopt when not a member (or no such project).
  std::optional<core::ProjectRole> RoleIn(const Principal& caller,
                                          std::string_view project_id) const;
  // Whether the caller may `access` a thing of `owner_id` in `project_id` ("" for none). A deleted
  // project's things (terminated pods) are their owner's again.
  bool Allowed(const Principal& caller, std::string_view owner_id, std::string_view project_id,
               Access access) const;
  // Whether the caller sees the project: a member, or an admin; a project token only its own.
  static bool SeesProject(const Principal& caller, const core::Project& project);
  // The id of a project the caller sees, by id or name; NOT_FOUND else.
  core::Result<std::string> FindProject(const Principal& caller, std::string_view id) const;
  // The project `project` (id or name) where the caller may create things (a member or its
  // owner), paid by its owner; or, for "", the caller's own. NOT_FOUND for a project they are not
  // in, PERMISSION_DENIED for a viewer.
  core::Result<CreateScope> ScopeToCreateIn(const Principal& caller,
                                            std::string_view project) const;

  const std::map<std::string, core::Project>& projects() const { return projects_; }
  // The budget routine records each month's warning and action in the project itself.
  std::map<std::string, core::Project>& mutable_projects() { return projects_; }
  const core::Project* Find(std::string_view id) const;
  core::Project* Find(std::string_view id) {
    return const_cast<core::Project*>(std::as_const(*this).Find(id));
  }
  core::Project& at(const std::string& id) { return projects_.at(id); }
  const core::Project& at(const std::string& id) const { return projects_.at(id); }
  core::Project& Put(core::Project project);
  void Erase(const std::string& id) { projects_.erase(id); }

 private:
  std::map<std::string, core::Project> projects_;
};

}  // namespace suanli::server
