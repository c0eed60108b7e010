// Routes for an admin's nodes: the join tokens that let a node register, and the nodes themselves
// (cordon, uncordon, drain, delete).
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
using wire::JoinTokenView;
using wire::NodeView;

void ListJoinTokens(Call& call) {
  call.Respond(call.plane().ListJoinTokens(call.principal),
               [](const std::vector<core::JoinToken>& tokens) {
                 return ListOf("join_tokens", tokens, JoinTokenView);
               });
}

void CreateJoinToken(Call& call) {
  Result<json::object> body = ParseJsonObject(call.request.body);
  if (!body.ok()) return call.Respond(body.status());
  JsonFields fields(*body);
  std::string note;
  fields.String("note", &note, {.max_length = 256});
  if (Status status = fields.Finish(); !status.ok()) return call.Respond(status);
  call.Respond(
      call.plane().CreateJoinToken(call.principal, note),
      [](const std::pair<core::JoinToken, std::string>& created) {
        return json::object{{"join_token", JoinTokenView(created.first)},
                            {"secret", created.second}};
      },
      201);
}

void DeleteJoinToken(Call& call) {
  call.Respond(call.plane().DeleteJoinToken(call.principal, call.param(0)), JoinTokenView);
}

void ListNodes(Call& call) {
  call.Respond(call.plane().ListNodes(call.principal), [](const std::vector<core::Node>& nodes) {
    return ListOf("nodes", nodes, NodeView);
  });
}

void GetNode(Call& call) {
  call.Respond(call.plane().GetNode(call.principal, call.param(0)), NodeView);
}

void ActOnNode(Call& call, ControlPlane::NodeAction action) {
  call.Respond(call.plane().ActOnNode(call.principal, call.param(0), action), NodeView);
}

void CordonNode(Call& call) { ActOnNode(call, ControlPlane::NodeAction::kCordon); }

void UncordonNode(Call& call) { ActOnNode(call, ControlPlane::NodeAction::kUncordon); }

void DrainNode(Call& call) { ActOnNode(call, ControlPlane::NodeAction::kDrain); }

void DeleteNode(Call& call) {
  call.Respond(call.plane().DeleteNode(call.principal, call.param(0)), NodeView);
}

// clang-format off
constexpr Route kNodeRoutes[] = {
  {{"GET", "/v1/join-tokens", RouteAccess::kAdmin, "Join tokens for new nodes"}, ListJoinTokens},
  {{"POST", "/v1/join-tokens", RouteAccess::kAdmin, "Create a join token (its secret is shown once)"}, CreateJoinToken},
  {{"DELETE", "/v1/join-tokens/{id}", RouteAccess::kAdmin, "Delete a join token"}, DeleteJoinToken},
  {{"GET", "/v1/nodes", RouteAccess::kAdmin, "Nodes and their GPUs"}, ListNodes},
  {{"GET", "/v1/nodes/{id}", RouteAccess::kAdmin, "A node"}, GetNode},
  {{"POST", "/v1/nodes/{id}/cordon", RouteAccess::kAdmin, "Place no new pods on a node"}, CordonNode},
  {{"POST", "/v1/nodes/{id}/uncordon", RouteAccess::kAdmin, "Place pods on a node again"}, UncordonNode},
  {{"POST", "/v1/nodes/{id}/drain", RouteAccess::kAdmin, "Cordon a node and stop its pods"}, DrainNode},
  {{"DELETE", "/v1/nodes/{id}", RouteAccess::kAdmin, "Remove a node without pods"}, DeleteNode},
};
// clang-format on

}  // namespace

std::span<const Route> NodeRoutes() { return kNodeRoutes; }

}  // namespace suanli::server
