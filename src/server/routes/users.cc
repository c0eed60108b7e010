// Routes for users: an admin creates them and gives credits; a person reads themselves and sets
// their spend cap.
#include <boost/json/value.hpp>
#include <string>
#include <vector>

#include "server/routes/request_fields.h"
#include "server/routes/routes.h"
#include "server/routes/views.h"
#include "wire/json_fields.h"
#include "wire/views.h"

namespace suanli::server {
namespace {

namespace json = boost::json;
using core::Result;
using core::Status;

void CreateUser(Call& call) {
  Result<json::object> body = ParseJsonObject(call.request.body);
  if (!body.ok()) return call.Respond(body.status());
  JsonFields fields(*body);
  std::string name, role = "user";
  core::Money credits;
  fields.String("name", &name, {.required = true, .max_length = 64});
  fields.String("role", &role, {.max_length = 16});
  fields.Micros("credits_micros", &credits);
  if (role != "user" && role != "admin") fields.Fail("role: must be \"user\" or \"admin\"");
  if (Status status = fields.Finish(); !status.ok()) return call.Respond(status);
  Result<Written<core::User>> user = call.plane().CreateUser(
      call.principal, name, role == "admin" ? core::Role::kAdmin : core::Role::kUser, credits);
  if (!user.ok()) return call.Respond(user.status());
  auto token = call.plane().CreateToken(call.principal, "first", user->value.id);
  if (!token.ok()) return call.Respond(token.status());
  call.Respond(json::value(json::object{{"user", wire::UserView(user->value)},
                                        {"token", token->value.second}}),
               token->sequence, 201);
}

void ListUsers(Call& call) {
  call.Respond(call.plane().ListUsers(call.principal), [](const std::vector<core::User>& users) {
    return ListOf("users", users, wire::UserView);
  });
}

void GetUser(Call& call) {
  call.Respond(call.plane().GetUser(call.principal, call.param(0)), wire::UserView);
}

void AddCredits(Call& call) {
  Result<json::object> body = ParseJsonObject(call.request.body);
  if (!body.ok()) return call.Respond(body.status());
  JsonFields fields(*body);
  core::Money amount;
  std::string note;
  fields.Micros("amount_micros", &amount, {.required = true, .allow_negative = true});
  fields.String("note", &note, {.max_length = 256});
  if (Status status = fields.Finish(); !status.ok()) return call.Respond(status);
  call.Respond(call.plane().AddCredits(call.principal, call.param(0), amount, note),
               wire::UserView);
}

void UpdateMe(Call& call) {
  Result<json::object> body = ParseJsonObject(call.request.body);
  if (!body.ok()) return call.Respond(body.status());
  JsonFields fields(*body);
  core::Money cap;
  fields.Micros("spend_cap_per_hour_micros", &cap, {.required = true});
  if (Status status = fields.Finish(); !status.ok()) return call.Respond(status);
  call.Respond(call.plane().SetSpendCap(call.principal, cap), wire::UserView);
}

void SetBudget(Call& call) {
  Result<json::object> body = ParseJsonObject(call.request.body);
  if (!body.ok()) return call.Respond(body.status());
  JsonFields fields(*body);
  core::Money monthly;
  fields.Micros("monthly_budget_micros", &monthly, {.required = true});
  const core::BudgetAction action = ReadBudgetAction(fields).value_or(core::BudgetAction::kNotify);
  if (Status status = fields.Finish(); !status.ok()) return call.Respond(status);
  call.Respond(call.plane().SetBudget(call.principal, monthly, action), wire::UserView);
}

void SetQuota(Call& call) {
  Result<json::object> body = ParseJsonObject(call.request.body);
  if (!body.ok()) return call.Respond(body.status());
  JsonFields fields(*body);
  QuotaChange quota;
  fields.OptionalInt("max_pods", &quota.max_pods, {0, 1'000'000'000});
  fields.OptionalInt("max_pending_pods", &quota.max_pending_pods, {0, 1'000'000'000});
  fields.OptionalInt("max_endpoints", &quota.max_endpoints, {0, 1'000'000});
  if (!quota.max_pods && !quota.max_pending_pods && !quota.max_endpoints) {
    fields.Fail(
        "give one or more of max_pods, max_pending_pods and max_endpoints (0: the default)");
  }
  if (Status status = fields.Finish(); !status.ok()) return call.Respond(status);
  call.Respond(call.plane().SetQuota(call.principal, call.param(0), quota), wire::UserView);
}

// clang-format off
constexpr Route kUserRoutes[] = {
  {{"POST", "/v1/users", RouteAccess::kAdmin, "Create a user (and a first API token)"}, CreateUser},
  {{"GET", "/v1/users", RouteAccess::kAdmin, "List users"}, ListUsers},
  {{"GET", "/v1/users/{id}", RouteAccess::kUser, "A user ('me' for yourself; others: admin)"}, GetUser},
  {{"POST", "/v1/users/{id}/credits", RouteAccess::kAdmin, "Give credits to a user"}, AddCredits},
  {{"PUT", "/v1/users/{id}/quota", RouteAccess::kAdmin, "Set a user's pod quotas (0: the default)"}, SetQuota},
  {{"PATCH", "/v1/users/me", RouteAccess::kUser, "Set your spend cap"}, UpdateMe},
  {{"PUT", "/v1/users/me/budget", RouteAccess::kUser, "Set your monthly budget and what happens when it is reached"}, SetBudget},
};
// clang-format on

}  // namespace

std::span<const Route> UserRoutes() { return kUserRoutes; }

}  // namespace suanli::server
