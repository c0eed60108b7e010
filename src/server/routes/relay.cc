// Routes relayed to a pod's node (relay.h): a user's request for the pod's logs or for HTTP to one
// of its ports is queued for the node, whose agent takes it with a long poll and posts the answer
// back, which goes to the user's waiting request.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "net/proxy_headers.h"
#include "server/routes/request_fields.h"
#include "server/routes/routes.h"
#include "server/routes/views.h"
#include "server/routes/volumes.h"
#include "wire/agent_protocol.h"
#include "wire/relay_protocol.h"

namespace suanli::server {
namespace {

using core::Result;
using core::Status;

// What follows "/v1/pods/{id}/proxy/{port}" in the target as sent (still percent-encoded, so the
// pod sees what the user wrote), with the query: "/" at least.
std::string PodTarget(std::string_view target) {
  const size_t question = target.find('?');
  std::string_view path = target.substr(0, question);
  for (int segment = 0; segment < 5; ++segment) {  // v1, pods, {id}, proxy, {port}
    const size_t slash = path.find('/', 1);
    path = slash == std::string_view::npos ? std::string_view() : path.substr(slash);
  }
  std::string pod_target = path.empty() ? "/" : std::string(path);
  if (question != std::string_view::npos) pod_target += target.substr(question);
  return pod_target;
}

std::string PortList(const std::vector<core::PortSpec>& ports) {
  std::string list;
  for (const core::PortSpec& port : ports) {
    if (!list.empty()) list += ", ";
    list += std::to_string(port.container_port) + "/" + port.protocol;
  }
  return list;
}

// A pod's pages are served from the console's origin, so they run in a sandbox with an origin of
// their own: a page in a pod cannot read the console's stored API token or call the API as its
// viewer. (Browsers combine it with any policy the pod sends; the stricter wins.)
constexpr std::string_view kPodPageSandbox =
    "sandbox allow-scripts allow-forms allow-popups allow-downloads allow-modals";

// Every pod is served from the console's origin: a pod's cookies are kept to its own paths, so that
// one pod cannot set a cookie for another pod's pages (or the console's), nor replace a pod link.
void ConfineCookies(net::Headers& headers, std::string_view prefix) {
  for (auto header = headers.begin(); header != headers.end();) {
    if (header->first != "set-cookie") {
      ++header;
      continue;
    }
    std::optional<std::string> confined =
        net::ConfinedSetCookie(header->second, prefix, {kPodLinkName});
    if (!confined) {
      header = headers.erase(header);
      continue;
    }
    header->second = std::move(*confined);
    ++header;
  }
}

void RelayToNode(Call& call, const PodPlacement& placement, RelayRequest request) {
  if (!placement.node_reachable) {
    return call.Respond(
        core::UnavailableError("node " + placement.node_name + " of pod " + placement.pod.id +
                               " is unreachable (no heartbeat lately); its pods keep "
                               "running and can be reached again once it is back"));
  }
  auto shared = std::make_shared<Call>(std::move(call));
  const bool pod_page = request.kind == RelayRequest::Kind::kHttp;
  const Status submitted = shared->relay().Submit(
      placement.pod.node_id, placement.node_name, std::move(request),
      [shared, pod_page,
       prefix = "/v1/pods/" + placement.pod.id + "/proxy/"](net::HttpResponse answer) {
        if (pod_page) {
          answer.headers.emplace_back("content-security-policy", std::string(kPodPageSandbox));
          ConfineCookies(answer.headers, prefix);
        }
        shared->Respond(std::move(answer));
      });
  if (!submitted.ok()) shared->Respond(submitted);
}

void PodLogs(Call& call) {
  RelayRequest request;
  request.kind = RelayRequest::Kind::kLogs;
  if (const std::optional<std::string> tail = call.request.QueryValue("tail")) {
    const std::optional<int64_t> lines = ParseInteger(*tail, 0, 1'000'000);
    if (!lines) {
      return call.Respond(
          core::InvalidArgumentError("tail: must be a number of lines, 0 to 1000000"));
    }
    request.tail = static_cast<int>(*lines);
  }
  if (const std::optional<std::string> since = call.request.QueryValue("since")) {
    if (Result<core::TimePoint> parsed = core::ParseTime(*since); !parsed.ok()) {
      return call.Respond(core::InvalidArgumentError("since: " + parsed.status().message()));
    }
    request.since = *since;
  }
  if (const std::optional<std::string> timestamps = call.request.QueryValue("timestamps")) {
    if (*timestamps != "true" && *timestamps != "false") {
      return call.Respond(core::InvalidArgumentError("timestamps: must be true or false"));
    }
    request.timestamps = *timestamps == "true";
  }
  Result<PodPlacement> placement =
      call.plane().Placement(call.principal, call.param(0), ControlPlane::Reach::kLogs);
  if (!placement.ok()) return call.Respond(placement.status());
  const core::Pod& pod = placement->pod;
  if (pod.node_id.empty() && !pod.last_logs.empty()) {
    // Its container is gone (stopped, exited, failed): the end of its output, as its agent saved
    // it then.
    std::optional<core::TimePoint> since;
    if (!request.since.empty()) since = *core::ParseTime(request.since);
    net::HttpResponse saved;
    saved.status = 200;
    saved.content_type = "text/plain; charset=utf-8";
    saved.headers.emplace_back("X-Suanli-Logs-Saved", "true");
    saved.body = wire::SelectLogLines(pod.last_logs, request.tail, since, request.timestamps);
    return call.Respond(std::move(saved));
  }
  if (pod.node_id.empty()) {
    return call.Respond(core::FailedPreconditionError(
        "pod " + pod.id + " is " + std::string(core::PodStateName(pod.state)) +
        " and on no node, so it has no logs" +
        (pod.ran ? std::string(": its node kept none of its last container's")
                 : std::string(": it has not run yet"))));
  }
  request.pod_id = pod.id;
  RelayToNode(call, *placement, std::move(request));
}

void ProxyToPod(Call& call) {
  const std::optional<int64_t> port = ParseInteger(call.param(1), 1, 65535);
  if (!port) {
    return call.Respond(core::InvalidArgumentError(
        "port: must be one of the pod's ports, e.g. /v1/pods/ID/proxy/8888/"));
  }
  Result<PodPlacement> placement =
      call.plane().Placement(call.principal, call.param(0), ControlPlane::Reach::kPorts);
  if (!placement.ok()) return call.Respond(placement.status());
  const core::Pod& pod = placement->pod;
  const bool has_port =
      std::any_of(pod.ports.begin(), pod.ports.end(),
                  [&](const core::PortSpec& spec) { return spec.container_port == *port; });
  if (!has_port) {
    return call.Respond(core::InvalidArgumentError(
        "port " + std::to_string(*port) + " is not one of pod " + pod.id + "'s ports" +
        (pod.ports.empty() ? " (it has none)" : " (" + PortList(pod.ports) + ")")));
  }
  if (pod.state != core::PodState::kRunning || pod.node_id.empty()) {
    return call.Respond(core::FailedPreconditionError(
        "pod " + pod.id + " is " + std::string(core::PodStateName(pod.state)) +
        "; only a running pod's ports can be reached"));
  }
  call.plane().NoteProxyTraffic(pod.id);  // a sign of use, for the idle rule
  RelayRequest request;
  request.kind = RelayRequest::Kind::kHttp;
  request.pod_id = pod.id;
  request.port = static_cast<int>(*port);
  request.method = call.request.method;
  request.target = PodTarget(call.request.target);
  // Never the user's suanli token: the pod is not to act as its owner. Host and the framing are
  // the agent's connection's own.
  request.headers = net::EndToEndHeaders(
      call.request.headers, {"authorization", "host", "content-length", "x-forwarded-for",
                             "x-forwarded-host", "x-forwarded-proto", "x-forwarded-prefix"});
  // Nor the pod link's cookie; the pod's own cookies (Jupyter's) pass.
  for (auto header = request.headers.begin(); header != request.headers.end();) {
    if (header->first == "cookie")
      header->second = net::WithoutCookie(header->second, kPodLinkName);
    header = header->first == "cookie" && header->second.empty() ? request.headers.erase(header)
                                                                 : header + 1;
  }
  // What a web app behind a path prefix needs to write its own links.
  std::string forwarded_for = call.request.Header("x-forwarded-for").value_or("");
  if (!forwarded_for.empty()) forwarded_for += ", ";
  request.headers.emplace_back("x-forwarded-for", forwarded_for + call.request.remote_address);
  if (const std::optional<std::string> host = call.request.Header("host")) {
    request.headers.emplace_back("x-forwarded-host", *host);
  }
  request.headers.emplace_back("x-forwarded-proto", "http");
  request.headers.emplace_back("x-forwarded-prefix",
                               "/v1/pods/" + pod.id + "/proxy/" + std::to_string(*port));
  request.body = std::move(call.request.body);
  RelayToNode(call, *placement, std::move(request));
}

void AgentRequests(Call& call) {
  constexpr auto kMaxPerPoll = static_cast<int64_t>(wire::kMaxRelayRequestsPerPoll);
  std::optional<int64_t> wait_s = 0;
  std::optional<int64_t> max = 16;
  if (const std::optional<std::string> text = call.request.QueryValue("wait_s")) {
    wait_s = ParseInteger(*text, 0, call.plane().long_poll_limit_s());
  }
  if (const std::optional<std::string> text = call.request.QueryValue("max")) {
    max = ParseInteger(*text, 1, kMaxPerPoll);
  }
  if (!wait_s || !max) {
    return call.Respond(core::InvalidArgumentError(fmt::format(
        "wait_s must be 0 to {} and max 1 to {}", call.plane().long_poll_limit_s(), kMaxPerPoll)));
  }
  SendStorageWork(call.plane(), call.relay(), call.principal.node_id);
  auto shared = std::make_shared<Call>(std::move(call));
  shared->relay().Poll(shared->principal.node_id,
                       shared->clock().Now() + std::chrono::seconds(*wait_s),
                       static_cast<size_t>(*max), [shared](std::vector<RelayRequest> requests) {
                         net::HttpResponse response;
                         response.body = wire::EncodeRelayRequests(requests);
                         shared->Respond(std::move(response));
                       });
}

void AnswerRequest(Call& call) {
  Result<wire::RelayAnswer> relayed = wire::DecodeRelayAnswer(call.request.body);
  if (!relayed.ok()) return call.Respond(relayed.status());
  net::HttpResponse answer;
  answer.status = relayed->status;
  answer.content_type = "application/octet-stream";
  for (const auto& [name, value] : relayed->headers) {
    if (net::LowerAscii(name) == "content-type") answer.content_type = value;
  }
  // Framing and our own Server header are this connection's; the rest is the pod's answer, less
  // what would act on the whole origin, whose other paths are the console and other tenants'
  // pods: wiping their storage and cookies, a service worker over all of it, HSTS for the
  // operator's other hosts.
  answer.headers = net::EndToEndHeaders(
      relayed->headers, {"content-type", "content-length", "server", "clear-site-data",
                         "service-worker-allowed", "strict-transport-security"});
  // These statuses have no body (and Beast refuses to send one).
  if (answer.status != 204 && answer.status != 304) answer.body = std::move(relayed->body);
  if (Status answered =
          call.relay().Answer(call.principal.node_id, call.param(0), std::move(answer));
      !answered.ok()) {
    return call.Respond(answered);
  }
  net::HttpResponse accepted;
  accepted.status = 204;
  call.Respond(std::move(accepted));
}

// clang-format off
constexpr Route kPodRelayRoutes[] = {
  {{"GET", "/v1/pods/{id}/logs", RouteAccess::kUser, "A pod's logs (?tail=N&since=TIME&timestamps=true), relayed by its node's agent"}, PodLogs},
  {{"GET", "/v1/pods/{id}/proxy/{port}/{path...}", RouteAccess::kUserOrPodLink, "HTTP to a running pod's port, relayed by its node's agent"}, ProxyToPod},
  {{"POST", "/v1/pods/{id}/proxy/{port}/{path...}", RouteAccess::kUserOrPodLink, "HTTP to a running pod's port, relayed by its node's agent"}, ProxyToPod},
  {{"PUT", "/v1/pods/{id}/proxy/{port}/{path...}", RouteAccess::kUserOrPodLink, "HTTP to a running pod's port, relayed by its node's agent"}, ProxyToPod},
  {{"PATCH", "/v1/pods/{id}/proxy/{port}/{path...}", RouteAccess::kUserOrPodLink, "HTTP to a running pod's port, relayed by its node's agent"}, ProxyToPod},
  {{"DELETE", "/v1/pods/{id}/proxy/{port}/{path...}", RouteAccess::kUserOrPodLink, "HTTP to a running pod's port, relayed by its node's agent"}, ProxyToPod},
  {{"HEAD", "/v1/pods/{id}/proxy/{port}/{path...}", RouteAccess::kUserOrPodLink, "HTTP to a running pod's port, relayed by its node's agent"}, ProxyToPod},
};
// clang-format on

// clang-format off
constexpr Route kAgentRelayRoutes[] = {
  {{"GET", "/v1/agent/requests", RouteAccess::kNode, "Agent: requests relayed to its pods (?wait_s=N long-polls)"}, AgentRequests},
  {{"POST", "/v1/agent/requests/{id}", RouteAccess::kNode, "Agent: the answer to a relayed request"}, AnswerRequest},
};
// clang-format on

}  // namespace

std::span<const Route> PodRelayRoutes() { return kPodRelayRoutes; }
std::span<const Route> AgentRelayRoutes() { return kAgentRelayRoutes; }

}  // namespace suanli::server
