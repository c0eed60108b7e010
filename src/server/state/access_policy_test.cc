#include "server/state/access_policy.h"

#include <gtest/gtest.h>

#include <vector>

namespace suanli::server {
namespace {

using Access = AccessPolicy::Access;
using core::ProjectRole;

// A project "vision" owned by owen, with mia a member and vic a viewer; "other" owned by olga.
AccessPolicy Projects() {
  AccessPolicy policy;
  core::Project vision;
  vision.id = "prj_vision";
  vision.name = "vision";
  vision.owner_id = "owen";
  vision.members = {
      {"owen", ProjectRole::kOwner}, {"mia", ProjectRole::kMember}, {"vic", ProjectRole::kViewer}};
  policy.Put(vision);
  core::Project other;
  other.id = "prj_other";
  other.name = "other";
  other.owner_id = "olga";
  other.members = {{"olga", ProjectRole::kOwner}, {"mia", ProjectRole::kViewer}};
  policy.Put(other);
  return policy;
}

Principal Person(std::string id, std::string project_token = "") {
  Principal person;
  person.user_id = std::move(id);
  person.project_id = std::move(project_token);
  return person;
}

// The whole matrix: caller (role, token kind) x thing (whose, in which project) x read/write.
TEST(AccessPolicyTest, TheRoleMatrix) {
  const AccessPolicy policy = Projects();
  Principal admin = Person("root");
  admin.role = core::Role::kAdmin;
  Principal agent;
  agent.node_id = "node_1";
  struct Thing {
    const char* name;
    const char* owner;
    const char* project;
  };
  const Thing mias_own{"mia's own", "mia", ""};
  const Thing visions{"vision's", "owen", "prj_vision"};
  const Thing others{"other's", "olga", "prj_other"};
  const Thing of_a_deleted_project{"of a deleted project", "mia", "prj_gone"};
  struct Row {
    const char* who;
    Principal caller;
    Thing thing;
    bool read;
    bool write;
  };
  const std::vector<Row> rows = {
      // A person and their own things; nobody else's but through a project.
      {"mia", Person("mia"), mias_own, true, true},
      {"owen", Person("owen"), mias_own, false, false},
      {"mia", Person("mia"), of_a_deleted_project, true, true},
      {"owen", Person("owen"), of_a_deleted_project, false, false},
      // A project's things by role: the owner and a member change them, a viewer reads them.
      {"owen (owner)", Person("owen"), visions, true, true},
      {"mia (member)", Person("mia"), visions, true, true},
      {"vic (viewer)", Person("vic"), visions, true, false},
      {"olga (not in it)", Person("olga"), visions, false, false},
      {"mia (viewer of other)", Person("mia"), others, true, false},
      // Project tokens reach their project's things only, as the member their user is.
      {"mia's vision token", Person("mia", "prj_vision"), visions, true, true},
      {"mia's vision token", Person("mia", "prj_vision"), mias_own, false, false},
      {"mia's vision token", Person("mia", "prj_vision"), others, false, false},
      {"vic's vision token", Person("vic", "prj_vision"), visions, true, false},
      {"mia's other token", Person("mia", "prj_other"), visions, false, false},
      {"mia's other token", Person("mia", "prj_other"), others, true, false},
      // An admin reaches everything; a node's agent none of a person's things.
      {"admin", admin, mias_own, true, true},
      {"admin", admin, visions, true, true},
      {"admin", admin, of_a_deleted_project, true, true},
      {"agent", agent, mias_own, false, false},
      {"agent", agent, visions, false, false},
  };
  for (const Row& row : rows) {
    EXPECT_EQ(policy.Allowed(row.caller, row.thing.owner, row.thing.project, Access::kRead),
              row.read)
        << row.who << " reading " << row.thing.name;
    EXPECT_EQ(policy.Allowed(row.caller, row.thing.owner, row.thing.project, Access::kWrite),
              row.write)
        << row.who << " changing " << row.thing.name;
  }
}

TEST(AccessPolicyTest, WhoSeesAProjectAndFindsItByIdOrName) {
  const AccessPolicy policy = Projects();
  EXPECT_EQ(policy.FindProject(Person("vic"), "vision").value(), "prj_vision");
  EXPECT_EQ(policy.FindProject(Person("vic"), "prj_vision").value(), "prj_vision");
  const auto hidden = policy.FindProject(Person("olga"), "vision");
  EXPECT_EQ(hidden.status().code(), core::StatusCode::kNotFound);
  EXPECT_NE(hidden.status().message().find("suanli projects list"), std::string::npos);
  EXPECT_EQ(policy.FindProject(Person("mia", "prj_other"), "vision").status().code(),
            core::StatusCode::kNotFound);
  Principal admin = Person("root");
  admin.role = core::Role::kAdmin;
  EXPECT_EQ(policy.FindProject(admin, "other").value(), "prj_other");
  EXPECT_EQ(policy.RoleIn(Person("mia"), "prj_vision"), ProjectRole::kMember);
  EXPECT_EQ(policy.RoleIn(Person("olga"), "prj_vision"), std::nullopt);
  EXPECT_EQ(policy.RoleIn(Person("mia"), "prj_gone"), std::nullopt);
}

TEST(AccessPolicyTest, WhatACreateBelongsToAndWhoPaysForIt) {
  const AccessPolicy policy = Projects();
  const auto own = policy.ScopeToCreateIn(Person("mia"), "");
  EXPECT_EQ(own->project_id, "");
  EXPECT_EQ(own->payer_id, "mia");
  const auto team = policy.ScopeToCreateIn(Person("mia"), "vision");
  EXPECT_EQ(team->project_id, "prj_vision");
  EXPECT_EQ(team->payer_id, "owen");  // a project's things bill its owner
  const auto viewer = policy.ScopeToCreateIn(Person("vic"), "vision");
  EXPECT_EQ(viewer.status().code(), core::StatusCode::kPermissionDenied);
  EXPECT_NE(viewer.status().message().find("you are a viewer of vision"), std::string::npos);
  EXPECT_EQ(policy.ScopeToCreateIn(Person("olga"), "vision").status().code(),
            core::StatusCode::kNotFound);
}

}  // namespace
}  // namespace suanli::server
