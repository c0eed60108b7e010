// Principal: who is calling, as the API authenticated them.
#pragma once

#include <string>

#include "core/domain.h"

namespace suanli::server {

// A user (maybe an admin) by API token, or a node's agent by its node token.
struct Principal {
  std::string user_id;  // empty for an agent
  core::Role role = core::Role::kUser;
  std::string node_id;     // empty for a person
  std::string token_id;    // the API token a person called with (for the audit log)
  bool read_only = false;  // that token may only read (GET and HEAD; Api refuses the rest)
  // A project token's project: the caller reaches that project's pods only (AccessPolicy), as the
  // member the user is, and never as an admin; Api refuses the routes of anything else.
  std::string project_id{};
  bool is_admin() const { return node_id.empty() && role == core::Role::kAdmin; }
};

}  // namespace suanli::server
