#include "server/project_documents.h"

#include <boost/json/serialize.hpp>

#include "wire/json_fields.h"
#include "wire/views.h"

namespace suanli::server {

namespace json = boost::json;

std::string_view ProjectRoleName(core::ProjectRole role) {
  switch (role) {
    case core::ProjectRole::kOwner:
      return "owner";
    case core::ProjectRole::kMember:
      return "member";
    case core::ProjectRole::kViewer:
      break;
  }
  return "viewer";
}

std::optional<core::ProjectRole> ProjectRoleNamed(std::string_view name) {
  for (core::ProjectRole role :
       {core::ProjectRole::kViewer, core::ProjectRole::kMember, core::ProjectRole::kOwner}) {
    if (ProjectRoleName(role) == name) return role;
  }
  return std::nullopt;
}

json::object ToDocument(const core::Project& project) {
  json::object members;
  for (const auto& [user_id, role] : project.members) members[user_id] = ProjectRoleName(role);
  return {{"id", project.id},
          {"name", project.name},
          {"owner_id", project.owner_id},
          {"members", std::move(members)},
          {"created_at", core::FormatTime(project.created_at)},
          {"spend_cap_per_hour_micros", project.spend_cap_per_hour.micros()},
          {"monthly_budget_micros", project.monthly_budget.micros()},
          {"budget_action", wire::BudgetActionName(project.budget_action)},
          {"budget_warned_month", project.budget_warned_month},
          {"budget_reached_month", project.budget_reached_month}};
}

core::Result<core::Project> ProjectFromDocument(const json::object& document) {
  constexpr wire::TextRule kText{.max_length = size_t{1} << 20};
  wire::JsonFields fields(document, wire::UnknownFields::kIgnore);
  core::Project project;
  fields.String("id", &project.id, kText);
  fields.String("name", &project.name, kText);
  fields.String("owner_id", &project.owner_id, kText);
  std::map<std::string, std::string> members;
  fields.StringMap("members", &members, size_t{1} << 16);
  fields.Time("created_at", &project.created_at);
  // Absent before projects' budgets: none.
  constexpr wire::MicrosRule kAnyMicros{.allow_negative = true};
  fields.Micros("spend_cap_per_hour_micros", &project.spend_cap_per_hour, kAnyMicros);
  fields.Micros("monthly_budget_micros", &project.monthly_budget, kAnyMicros);
  std::string action = "notify";
  fields.String("budget_action", &action, kText);
  project.budget_action = wire::ParseBudgetAction(action).value_or(core::BudgetAction::kNotify);
  fields.String("budget_warned_month", &project.budget_warned_month, kText);
  fields.String("budget_reached_month", &project.budget_reached_month, kText);
  for (const auto& [user_id, name] : members) {
    const std::optional<core::ProjectRole> role = ProjectRoleNamed(name);
    if (!role) fields.Fail("members: '" + name + "' is not a role");
    project.members[user_id] = role.value_or(core::ProjectRole::kViewer);
  }
  if (core::Status status = fields.Finish(); !status.ok()) {
    return core::InternalError("the stored project " + project.id +
                               " is corrupt: " + status.message());
  }
  return project;
}

std::string DocumentText(const core::Project& project) {
  return json::serialize(ToDocument(project));
}

}  // namespace suanli::server
