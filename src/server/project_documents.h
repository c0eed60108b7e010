// The store's documents of projects (documents.h is the format's contract: every field, forgiving
// only of a field an older version did not write), and the names of members' roles, which the API
// uses too.
#pragma once

#include <boost/json/object.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "core/domain.h"
#include "core/status.h"

namespace suanli::server {

std::string_view ProjectRoleName(core::ProjectRole role);  // "viewer", "member", "owner"
std::optional<core::ProjectRole> ProjectRoleNamed(std::string_view name);

boost::json::object ToDocument(const core::Project& project);
core::Result<core::Project> ProjectFromDocument(const boost::json::object& document);
std::string DocumentText(const core::Project& project);

}  // namespace suanli::server
