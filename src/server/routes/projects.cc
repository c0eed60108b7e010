// Routes for projects (teams): create, list, show, members and their roles, delete. A project's
// pods are created with "project" in the pod's body (pods.cc).
#include <algorithm>
#include <boost/json/value.hpp>
#include <iterator>
#include <string>
#include <vector>

#include "server/project_documents.h"
#include "server/routes/request_fields.h"
#include "server/routes/routes.h"
#include "server/routes/views.h"
#include "wire/views.h"

namespace suanli::server {
namespace {

namespace json = boost::json;
using core::Result;
using core::Status;

// Each member by id and by name: its members see who the others are (GET /v1/users/{id} is the
// admin's), and the console shows names rather than ids.
json::object ProjectView(const ControlPlane& plane, const core::Project& project) {
  json::array members;
  for (const auto& [user_id, role] : project.members) {
    members.emplace_back(json::object{
        {"user_id", user_id}, {"name", plane.UserName(user_id)}, {"role", ProjectRoleName(role)}});
  }
  return {{"id", project.id},
          {"name", project.name},
          {"owner_id", project.owner_id},
          {"members", std::move(members)},
          {"created_at", core::FormatTime(project.created_at)},
          {"spend_cap_per_hour_micros", project.spend_cap_per_hour.micros()},
          {"monthly_budget_micros", project.monthly_budget.micros()},
          {"budget_action", wire::BudgetActionName(project.budget_action)}};
}

// ProjectView for `call`'s control plane, as Call::Respond takes it.
auto ProjectViewFor(const Call& call) {
  return
      [&plane = call.plane()](const core::Project& project) { return ProjectView(plane, project); };
}

void CreateProject(Call& call) {
  Result<json::object> body = ParseJsonObject(call.request.body);
  if (!body.ok()) return call.Respond(body.status());
  JsonFields fields(*body);
  std::string name;
  fields.String("name", &name, {.required = true, .max_length = 64});
  if (Status status = fields.Finish(); !status.ok()) return call.Respond(status);
  call.Respond(call.plane().CreateProject(call.principal, name), ProjectViewFor(call), 201);
}

void ListProjects(Call& call) {
  call.Respond(call.plane().ListProjects(call.principal),
               [&call](const std::vector<core::Project>& projects) {
                 return ListOf("projects", projects, ProjectViewFor(call));
               });
}

void GetProject(Call& call) {
  call.Respond(call.plane().GetProject(call.principal, call.param(0)), ProjectViewFor(call));
}

void SetMember(Call& call) {
  Result<json::object> body = ParseJsonObject(call.request.body);
  if (!body.ok()) return call.Respond(body.status());
  JsonFields fields(*body);
  std::string role_name;
  fields.String("role", &role_name, {.required = true, .max_length = 16});
  if (Status status = fields.Finish(); !status.ok()) return call.Respond(status);
  const std::optional<core::ProjectRole> role = ProjectRoleNamed(role_name);
  if (!role) {
    return call.Respond(core::InvalidArgumentError(
        "role: member (creates and runs the project's pods) or viewer (sees them), not '" +
        role_name + "'"));
  }
  call.Respond(call.plane().SetProjectMember(call.principal, call.param(0), call.param(1), *role),
               ProjectViewFor(call));
}

void RemoveMember(Call& call) {
  call.Respond(call.plane().RemoveProjectMember(call.principal, call.param(0), call.param(1)),
               ProjectViewFor(call));
}

// Any of the three: the $/h cap and the monthly budget (0: none), and the budget's action.
void SetBudget(Call& call) {
  Result<json::object> body = ParseJsonObject(call.request.body);
  if (!body.ok()) return call.Respond(body.status());
  JsonFields fields(*body);
  ControlPlane::ProjectBudgetChange change;
  if (body->contains("spend_cap_per_hour_micros")) {
    fields.Micros("spend_cap_per_hour_micros", &change.spend_cap_per_hour.emplace());
  }
  if (body->contains("monthly_budget_micros")) {
    fields.Micros("monthly_budget_micros", &change.monthly_budget.emplace());
  }
  change.action = ReadBudgetAction(fields);
  if (Status status = fields.Finish(); !status.ok()) return call.Respond(status);
  if (!change.spend_cap_per_hour && !change.monthly_budget && !change.action) {
    return call.Respond(core::InvalidArgumentError(
        "give spend_cap_per_hour_micros, monthly_budget_micros or action (0: none)"));
  }
  call.Respond(call.plane().SetProjectBudget(call.principal, call.param(0), change),
               ProjectViewFor(call));
}

void DeleteProject(Call& call) {
  call.Respond(call.plane().DeleteProject(call.principal, call.param(0)), ProjectViewFor(call));
}

// clang-format off
constexpr Route kProjectRoutes[] = {
  {{"GET", "/v1/projects", RouteAccess::kUser, "The projects you are a member of (an admin: all)"}, ListProjects},
  {{"POST", "/v1/projects", RouteAccess::kUser, "Create a project you own: its pods bill your balance"}, CreateProject},
  {{"GET", "/v1/projects/{id}", RouteAccess::kUser, "A project and its members"}, GetProject},
  {{"DELETE", "/v1/projects/{id}", RouteAccess::kUser, "Delete a project (its owner; its pods terminated)"}, DeleteProject},
  {{"PUT", "/v1/projects/{id}/members/{user}", RouteAccess::kUser, "Make a user a member or viewer (the owner)"}, SetMember},
  {{"DELETE", "/v1/projects/{id}/members/{user}", RouteAccess::kUser, "Remove a member (the owner), or leave"}, RemoveMember},
  {{"PUT", "/v1/projects/{id}/budget", RouteAccess::kUser, "Set a project's $/h cap, monthly budget and its action (the owner)"}, SetBudget},
};
// clang-format on

}  // namespace

std::span<const Route> ProjectRoutes() { return kProjectRoutes; }

bool ProjectTokenReaches(const RouteInfo& route) {
  const std::string_view pattern = route.pattern;
  if (pattern == "/v1/pods" || pattern.starts_with("/v1/pods/")) return true;
  if (pattern == "/v1/advise") return true;  // a POST that changes nothing
  if (route.method != "GET" && route.method != "HEAD") return false;
  static constexpr std::string_view kReadable[] = {
      "/v1/projects", "/v1/projects/{id}", "/v1/users/{id}", "/v1/gpus",
      "/v1/models",   "/v1/availability",  "/v1/templates",  "/v1/templates/{id}"};
  return std::ranges::find(kReadable, pattern) != std::end(kReadable);
}

}  // namespace suanli::server
