// Routes for a person's credentials: API tokens (a secret shown once) and SSH public keys.
#include <boost/json/value.hpp>
#include <string>
#include <utility>
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

void ListTokens(Call& call) {
  call.Respond(call.plane().ListTokens(call.principal),
               [](const std::vector<core::ApiToken>& tokens) {
                 return ListOf("tokens", tokens, wire::ApiTokenView);
               });
}

void CreateToken(Call& call) {
  Result<json::object> body = ParseJsonObject(call.request.body);
  if (!body.ok()) return call.Respond(body.status());
  JsonFields fields(*body);
  std::string name, project;
  bool read_only = false;
  fields.String("name", &name, {.required = true, .max_length = 64});
  fields.Bool("read_only", &read_only);
  fields.String("project", &project, {.max_length = 64});
  if (Status status = fields.Finish(); !status.ok()) return call.Respond(status);
  call.Respond(
      call.plane().CreateToken(call.principal, name, {}, read_only, project),
      [](const std::pair<core::ApiToken, std::string>& created) {
        return json::object{{"token", wire::ApiTokenView(created.first)},
                            {"secret", created.second}};
      },
      201);
}

void RevokeToken(Call& call) {
  call.Respond(call.plane().RevokeToken(call.principal, call.param(0)), wire::ApiTokenView);
}

void ListSshKeys(Call& call) {
  call.Respond(call.plane().ListSshKeys(call.principal), [](const std::vector<core::SshKey>& keys) {
    return ListOf("ssh_keys", keys, wire::SshKeyView);
  });
}

void AddSshKey(Call& call) {
  Result<json::object> body = ParseJsonObject(call.request.body);
  if (!body.ok()) return call.Respond(body.status());
  JsonFields fields(*body);
  std::string name, key;
  fields.String("name", &name, {.required = true, .max_length = 64});
  fields.String("public_key", &key, {.required = true, .max_length = 16384});
  if (Status status = fields.Finish(); !status.ok()) return call.Respond(status);
  call.Respond(call.plane().AddSshKey(call.principal, name, key), wire::SshKeyView, 201);
}

void DeleteSshKey(Call& call) {
  call.Respond(call.plane().DeleteSshKey(call.principal, call.param(0)), wire::SshKeyView);
}

// clang-format off
constexpr Route kTokenAndKeyRoutes[] = {
  {{"GET", "/v1/tokens", RouteAccess::kUser, "Your API tokens"}, ListTokens},
  {{"POST", "/v1/tokens", RouteAccess::kUser, "Create an API token (its secret is shown once)"}, CreateToken},
  {{"DELETE", "/v1/tokens/{id}", RouteAccess::kUser, "Revoke an API token"}, RevokeToken},
  {{"GET", "/v1/ssh-keys", RouteAccess::kUser, "Your SSH public keys"}, ListSshKeys},
  {{"POST", "/v1/ssh-keys", RouteAccess::kUser, "Register an SSH public key"}, AddSshKey},
  {{"DELETE", "/v1/ssh-keys/{id}", RouteAccess::kUser, "Remove an SSH public key"}, DeleteSshKey},
};
// clang-format on

}  // namespace

std::span<const Route> TokenAndKeyRoutes() { return kTokenAndKeyRoutes; }

}  // namespace suanli::server
