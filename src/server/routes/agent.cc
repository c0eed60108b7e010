// Routes of the node agent's protocol: it registers with a join token, reports its node's
// resources, long-polls for the pods it should run, and reports each pod's actual state.
#include <fmt/format.h>

#include <boost/json/value.hpp>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "server/routes/request_fields.h"
#include "server/routes/routes.h"
#include "server/routes/views.h"
#include "server/routes/volumes.h"
#include "wire/agent_protocol.h"
#include "wire/views.h"

namespace suanli::server {
namespace {

namespace json = boost::json;
using core::Result;
using core::Status;

void RegisterNode(Call& call) {
  // Who is calling comes first: a stranger learns nothing about what a good body looks like.
  if (Status token = call.plane().CheckJoinToken(call.bearer); !token.ok()) {
    return call.Respond(token);
  }
  Result<NodeReport> report =
      wire::DecodeNodeReport(call.request.body, wire::NodeReportFor::kRegistration);
  if (!report.ok()) return call.Respond(report.status());
  if (report->address.empty()) report->address = call.request.remote_address;
  Result<Written<std::pair<core::Node, std::string>>> registered =
      call.plane().RegisterNode(call.bearer, std::move(*report));
  if (!registered.ok()) return call.Respond(registered.status());
  const auto& [node, token] = registered->value;
  call.Respond(Written<std::string>{wire::EncodeRegistration(node, token), registered->sequence},
               201);
}

void Heartbeat(Call& call) {
  Result<NodeReport> report =
      wire::DecodeNodeReport(call.request.body, wire::NodeReportFor::kHeartbeat);
  if (!report.ok()) return call.Respond(report.status());
  if (report->address.empty()) report->address = call.request.remote_address;
  call.Respond(call.plane().Heartbeat(call.principal, std::move(*report)), wire::NodeView);
}

void AgentPods(Call& call) {
  int64_t after = -1;
  int64_t wait_s = 0;
  // Absent: the default; present: an integer from `min` to `max` (after -1: none seen yet).
  const auto number = [&](std::string_view name, int64_t* out, int64_t min, int64_t max) {
    const std::optional<std::string> text = call.request.QueryValue(name);
    if (!text) return true;
    const std::optional<int64_t> value = ParseInteger(*text, min, max);
    if (value) *out = *value;
    return value.has_value();
  };
  if (!number("after", &after, -1, INT64_MAX) ||
      !number("wait_s", &wait_s, 0, call.plane().long_poll_limit_s())) {
    return call.Respond(core::InvalidArgumentError(fmt::format(
        "after must be a generation and wait_s 0 to {}", call.plane().long_poll_limit_s())));
  }
  auto shared = std::make_shared<Call>(std::move(call));
  auto answer = [shared] {
    Result<DesiredPods> desired = shared->plane().DesiredFor(shared->principal);
    if (!desired.ok()) return shared->Respond(desired.status());
    wire::DesiredPods message{.generation = desired->generation, .pods = {}};
    for (core::Pod& pod : desired->pods) {
      // Copied: the holder's other pods on this node need the same keys.
      std::vector<std::string> keys = desired->ssh_keys[KeyHolder(pod)];
      message.pods.push_back({.pod = std::move(pod), .ssh_keys = std::move(keys)});
    }
    // A binding is durable before an agent sees it.
    shared->Respond(Written<std::string>{wire::EncodeDesiredPods(message, shared->clock().Now()),
                                         shared->queue().submitted()});
  };
  shared->plane().WhenNodeChanges(shared->principal, after,
                                  shared->clock().Now() + std::chrono::seconds(wait_s),
                                  std::move(answer));
}

void ReportPod(Call& call) {
  Result<PodReport> report = wire::DecodePodReport(call.request.body);
  if (!report.ok()) return call.Respond(report.status());
  Result<Written<core::Pod>> reported =
      call.plane().ReportPod(call.principal, call.param(0), *report);
  if (!reported.ok()) return call.Respond(reported.status());
  // A pod that runs after a move: the copy on the move's source node may go.
  if (report->state == core::PodState::kRunning) SendVolumeRemovals(call.plane(), call.relay());
  call.Respond(boost::json::value(PodView(call, reported->value)), reported->sequence);
}

// clang-format off
constexpr Route kAgentRoutes[] = {
  {{"POST", "/v1/agent/register", RouteAccess::kJoin, "Agent: register a node"}, RegisterNode},
  {{"POST", "/v1/agent/heartbeat", RouteAccess::kNode, "Agent: report the node's resources"}, Heartbeat},
  {{"GET", "/v1/agent/pods", RouteAccess::kNode, "Agent: the node's desired pods (?after=GEN&wait_s=N long-polls)"}, AgentPods},
  {{"POST", "/v1/agent/pods/{id}/status", RouteAccess::kNode, "Agent: report a pod's actual state"}, ReportPod},
};
// clang-format on

}  // namespace

std::span<const Route> AgentRoutes() { return kAgentRoutes; }

}  // namespace suanli::server
