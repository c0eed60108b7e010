#include "server/api.h"

#include <fmt/format.h>

#include <boost/json/serialize.hpp>
#include <charconv>
#include <chrono>
#include <initializer_list>
#include <memory>
#include <set>

#include "advisor/advice_json.h"
#include "advisor/hf_config.h"
#include "billing/meter.h"
#include "catalog/catalog_json.h"
#include "net/base64.h"
#include "server/console.h"
#include "server/domain_json.h"
#include "server/json_fields.h"
#include "server/secrets.h"

namespace suanli::server {

namespace json = boost::json;
using core::Result;
using core::Status;

struct Api::Call {
  net::HttpRequest request;
  net::Responder respond;
  std::vector<std::string> params;  // the {…} segments of the pattern, in order
  Principal principal;
  size_t route = 0;
  std::chrono::steady_clock::time_point started;
  std::string bearer;

  const std::string& param(size_t index) const { return params.at(index); }
};

struct Api::Route {
  RouteInfo info;
  Handler handler;
};

namespace {

constexpr size_t kNoRoute = static_cast<size_t>(-1);

net::HttpResponse JsonResponse(int status, const json::value& body) {
  net::HttpResponse response;
  response.status = status;
  response.body = json::serialize(body);
  return response;
}

net::HttpResponse StatusResponse(const Status& status) {
  return net::ErrorResponse(core::HttpStatusFor(status.code()), core::StatusCodeName(status.code()),
                            status.message());
}

// A last pattern segment "/{name...}": it takes the rest of the path, slashes included.
bool IsRestSegment(std::string_view pattern) {
  return pattern.starts_with("/{") && pattern.ends_with("...}") &&
         pattern.find('/', 1) == std::string_view::npos;
}

// Splits "/v1/pods/abc/stop" against "/v1/pods/{id}/stop"; fills `params` on a match. A last
// segment "{path...}" matches the rest of the path without its leading '/', possibly empty
// ("/v1/pods/abc/proxy/80" and ".../80/" both give "").
bool MatchPath(std::string_view pattern, std::string_view path, std::vector<std::string>* params) {
  params->clear();
  while (!pattern.empty() || !path.empty()) {
    if (IsRestSegment(pattern)) {
      params->emplace_back(path.empty() ? path : path.substr(1));
      return true;
    }
    if (pattern.empty() || path.empty() || pattern.front() != '/' || path.front() != '/') {
      return false;
    }
    pattern.remove_prefix(1);
    path.remove_prefix(1);
    const std::string_view pattern_segment = pattern.substr(0, pattern.find('/'));
    const std::string_view path_segment = path.substr(0, path.find('/'));
    if (pattern_segment.starts_with('{')) {
      if (path_segment.empty()) return false;
      params->emplace_back(path_segment);
    } else if (pattern_segment != path_segment) {
      return false;
    }
    pattern.remove_prefix(pattern_segment.size());
    path.remove_prefix(path_segment.size());
  }
  return true;
}

// The pattern as an OpenAPI path: "{path...}" is written "{path}" (with a description).
std::string OpenApiPath(std::string_view pattern) {
  std::string path(pattern);
  if (const size_t dots = path.find("...}"); dots != std::string::npos) path.erase(dots, 3);
  return path;
}

// A decimal integer in [min, max], all of `text`; nullopt otherwise.
std::optional<int64_t> ParseInteger(std::string_view text, int64_t min, int64_t max) {
  int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value < min || value > max) {
    return std::nullopt;
  }
  return value;
}

std::string LowerAscii(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

// Headers that describe one connection, not the message (RFC 9110 7.6.1): a proxy never passes
// them on.
constexpr std::string_view kHopByHopHeaders[] = {"connection",
                                                 "keep-alive",
                                                 "proxy-authenticate",
                                                 "proxy-authorization",
                                                 "proxy-connection",
                                                 "te",
                                                 "trailer",
                                                 "transfer-encoding",
                                                 "upgrade"};

// `headers` without the hop-by-hop ones (also those the Connection header names) and without those
// in `also_drop` (lower case). Names come out in lower case.
net::Headers EndToEndHeaders(const net::Headers& headers,
                             std::initializer_list<std::string_view> also_drop) {
  std::set<std::string, std::less<>> dropped(std::begin(kHopByHopHeaders),
                                             std::end(kHopByHopHeaders));
  dropped.insert(also_drop.begin(), also_drop.end());
  for (const auto& [name, value] : headers) {
    if (LowerAscii(name) != "connection") continue;
    std::string_view rest = value;
    while (!rest.empty()) {
      const size_t comma = rest.find(',');
      std::string_view token = rest.substr(0, comma);
      rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
      while (!token.empty() && (token.front() == ' ' || token.front() == '\t')) {
        token.remove_prefix(1);
      }
      while (!token.empty() && (token.back() == ' ' || token.back() == '\t'))
        token.remove_suffix(1);
      if (!token.empty()) dropped.insert(LowerAscii(token));
    }
  }
  net::Headers kept;
  for (const auto& [name, value] : headers) {
    std::string lower = LowerAscii(name);
    if (!dropped.contains(lower)) kept.emplace_back(std::move(lower), value);
  }
  return kept;
}

// An HTTP field name (RFC 9110 5.1: a token) of reasonable length.
bool IsHeaderName(std::string_view name) {
  constexpr std::string_view kTokenPunctuation = "!#$%&'*+-.^_`|~";
  if (name.empty() || name.size() > 256) return false;
  for (char c : name) {
    const bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    if (!alnum && kTokenPunctuation.find(c) == std::string_view::npos) return false;
  }
  return true;
}

// A field value that cannot end the header early or smuggle another one in.
bool IsHeaderValue(std::string_view value) {
  return value.size() <= 8192 &&
         value.find_first_of(std::string_view("\r\n\0", 3)) == std::string_view::npos;
}

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

// The pod link's query parameter and cookie.
constexpr std::string_view kPodLinkName = "suanli_link";

// A pod's pages are served from the console's origin, so they run in a sandbox with an origin of
// their own: a page in a pod cannot read the console's stored API token or call the API as its
// viewer. (Browsers combine it with any policy the pod sends; the stricter wins.)
constexpr std::string_view kPodPageSandbox =
    "sandbox allow-scripts allow-forms allow-popups allow-downloads allow-modals";

std::string_view AccessName(Access access) {
  switch (access) {
    case Access::kPublic:
      return "public";
    case Access::kUser:
      return "user";
    case Access::kAdmin:
      return "admin";
    case Access::kNode:
      return "node";
    case Access::kJoin:
      return "join";
    case Access::kUserOrPodLink:
      return "user or pod link";
  }
  return "public";
}

json::object TokenView(const core::ApiToken& token) {
  return {{"id", token.id},
          {"user_id", token.user_id},
          {"name", token.name},
          {"prefix", token.secret_prefix},
          {"created_at", FormatTime(token.created_at)}};
}

json::object JoinTokenView(const core::JoinToken& token) {
  json::object view = ToJson(token);
  view.erase("secret_hash");
  return view;
}

json::object NodeView(const core::Node& node) {
  json::object view = ToJson(node);
  view.erase("token_hash");
  json::array health;
  for (const core::GpuHealth& reading : node.gpu_health) health.emplace_back(ToJson(reading));
  view["gpu_health"] = std::move(health);
  return view;
}

template <typename T, typename View>
json::value ListOf(std::string_view key, const std::vector<T>& items, View view) {
  json::array array;
  array.reserve(items.size());
  for (const T& item : items) array.emplace_back(view(item));
  return json::object{{key, std::move(array)}};
}

// Reads `fields` of a node report (registration and heartbeat).
NodeReport ReadNodeReport(JsonFields& fields, bool with_name) {
  NodeReport report;
  if (with_name) fields.String("name", &report.name, true, 64);
  fields.Int("vcpu", &report.vcpu, 0, 100'000);
  fields.Int("memory_gb", &report.memory_gb, 0, 100'000'000);
  fields.Int("disk_gb", &report.disk_gb, 0, 1'000'000'000);
  fields.String("agent_version", &report.agent_version, false, 64);
  fields.String("address", &report.address, false, 253);
  fields.StringMap("labels", &report.labels, 64);
  fields.Objects("gpus", 64, [&report](JsonFields& gpu) {
    core::GpuDevice device;
    gpu.Int("index", &device.index, 0, 63, true);
    gpu.String("uuid", &device.uuid, false, 128);
    gpu.String("type", &device.type, true, 128);
    int memory_mb = 0;
    gpu.Int("memory_mb", &memory_mb, 0, 10'000'000);
    device.memory_gb = memory_mb / 1024.0;
    gpu.Bool("simulated", &device.simulated);
    report.gpus.push_back(std::move(device));
  });
  fields.Objects("gpu_health", 64, [&report](JsonFields& reading) {
    core::GpuHealth gpu;
    reading.Int("index", &gpu.index, 0, 63, true);
    reading.Int("utilization_percent", &gpu.utilization_percent, 0, 100);
    reading.Number("memory_used_gb", &gpu.memory_used_gb, 0, 1e6);
    reading.Int("temperature_c", &gpu.temperature_c, 0, 200);
    reading.Number("power_w", &gpu.power_w, 0, 1e5);
    reading.Int64("ecc_uncorrected_errors", &gpu.ecc_uncorrected_errors, 0, INT64_MAX);
    reading.Int64("xid_errors", &gpu.xid_errors, 0, INT64_MAX);
    reading.Int("last_xid", &gpu.last_xid, 0, 1'000'000);
    reading.String("problem", &gpu.problem, false, 256);
    report.gpu_health.push_back(std::move(gpu));
  });
  return report;
}

std::vector<core::PortSpec> ReadPorts(JsonFields& fields, bool* present) {
  std::optional<std::vector<std::string>> texts;
  fields.OptionalStringList("ports", &texts);
  *present = texts.has_value();
  std::vector<core::PortSpec> ports;
  if (!texts) return ports;
  for (const std::string& text : *texts) {
    Result<core::PortSpec> port = ParsePort(text);
    if (!port.ok()) {
      fields.Fail("ports: " + port.status().message());
      break;
    }
    ports.push_back(*port);
  }
  return ports;
}

}  // namespace

// clang-format off
std::span<const Api::Route> Api::RouteTable() {
  static const Route kRoutes[] = {
      {{"GET", "/healthz", Access::kPublic, "Liveness: 200 while the server serves"}, &Api::Healthz},
      {{"GET", "/metrics", Access::kPublic, "Prometheus metrics"}, &Api::Metrics},
      {{"GET", "/v1/openapi.json", Access::kPublic, "This API as an OpenAPI 3 document"}, &Api::OpenApi},
      {{"GET", "/v1/gpus", Access::kPublic, "The GPU catalog with this cloud's prices"}, &Api::Gpus},
      {{"GET", "/v1/availability", Access::kUser, "Free GPUs by type, with prices"}, &Api::Availability},
      {{"GET", "/v1/models", Access::kPublic, "The advisor's model zoo"}, &Api::Models},
      {{"POST", "/v1/advise", Access::kUser, "A workload's memory, speed, time and cost on every GPU type, and which to pick"}, &Api::Advise},
      {{"POST", "/v1/users", Access::kAdmin, "Create a user (and a first API token)"}, &Api::CreateUser},
      {{"GET", "/v1/users", Access::kAdmin, "List users"}, &Api::ListUsers},
      {{"GET", "/v1/users/{id}", Access::kUser, "A user ('me' for yourself; others: admin)"}, &Api::GetUser},
      {{"POST", "/v1/users/{id}/credits", Access::kAdmin, "Give credits to a user"}, &Api::AddCredits},
      {{"PATCH", "/v1/users/me", Access::kUser, "Set your spend cap"}, &Api::UpdateMe},
      {{"GET", "/v1/tokens", Access::kUser, "Your API tokens"}, &Api::ListTokens},
      {{"POST", "/v1/tokens", Access::kUser, "Create an API token (its secret is shown once)"}, &Api::CreateToken},
      {{"DELETE", "/v1/tokens/{id}", Access::kUser, "Revoke an API token"}, &Api::RevokeToken},
      {{"GET", "/v1/ssh-keys", Access::kUser, "Your SSH public keys"}, &Api::ListSshKeys},
      {{"POST", "/v1/ssh-keys", Access::kUser, "Register an SSH public key"}, &Api::AddSshKey},
      {{"DELETE", "/v1/ssh-keys/{id}", Access::kUser, "Remove an SSH public key"}, &Api::DeleteSshKey},
      {{"GET", "/v1/templates", Access::kUser, "Templates you can deploy"}, &Api::ListTemplates},
      {{"POST", "/v1/templates", Access::kUser, "Create a template (public: admin)"}, &Api::CreateTemplate},
      {{"GET", "/v1/templates/{id}", Access::kUser, "A template"}, &Api::GetTemplate},
      {{"DELETE", "/v1/templates/{id}", Access::kUser, "Delete your template"}, &Api::DeleteTemplate},
      {{"GET", "/v1/pods", Access::kUser, "Your pods"}, &Api::ListPods},
      {{"POST", "/v1/pods", Access::kUser, "Create a pod"}, &Api::CreatePod},
      {{"GET", "/v1/pods/{id}", Access::kUser, "A pod, with the actions allowed now"}, &Api::GetPod},
      {{"POST", "/v1/pods/{id}/stop", Access::kUser, "Stop a pod (its volume is kept and billed)"}, &Api::StopPod},
      {{"POST", "/v1/pods/{id}/start", Access::kUser, "Start a stopped pod"}, &Api::StartPod},
      {{"POST", "/v1/pods/{id}/restart", Access::kUser, "Restart a running pod's container"}, &Api::RestartPod},
      {{"DELETE", "/v1/pods/{id}", Access::kUser, "Terminate a pod (?force=true deletes its volume)"}, &Api::TerminatePod},
      {{"GET", "/v1/pods/{id}/transitions", Access::kUser, "A pod's state changes"}, &Api::PodTransitions},
      {{"GET", "/v1/pods/{id}/logs", Access::kUser, "A pod's logs (?tail=N&since=TIME&timestamps=true), relayed by its node's agent"}, &Api::PodLogs},
      {{"GET", "/v1/pods/{id}/proxy/{port}/{path...}", Access::kUserOrPodLink, "HTTP to a running pod's port, relayed by its node's agent"}, &Api::ProxyToPod},
      {{"POST", "/v1/pods/{id}/proxy/{port}/{path...}", Access::kUserOrPodLink, "HTTP to a running pod's port, relayed by its node's agent"}, &Api::ProxyToPod},
      {{"PUT", "/v1/pods/{id}/proxy/{port}/{path...}", Access::kUserOrPodLink, "HTTP to a running pod's port, relayed by its node's agent"}, &Api::ProxyToPod},
      {{"PATCH", "/v1/pods/{id}/proxy/{port}/{path...}", Access::kUserOrPodLink, "HTTP to a running pod's port, relayed by its node's agent"}, &Api::ProxyToPod},
      {{"DELETE", "/v1/pods/{id}/proxy/{port}/{path...}", Access::kUserOrPodLink, "HTTP to a running pod's port, relayed by its node's agent"}, &Api::ProxyToPod},
      {{"HEAD", "/v1/pods/{id}/proxy/{port}/{path...}", Access::kUserOrPodLink, "HTTP to a running pod's port, relayed by its node's agent"}, &Api::ProxyToPod},
      {{"GET", "/v1/billing/balance", Access::kUser, "Balance, spend rate and runway"}, &Api::Balance},
      {{"GET", "/v1/billing/ledger", Access::kUser, "Credits and charges (?user= for admins)"}, &Api::LedgerEntries},
      {{"GET", "/v1/billing/usage", Access::kUser, "Usage by pod or day (?by=pod|day&format=csv)"}, &Api::Usage},
      {{"GET", "/v1/join-tokens", Access::kAdmin, "Join tokens for new nodes"}, &Api::ListJoinTokens},
      {{"POST", "/v1/join-tokens", Access::kAdmin, "Create a join token (its secret is shown once)"}, &Api::CreateJoinToken},
      {{"DELETE", "/v1/join-tokens/{id}", Access::kAdmin, "Delete a join token"}, &Api::DeleteJoinToken},
      {{"GET", "/v1/nodes", Access::kAdmin, "Nodes and their GPUs"}, &Api::ListNodes},
      {{"GET", "/v1/nodes/{id}", Access::kAdmin, "A node"}, &Api::GetNode},
      {{"POST", "/v1/nodes/{id}/cordon", Access::kAdmin, "Place no new pods on a node"}, &Api::CordonNode},
      {{"POST", "/v1/nodes/{id}/uncordon", Access::kAdmin, "Place pods on a node again"}, &Api::UncordonNode},
      {{"POST", "/v1/nodes/{id}/drain", Access::kAdmin, "Cordon a node and stop its pods"}, &Api::DrainNode},
      {{"DELETE", "/v1/nodes/{id}", Access::kAdmin, "Remove a node without pods"}, &Api::DeleteNode},
      {{"PUT", "/v1/prices/{gpu}", Access::kAdmin, "Set the hourly price of a GPU type"}, &Api::SetPrice},
      {{"POST", "/v1/agent/register", Access::kJoin, "Agent: register a node"}, &Api::RegisterNode},
      {{"POST", "/v1/agent/heartbeat", Access::kNode, "Agent: report the node's resources"}, &Api::Heartbeat},
      {{"GET", "/v1/agent/pods", Access::kNode, "Agent: the node's desired pods (?after=GEN&wait_s=N long-polls)"}, &Api::AgentPods},
      {{"POST", "/v1/agent/pods/{id}/status", Access::kNode, "Agent: report a pod's actual state"}, &Api::ReportPod},
      {{"GET", "/v1/agent/requests", Access::kNode, "Agent: requests relayed to its pods (?wait_s=N long-polls)"}, &Api::AgentRequests},
      {{"POST", "/v1/agent/requests/{id}", Access::kNode, "Agent: the answer to a relayed request"}, &Api::AnswerRequest},
  };
  return kRoutes;
}
// clang-format on

std::span<const RouteInfo> Api::Routes() {
  static const std::vector<RouteInfo> kInfos = [] {
    std::vector<RouteInfo> infos;
    for (const Route& route : RouteTable()) infos.push_back(route.info);
    return infos;
  }();
  return kInfos;
}

Api::Api(ControlPlane& plane, store::CommitQueue& queue, core::Clock& clock,
         RelayOptions relay_options)
    : plane_(plane),
      queue_(queue),
      clock_(clock),
      zoo_(advisor::LoadBuiltInModelZoo().value()),  // embedded and tested: cannot fail here
      metrics_(RouteTable().size()),
      relay_(
          clock, [] { return "rly_" + HexEncode(OpenSslEntropy().Bytes(12)); }, relay_options) {
  for (const Route& route : RouteTable()) {
    metric_labels_.push_back(
        fmt::format(R"(method="{}",route="{}")", route.info.method, route.info.pattern));
  }
}

void Api::Handle(net::HttpRequest&& request, net::Responder respond) {
  auto call = std::make_shared<Call>();
  call->request = std::move(request);
  call->respond = std::move(respond);
  call->started = std::chrono::steady_clock::now();
  call->route = kNoRoute;
  // The console's files are not API routes (not in the OpenAPI document, no token).
  if (call->request.method == "GET" || call->request.method == "HEAD") {
    if (std::optional<net::HttpResponse> file = ConsoleFile(call->request.path)) {
      Answer(*call, std::move(*file));
      return;
    }
  }
  bool path_known = false;
  const std::span<const Route> routes = RouteTable();
  for (size_t i = 0; i < routes.size(); ++i) {
    if (!MatchPath(routes[i].info.pattern, call->request.path, &call->params)) continue;
    path_known = true;
    if (routes[i].info.method == call->request.method) {
      call->route = i;
      break;
    }
  }
  if (call->route == kNoRoute) {
    Answer(*call,
           path_known
               ? net::ErrorResponse(405, "METHOD_NOT_ALLOWED",
                                    call->request.method + " is not allowed on " +
                                        call->request.path + " (see /v1/openapi.json)")
               : net::ErrorResponse(404, "NOT_FOUND",
                                    "no route " + call->request.path + " (see /v1/openapi.json)"));
    return;
  }
  const Route& route = routes[call->route];
  if (route.info.access != Access::kPublic) {
    const std::string authorization = call->request.Header("authorization").value_or("");
    if (authorization.starts_with("Bearer ")) call->bearer = authorization.substr(7);
    if (route.info.access == Access::kUserOrPodLink && call->bearer.empty() &&
        FollowPodLink(*call)) {
      return;
    }
    if (route.info.access != Access::kJoin) {
      Result<Principal> principal = plane_.Authenticate(call->bearer);
      if (!principal.ok()) {
        Answer(*call, StatusResponse(principal.status()));
        return;
      }
      call->principal = *principal;
      const bool is_node = !call->principal.node_id.empty();
      if (route.info.access == Access::kNode && !is_node) {
        Answer(*call, StatusResponse(core::PermissionDeniedError("only a node's agent may call " +
                                                                 std::string(route.info.pattern))));
        return;
      }
      if (route.info.access != Access::kNode && is_node) {
        Answer(*call, StatusResponse(core::PermissionDeniedError("a node's token cannot call " +
                                                                 std::string(route.info.pattern))));
        return;
      }
      if (route.info.access == Access::kAdmin && !call->principal.is_admin()) {
        Answer(*call, StatusResponse(core::PermissionDeniedError(
                          "only an admin may call " + std::string(route.info.method) + " " +
                          std::string(route.info.pattern))));
        return;
      }
    }
  }
  (this->*route.handler)(*call);
}

bool Api::FollowPodLink(Call& call) {
  const std::string& pod_id = call.params.front();
  std::optional<std::string> link = call.request.QueryValue(kPodLinkName);
  const bool in_query = link.has_value();
  if (!in_query) link = net::CookieValue(call.request.Header("cookie").value_or(""), kPodLinkName);
  if (!link) return false;  // then it needs an API token
  Result<Principal> owner = plane_.AuthenticatePodLink(pod_id, *link);
  if (!owner.ok()) {
    Answer(call, StatusResponse(owner.status()));
    return true;
  }
  if (in_query) {
    // Out of the address bar (and the history, and the pod's own logs) into a cookie that only
    // this pod's proxy paths get. Not Secure: the server may be plain HTTP on a private network.
    net::HttpResponse redirect;
    redirect.status = 303;
    redirect.content_type = "text/plain";
    redirect.body = "see the pod's page\n";
    redirect.headers = {
        {"location", net::WithoutQueryParameter(call.request.target, kPodLinkName)},
        {"set-cookie", std::string(kPodLinkName) + "=" + *link + "; Path=/v1/pods/" + pod_id +
                           "/proxy/; HttpOnly; SameSite=Lax"},
        {"cache-control", "no-store"}};
    Answer(call, std::move(redirect));
    return true;
  }
  call.principal = *owner;
  (this->*RouteTable()[call.route].handler)(call);
  return true;
}

void Api::Answer(Call& call, net::HttpResponse response) {
  metrics_.Record(call.route == kNoRoute ? RouteTable().size() : call.route, response.status,
                  std::chrono::steady_clock::now() - call.started);
  call.respond(std::move(response));
}

void Api::Finish(Call& call, Result<json::value> result, uint64_t sequence, int created_status) {
  if (!result.ok()) {
    Answer(call, StatusResponse(result.status()));
    return;
  }
  FinishText(call, json::serialize(*result), sequence, created_status);
}

void Api::FinishText(Call& call, std::string json_body, uint64_t sequence, int status) {
  // Answer once everything the answer reflects is durable: a client never sees a write that a
  // crash could still take back. Serialized before waiting, so the writer thread does not.
  auto shared = std::make_shared<Call>(std::move(call));
  auto response = std::make_shared<net::HttpResponse>();
  response->status = status;
  response->body = std::move(json_body);
  queue_.AfterDurable(sequence, [this, shared, response](const Status& durable) {
    if (!durable.ok()) {
      Answer(*shared, StatusResponse(core::UnavailableError(
                          "the store could not save this (" + durable.message() +
                          "); nothing was changed, and the server must be restarted")));
      return;
    }
    Answer(*shared, std::move(*response));
  });
}

template <typename T, typename View>
void Api::Reply(Call& call, Result<Written<T>> result, View view, int status) {
  if (!result.ok()) {
    Finish(call, result.status(), 0);
    return;
  }
  Finish(call, json::value(view(result->value)), result->sequence, status);
}

boost::json::object Api::PodView(const core::Pod& pod, const Principal& viewer) const {
  json::object view = PodViewWithoutTime(pod);
  AddPodSecrets(viewer, pod, view);
  view["node_address"] = plane_.NodeAddress(pod.node_id);
  view["cost_micros"] = pod.cost.micros();  // the control plane adds what has accrued
  view["uptime_s"] = UptimeSeconds(pod, clock_.Now());
  return view;
}

// --- Public ------------------------------------------------------------------------------------

void Api::Healthz(Call& call) {
  const Status store = queue_.latched_error();
  if (!store.ok()) {
    Answer(call, StatusResponse(core::UnavailableError("the store failed: " + store.message())));
    return;
  }
  Answer(call, JsonResponse(200, json::object{{"status", "ok"}}));
}

void Api::Metrics(Call& call) {
  const Gauges gauges = plane_.gauges();
  std::string text = metrics_.Render(metric_labels_);
  text += "# HELP suanli_pods Pods by state.\n# TYPE suanli_pods gauge\n";
  for (std::string_view state : {"pending", "starting", "running", "stopping", "stopped", "exited",
                                 "failed", "terminated"}) {
    const auto it = gauges.pods_by_state.find(std::string(state));
    text += fmt::format("suanli_pods{{state=\"{}\"}} {}\n", state,
                        it == gauges.pods_by_state.end() ? 0 : it->second);
  }
  text += "# HELP suanli_gpus GPUs on ready nodes, allocated or free.\n# TYPE suanli_gpus gauge\n";
  for (const auto& [type, counts] : gauges.gpus_by_type) {
    text += fmt::format("suanli_gpus{{type=\"{}\",status=\"allocated\"}} {}\n", type, counts.first);
    text += fmt::format("suanli_gpus{{type=\"{}\",status=\"free\"}} {}\n", type, counts.second);
  }
  text += fmt::format(
      "# HELP suanli_scheduler_pending Pods waiting for a GPU.\n# TYPE suanli_scheduler_pending "
      "gauge\nsuanli_scheduler_pending {}\n",
      gauges.pending);
  text += fmt::format(
      "# HELP suanli_nodes Nodes by state.\n# TYPE suanli_nodes gauge\n"
      "suanli_nodes{{state=\"ready\"}} {}\nsuanli_nodes{{state=\"unreachable\"}} {}\n",
      gauges.nodes_ready, gauges.nodes_unreachable);
  text += fmt::format(
      "# HELP suanli_billing_charged_micros_total Micro-dollars charged since start-up.\n"
      "# TYPE suanli_billing_charged_micros_total counter\n"
      "suanli_billing_charged_micros_total {}\n",
      gauges.charged_micros);
  text += fmt::format(
      "# HELP suanli_store_transactions_total Store transactions (group commits).\n"
      "# TYPE suanli_store_transactions_total counter\nsuanli_store_transactions_total {}\n"
      "# HELP suanli_store_batches_total Changes committed.\n"
      "# TYPE suanli_store_batches_total counter\nsuanli_store_batches_total {}\n",
      queue_.transactions(), queue_.durable());
  net::HttpResponse response;
  response.content_type = "text/plain; version=0.0.4";
  response.body = std::move(text);
  Answer(call, std::move(response));
}

void Api::OpenApi(Call& call) { Answer(call, JsonResponse(200, OpenApiDocument())); }

void Api::Gpus(Call& call) {
  json::array gpus;
  for (const catalog::GpuType& gpu : plane_.catalog().gpus()) {
    json::object entry = catalog::GpuTypeToJson(gpu);
    entry["price_per_hour_micros"] = plane_.GpuPrice(gpu.name).micros();
    gpus.emplace_back(std::move(entry));
  }
  Answer(call, JsonResponse(200, json::object{{"gpus", std::move(gpus)}}));
}

void Api::Availability(Call& call) {
  Reply(call, plane_.GpuAvailability(call.principal),
        [](const std::vector<server::Availability>& all) {
          return ListOf("gpus", all, [](const server::Availability& entry) {
            return json::object{{"gpu_type", entry.gpu_type},
                                {"total", entry.total},
                                {"free", entry.free},
                                {"largest_free_on_one_node", entry.largest_free_on_one_node},
                                {"price_per_hour_micros", entry.price_per_hour.micros()},
                                {"simulated", entry.simulated}};
          });
        });
}

// --- Users, tokens, keys -------------------------------------------------------------------------

void Api::CreateUser(Call& call) {
  Result<json::object> body = ParseJsonObject(call.request.body);
  if (!body.ok()) return Finish(call, body.status(), 0);
  JsonFields fields(*body);
  std::string name, role = "user";
  core::Money credits;
  fields.String("name", &name, true, 64);
  fields.String("role", &role, false, 16);
  fields.Micros("credits_micros", &credits);
  if (role != "user" && role != "admin") fields.Fail("role: must be \"user\" or \"admin\"");
  if (Status status = fields.Finish(); !status.ok()) return Finish(call, status, 0);
  Result<Written<core::User>> user = plane_.CreateUser(
      call.principal, name, role == "admin" ? core::Role::kAdmin : core::Role::kUser, credits);
  if (!user.ok()) return Finish(call, user.status(), 0);
  auto token = plane_.CreateToken(call.principal, "first", user->value.id);
  if (!token.ok()) return Finish(call, token.status(), 0);
  Finish(call,
         json::value(json::object{{"user", ToJson(user->value)}, {"token", token->value.second}}),
         token->sequence, 201);
}

void Api::ListUsers(Call& call) {
  Reply(call, plane_.ListUsers(call.principal), [](const std::vector<core::User>& users) {
    return ListOf("users", users, [](const core::User& user) { return ToJson(user); });
  });
}

void Api::GetUser(Call& call) {
  Reply(call, plane_.GetUser(call.principal, call.param(0)),
        [](const core::User& user) { return ToJson(user); });
}

void Api::AddCredits(Call& call) {
  Result<json::object> body = ParseJsonObject(call.request.body);
  if (!body.ok()) return Finish(call, body.status(), 0);
  JsonFields fields(*body);
  core::Money amount;
  std::string note;
  fields.Micros("amount_micros", &amount, true, true);
  fields.String("note", &note, false, 256);
  if (Status status = fields.Finish(); !status.ok()) return Finish(call, status, 0);
  Reply(call, plane_.AddCredits(call.principal, call.param(0), amount, note),
        [](const core::User& user) { return ToJson(user); });
}

void Api::UpdateMe(Call& call) {
  Result<json::object> body = ParseJsonObject(call.request.body);
  if (!body.ok()) return Finish(call, body.status(), 0);
  JsonFields fields(*body);
  core::Money cap;
  fields.Micros("spend_cap_per_hour_micros", &cap, true);
  if (Status status = fields.Finish(); !status.ok()) return Finish(call, status, 0);
  Reply(call, plane_.SetSpendCap(call.principal, cap),
        [](const core::User& user) { return ToJson(user); });
}

void Api::ListTokens(Call& call) {
  Reply(call, plane_.ListTokens(call.principal), [](const std::vector<core::ApiToken>& tokens) {
    return ListOf("tokens", tokens, TokenView);
  });
}

void Api::CreateToken(Call& call) {
  Result<json::object> body = ParseJsonObject(call.request.body);
  if (!body.ok()) return Finish(call, body.status(), 0);
  JsonFields fields(*body);
  std::string name;
  fields.String("name", &name, true, 64);
  if (Status status = fields.Finish(); !status.ok()) return Finish(call, status, 0);
  Reply(
      call, plane_.CreateToken(call.principal, name),
      [](const std::pair<core::ApiToken, std::string>& created) {
        return json::object{{"token", TokenView(created.first)}, {"secret", created.second}};
      },
      201);
}

void Api::RevokeToken(Call& call) {
  Reply(call, plane_.RevokeToken(call.principal, call.param(0)), TokenView);
}

void Api::ListSshKeys(Call& call) {
  Reply(call, plane_.ListSshKeys(call.principal), [](const std::vector<core::SshKey>& keys) {
    return ListOf("ssh_keys", keys, [](const core::SshKey& key) { return ToJson(key); });
  });
}

void Api::AddSshKey(Call& call) {
  Result<json::object> body = ParseJsonObject(call.request.body);
  if (!body.ok()) return Finish(call, body.status(), 0);
  JsonFields fields(*body);
  std::string name, key;
  fields.String("name", &name, true, 64);
  fields.String("public_key", &key, true, 16384);
  if (Status status = fields.Finish(); !status.ok()) return Finish(call, status, 0);
  Reply(
      call, plane_.AddSshKey(call.principal, name, key),
      [](const core::SshKey& added) { return ToJson(added); }, 201);
}

void Api::DeleteSshKey(Call& call) {
  Reply(call, plane_.DeleteSshKey(call.principal, call.param(0)),
        [](const core::SshKey& key) { return ToJson(key); });
}

// --- Templates --------------------------------------------------------------------------------

void Api::ListTemplates(Call& call) {
  Reply(call, plane_.ListTemplates(call.principal),
        [](const std::vector<core::Template>& templates) {
          return ListOf("templates", templates,
                        [](const core::Template& spec) { return ToJson(spec); });
        });
}

void Api::CreateTemplate(Call& call) {
  Result<json::object> body = ParseJsonObject(call.request.body);
  if (!body.ok()) return Finish(call, body.status(), 0);
  JsonFields fields(*body);
  TemplateSpec spec;
  fields.String("name", &spec.name, true, 64);
  fields.String("description", &spec.description, false, 1024);
  fields.String("image", &spec.image, true, 512);
  fields.StringList("command", &spec.command);
  fields.StringMap("env", &spec.env);
  bool has_ports = false;
  spec.ports = ReadPorts(fields, &has_ports);
  fields.Int("container_disk_gb", &spec.container_disk_gb, 1, 10'000);
  fields.Int("volume_gb", &spec.volume_gb, 0, 100'000);
  fields.String("volume_mount_path", &spec.volume_mount_path, false, 256);
  fields.Bool("public", &spec.is_public);
  if (Status status = fields.Finish(); !status.ok()) return Finish(call, status, 0);
  Reply(
      call, plane_.CreateTemplate(call.principal, std::move(spec)),
      [](const core::Template& created) { return ToJson(created); }, 201);
}

void Api::GetTemplate(Call& call) {
  Reply(call, plane_.GetTemplate(call.principal, call.param(0)),
        [](const core::Template& spec) { return ToJson(spec); });
}

void Api::DeleteTemplate(Call& call) {
  Reply(call, plane_.DeleteTemplate(call.principal, call.param(0)),
        [](const core::Template& spec) { return ToJson(spec); });
}

// --- Pods ---------------------------------------------------------------------------------------

void Api::ListPods(Call& call) {
  // The hot read: the control plane writes the JSON from views it caches per pod revision.
  Result<Written<std::string>> pods = plane_.ListPodsJson(call.principal);
  if (!pods.ok()) return Finish(call, pods.status(), 0);
  FinishText(call, std::move(pods->value), pods->sequence);
}

void Api::CreatePod(Call& call) {
  Result<json::object> body = ParseJsonObject(call.request.body);
  if (!body.ok()) return Finish(call, body.status(), 0);
  JsonFields fields(*body);
  PodSpec spec;
  fields.String("name", &spec.name, false, 64);
  fields.String("template", &spec.template_id, false, 64);
  fields.String("image", &spec.image, false, 512);
  fields.OptionalStringList("command", &spec.command);
  fields.StringMap("env", &spec.env);
  bool has_ports = false;
  std::vector<core::PortSpec> ports = ReadPorts(fields, &has_ports);
  if (has_ports) spec.ports = std::move(ports);
  fields.String("gpu_type", &spec.gpu_type, false, 128);
  fields.Int("gpu_count", &spec.gpu_count, 1, 64);
  fields.OptionalInt("vcpu", &spec.vcpu, 1, 1024);
  fields.OptionalInt("memory_gb", &spec.memory_gb, 1, 16'384);
  fields.OptionalInt("container_disk_gb", &spec.container_disk_gb, 1, 10'000);
  fields.OptionalInt("volume_gb", &spec.volume_gb, 0, 100'000);
  std::string mount;
  fields.String("volume_mount_path", &mount, false, 256);
  if (!mount.empty()) spec.volume_mount_path = mount;
  fields.Bool("interruptible", &spec.interruptible);
  fields.StringMap("node_selector", &spec.node_selector, 32);
  spec.workload = ReadWorkload(fields);
  if (Status status = fields.Finish(); !status.ok()) return Finish(call, status, 0);
  Reply(
      call, plane_.CreatePod(call.principal, std::move(spec)),
      [this, &call](const core::Pod& pod) { return PodView(pod, call.principal); }, 201);
}

void Api::Models(Call& call) {
  json::array models;
  for (const advisor::ModelSpec& model : zoo_.models()) {
    models.emplace_back(advisor::ModelToJson(model));
  }
  Answer(call, JsonResponse(200, json::object{{"models", std::move(models)}}));
}

void Api::Advise(Call& call) {
  Result<json::object> body = ParseJsonObject(call.request.body);
  if (!body.ok()) return Finish(call, body.status(), 0);
  JsonFields fields(*body);
  const std::optional<advisor::Workload> workload = ReadWorkload(fields);
  if (Status status = fields.Finish(); !status.ok()) return Finish(call, status, 0);
  if (!workload) {
    return Finish(call,
                  core::InvalidArgumentError(
                      "workload: required, e.g. {\"model\": \"llama-3-8b\", \"task\": \"lora\"}"),
                  0);
  }
  Reply(call, plane_.AdviceJson(call.principal, *workload),
        [](const json::object& advice) { return advice; });
}

std::optional<advisor::Workload> Api::ReadWorkload(JsonFields& fields) const {
  const json::value* raw = fields.Raw("workload");
  if (raw == nullptr) return std::nullopt;
  if (!raw->is_object()) {
    fields.Fail(
        "workload: must be an object such as {\"model\": \"llama-3-8b\", \"task\": \"serve\"}");
    return std::nullopt;
  }
  JsonFields workload_fields(raw->as_object());
  std::string model, task, precision = "bf16", quant, engine;
  advisor::Workload workload;
  workload_fields.String("model", &model, false, 128);
  // A model the zoo lacks: its Hugging Face config.json, as a JSON object (the CLI's --hf-config).
  const json::value* hf_config = workload_fields.Raw("hf_config");
  if (hf_config != nullptr && !hf_config->is_object()) {
    workload_fields.Fail("hf_config: must be the object in a model's config.json");
  }
  if ((hf_config == nullptr) == model.empty()) {
    workload_fields.Fail(
        "give exactly one of model (a name from GET /v1/models) or hf_config (a Hugging Face "
        "config.json object)");
  }
  workload_fields.String("task", &task, true, 16);
  workload_fields.String("precision", &precision, false, 16);
  workload_fields.String("quant", &quant, false, 16);
  workload_fields.String("engine", &engine, false, 16);
  workload_fields.Int("batch", &workload.batch, 0, 1 << 20);
  workload_fields.Int("seq", &workload.seq, 0, 1 << 22);
  workload_fields.Number("tokens", &workload.work.tokens, 0, 1e18);
  workload_fields.Number("samples", &workload.work.samples, 0, 1e15);
  workload_fields.Int("epochs", &workload.work.epochs, 1, 100'000);
  Status status = workload_fields.Finish();
  auto parse = [&status](auto result, auto* out) {
    if (!status.ok()) return;
    if (!result.ok()) {
      status = result.status();
      return;
    }
    *out = *result;
  };
  advisor::ModelSpec from_config;
  const advisor::ModelSpec* spec = &from_config;
  if (hf_config == nullptr) {
    parse(zoo_.Find(model), &spec);
  } else if (status.ok()) {
    parse(advisor::ModelFromHfConfig(json::serialize(*hf_config), "hf_config"), &from_config);
  }
  parse(advisor::ParseTask(task), &workload.task);
  parse(advisor::ParsePrecision(precision), &workload.precision);
  if (!quant.empty()) {
    advisor::Quantization parsed;
    parse(advisor::ParseQuantization(quant), &parsed);
    workload.quant = parsed;
  }
  if (!engine.empty()) {
    parse(advisor::ParseEngine(engine), &workload.engine);
    workload.engine_given = true;
  }
  if (status.ok()) {
    workload.model = *spec;
    status = advisor::CompleteAndValidate(workload);
  }
  if (!status.ok()) {
    fields.Fail("workload: " + status.message());
    return std::nullopt;
  }
  return workload;
}

void Api::GetPod(Call& call) {
  Reply(call, plane_.GetPod(call.principal, call.param(0)),
        [this, &call](const core::Pod& pod) { return PodView(pod, call.principal); });
}

void Api::ActOnPod(Call& call, core::PodAction action) {
  const bool force = call.request.QueryValue("force").value_or("") == "true";
  Reply(call, plane_.Act(call.principal, call.param(0), action, force),
        [this, &call](const core::Pod& pod) { return PodView(pod, call.principal); });
}

void Api::StopPod(Call& call) { ActOnPod(call, core::PodAction::kStop); }
void Api::StartPod(Call& call) { ActOnPod(call, core::PodAction::kStart); }
void Api::RestartPod(Call& call) { ActOnPod(call, core::PodAction::kRestart); }
void Api::TerminatePod(Call& call) { ActOnPod(call, core::PodAction::kTerminate); }

void Api::PodTransitions(Call& call) {
  Result<std::vector<core::Transition>> transitions =
      plane_.Transitions(call.principal, call.param(0));
  if (!transitions.ok()) return Finish(call, transitions.status(), 0);
  Finish(call,
         ListOf("transitions", *transitions,
                [](const core::Transition& transition) { return ToJson(transition); }),
         queue_.submitted());
}

// --- Billing ----------------------------------------------------------------------------------

void Api::Balance(Call& call) {
  Result<Written<core::User>> user = plane_.GetUser(call.principal, "me");
  if (!user.ok()) return Finish(call, user.status(), 0);
  const core::Money rate = plane_.SpendRate(call.principal.user_id);
  const core::Duration runway = billing::Runway(user->value.balance, rate);
  json::object body{
      {"balance_micros", user->value.balance.micros()},
      {"spend_rate_per_hour_micros", rate.micros()},
      {"spend_cap_per_hour_micros", user->value.spend_cap_per_hour.micros()},
      {"storage_per_gb_month_micros", plane_.storage_price().micros()},
      {"minimum_runway_s",
       std::chrono::duration_cast<std::chrono::seconds>(plane_.minimum_runway()).count()}};
  if (runway == core::Duration::max()) {
    body["runway_s"] = nullptr;
  } else {
    body["runway_s"] = std::chrono::duration_cast<std::chrono::seconds>(runway).count();
  }
  body["notices"] = ToJson(user->value)["notices"];
  Finish(call, json::value(std::move(body)), user->sequence);
}

void Api::LedgerEntries(Call& call) {
  Result<std::vector<core::LedgerEntry>> entries =
      plane_.Ledger(call.principal, call.request.QueryValue("user").value_or(""));
  if (!entries.ok()) return Finish(call, entries.status(), 0);
  Finish(call,
         ListOf("entries", *entries, [](const core::LedgerEntry& entry) { return ToJson(entry); }),
         queue_.submitted());
}

void Api::Usage(Call& call) {
  const std::string by = call.request.QueryValue("by").value_or("pod");
  const std::string format = call.request.QueryValue("format").value_or("json");
  if ((by != "pod" && by != "day") || (format != "json" && format != "csv")) {
    return Finish(
        call, core::InvalidArgumentError("usage: by must be pod or day, format json or csv"), 0);
  }
  Result<std::vector<UsageRow>> rows =
      plane_.Usage(call.principal, call.request.QueryValue("user").value_or(""),
                   by == "pod" ? ControlPlane::UsageBy::kPod : ControlPlane::UsageBy::kDay);
  if (!rows.ok()) return Finish(call, rows.status(), 0);
  if (format == "csv") {
    net::HttpResponse response;
    response.content_type = "text/csv";
    response.headers.emplace_back("Content-Disposition",
                                  "attachment; filename=\"suanli-usage-by-" + by + ".csv\"");
    response.body = by + ",gpu_seconds,gpu_usd,storage_usd,total_usd\n";
    auto dollars = [](core::Money amount) {
      return fmt::format("{}.{:06d}", amount.micros() / 1'000'000, amount.micros() % 1'000'000);
    };
    for (const UsageRow& row : *rows) {
      response.body += fmt::format("{},{},{},{},{}\n", row.key, row.gpu_seconds, dollars(row.gpu),
                                   dollars(row.storage), dollars(row.gpu + row.storage));
    }
    Answer(call, std::move(response));
    return;
  }
  Finish(call,
         ListOf("usage", *rows,
                [](const UsageRow& row) {
                  return json::object{{"key", row.key},
                                      {"gpu_seconds", row.gpu_seconds},
                                      {"gpu_micros", row.gpu.micros()},
                                      {"storage_micros", row.storage.micros()},
                                      {"total_micros", (row.gpu + row.storage).micros()}};
                }),
         queue_.submitted());
}

void Api::SetPrice(Call& call) {
  Result<json::object> body = ParseJsonObject(call.request.body);
  if (!body.ok()) return Finish(call, body.status(), 0);
  JsonFields fields(*body);
  core::Money price;
  fields.Micros("price_per_hour_micros", &price, true);
  if (Status status = fields.Finish(); !status.ok()) return Finish(call, status, 0);
  const std::string gpu = call.param(0);
  Reply(call, plane_.SetGpuPrice(call.principal, gpu, price), [&](core::Money set) {
    return json::object{{"gpu", gpu}, {"price_per_hour_micros", set.micros()}};
  });
}

// --- Nodes ------------------------------------------------------------------------------------

void Api::ListJoinTokens(Call& call) {
  Reply(call, plane_.ListJoinTokens(call.principal),
        [](const std::vector<core::JoinToken>& tokens) {
          return ListOf("join_tokens", tokens, JoinTokenView);
        });
}

void Api::CreateJoinToken(Call& call) {
  Result<json::object> body = ParseJsonObject(call.request.body);
  if (!body.ok()) return Finish(call, body.status(), 0);
  JsonFields fields(*body);
  std::string note;
  fields.String("note", &note, false, 256);
  if (Status status = fields.Finish(); !status.ok()) return Finish(call, status, 0);
  Reply(
      call, plane_.CreateJoinToken(call.principal, note),
      [](const std::pair<core::JoinToken, std::string>& created) {
        return json::object{{"join_token", JoinTokenView(created.first)},
                            {"secret", created.second}};
      },
      201);
}

void Api::DeleteJoinToken(Call& call) {
  Reply(call, plane_.DeleteJoinToken(call.principal, call.param(0)), JoinTokenView);
}

void Api::ListNodes(Call& call) {
  Reply(call, plane_.ListNodes(call.principal),
        [](const std::vector<core::Node>& nodes) { return ListOf("nodes", nodes, NodeView); });
}

void Api::GetNode(Call& call) {
  Reply(call, plane_.GetNode(call.principal, call.param(0)), NodeView);
}

void Api::ActOnNode(Call& call, ControlPlane::NodeAction action) {
  Reply(call, plane_.ActOnNode(call.principal, call.param(0), action), NodeView);
}

void Api::CordonNode(Call& call) { ActOnNode(call, ControlPlane::NodeAction::kCordon); }
void Api::UncordonNode(Call& call) { ActOnNode(call, ControlPlane::NodeAction::kUncordon); }
void Api::DrainNode(Call& call) { ActOnNode(call, ControlPlane::NodeAction::kDrain); }

void Api::DeleteNode(Call& call) {
  Reply(call, plane_.DeleteNode(call.principal, call.param(0)), NodeView);
}

// --- The agent's side ---------------------------------------------------------------------------

void Api::RegisterNode(Call& call) {
  // Who is calling comes first: a stranger learns nothing about what a good body looks like.
  if (Status token = plane_.CheckJoinToken(call.bearer); !token.ok()) {
    return Finish(call, token, 0);
  }
  Result<json::object> body = ParseJsonObject(call.request.body);
  if (!body.ok()) return Finish(call, body.status(), 0);
  JsonFields fields(*body);
  NodeReport report = ReadNodeReport(fields, true);
  if (Status status = fields.Finish(); !status.ok()) return Finish(call, status, 0);
  if (report.address.empty()) report.address = call.request.remote_address;
  Reply(
      call, plane_.RegisterNode(call.bearer, std::move(report)),
      [](const std::pair<core::Node, std::string>& registered) {
        return json::object{{"node", NodeView(registered.first)}, {"token", registered.second}};
      },
      201);
}

void Api::Heartbeat(Call& call) {
  Result<json::object> body = ParseJsonObject(call.request.body);
  if (!body.ok()) return Finish(call, body.status(), 0);
  JsonFields fields(*body);
  NodeReport report = ReadNodeReport(fields, false);
  if (Status status = fields.Finish(); !status.ok()) return Finish(call, status, 0);
  if (report.address.empty()) report.address = call.request.remote_address;
  Reply(call, plane_.Heartbeat(call.principal, std::move(report)), NodeView);
}

void Api::AgentPods(Call& call) {
  int64_t after = -1;
  int64_t wait_s = 0;
  const auto number = [&](std::string_view name, int64_t* out, int64_t max) {
    const std::optional<std::string> text = call.request.QueryValue(name);
    if (!text) return true;
    try {
      size_t used = 0;
      *out = std::stoll(*text, &used);
      return used == text->size() && *out >= -1 && *out <= max;
    } catch (const std::exception&) {
      return false;
    }
  };
  if (!number("after", &after, INT64_MAX) ||
      !number("wait_s", &wait_s, plane_.long_poll_limit_s())) {
    return Finish(call,
                  core::InvalidArgumentError(fmt::format(
                      "after must be a generation and wait_s 0 to {}", plane_.long_poll_limit_s())),
                  0);
  }
  auto shared = std::make_shared<Call>(std::move(call));
  auto answer = [this, shared] {
    Result<DesiredPods> desired = plane_.DesiredFor(shared->principal);
    if (!desired.ok()) return Finish(*shared, desired.status(), 0);
    json::array pods;
    for (const core::Pod& pod : desired->pods) {
      json::object view = PodView(pod, shared->principal);
      json::array keys;
      for (const std::string& key : desired->ssh_keys[pod.owner_id]) keys.emplace_back(key);
      view["ssh_keys"] = std::move(keys);
      pods.emplace_back(std::move(view));
    }
    // A binding is durable before an agent sees it.
    Finish(
        *shared,
        json::value(json::object{{"generation", desired->generation}, {"pods", std::move(pods)}}),
        queue_.submitted());
  };
  plane_.WhenNodeChanges(shared->principal, after, clock_.Now() + std::chrono::seconds(wait_s),
                         std::move(answer));
}

void Api::ReportPod(Call& call) {
  Result<json::object> body = ParseJsonObject(call.request.body);
  if (!body.ok()) return Finish(call, body.status(), 0);
  JsonFields fields(*body);
  PodReport report;
  std::string state, at;
  fields.Int64("seq", &report.seq, 1, INT64_MAX, true);
  fields.String("state", &state, true, 32);
  fields.String("at", &at, true, 40);
  fields.String("container_id", &report.container_id, false, 128);
  fields.String("message", &report.message, false, 1024);
  if (fields.Raw("ready") != nullptr) {
    bool ready = false;
    fields.Bool("ready", &ready);
    report.ready = ready;
  }
  core::PullProgress progress;
  if (fields.Object("pull", [&progress](JsonFields& pull) {
        pull.Int64("current_bytes", &progress.current_bytes, 0, INT64_MAX, true);
        pull.Int64("total_bytes", &progress.total_bytes, 0, INT64_MAX, true);
      })) {
    report.pull = progress;
  }
  int exit_code = 0;
  if (fields.Raw("exit_code") != nullptr) {
    fields.Int("exit_code", &exit_code, -1'000'000, 1'000'000);
    report.exit_code = exit_code;
  }
  fields.Objects("port_mappings", 64, [&report](JsonFields& mapping) {
    core::PortMapping parsed;
    mapping.Int("container_port", &parsed.container_port, 1, 65535, true);
    mapping.String("protocol", &parsed.protocol, true, 8);
    mapping.Int("host_port", &parsed.host_port, 1, 65535, true);
    report.port_mappings.push_back(std::move(parsed));
  });
  if (fields.ok()) {
    Result<core::PodState> parsed_state = core::ParsePodState(state);
    if (!parsed_state.ok() || *parsed_state == core::PodState::kPending) {
      fields.Fail(
          "state: must be starting, running, stopping, stopped, exited, failed or "
          "terminated");
    } else {
      report.state = *parsed_state;
    }
    Result<core::TimePoint> parsed_at = ParseTime(at);
    if (!parsed_at.ok()) {
      fields.Fail("at: " + parsed_at.status().message());
    } else {
      report.at = *parsed_at;
    }
  }
  if (Status status = fields.Finish(); !status.ok()) return Finish(call, status, 0);
  Reply(call, plane_.ReportPod(call.principal, call.param(0), report),
        [this, &call](const core::Pod& pod) { return PodView(pod, call.principal); });
}

// --- Relayed to a pod's node ---------------------------------------------------------------------

void Api::PodLogs(Call& call) {
  RelayRequest request;
  request.kind = RelayRequest::Kind::kLogs;
  if (const std::optional<std::string> tail = call.request.QueryValue("tail")) {
    const std::optional<int64_t> lines = ParseInteger(*tail, 0, 1'000'000);
    if (!lines) {
      return Finish(call,
                    core::InvalidArgumentError("tail: must be a number of lines, 0 to 1000000"), 0);
    }
    request.tail = static_cast<int>(*lines);
  }
  if (const std::optional<std::string> since = call.request.QueryValue("since")) {
    if (Result<core::TimePoint> parsed = ParseTime(*since); !parsed.ok()) {
      return Finish(call, core::InvalidArgumentError("since: " + parsed.status().message()), 0);
    }
    request.since = *since;
  }
  if (const std::optional<std::string> timestamps = call.request.QueryValue("timestamps")) {
    if (*timestamps != "true" && *timestamps != "false") {
      return Finish(call, core::InvalidArgumentError("timestamps: must be true or false"), 0);
    }
    request.timestamps = *timestamps == "true";
  }
  Result<PodPlacement> placement = plane_.Placement(call.principal, call.param(0));
  if (!placement.ok()) return Finish(call, placement.status(), 0);
  const core::Pod& pod = placement->pod;
  if (pod.node_id.empty()) {
    return Finish(call,
                  core::FailedPreconditionError(
                      "pod " + pod.id + " is " + std::string(core::PodStateName(pod.state)) +
                      " and on no node, so it has no logs: a pod's container, and its logs with "
                      "it, exist only while the pod is on a node"),
                  0);
  }
  request.pod_id = pod.id;
  RelayToNode(call, *placement, std::move(request));
}

void Api::ProxyToPod(Call& call) {
  const std::optional<int64_t> port = ParseInteger(call.param(1), 1, 65535);
  if (!port) {
    return Finish(call,
                  core::InvalidArgumentError(
                      "port: must be one of the pod's ports, e.g. /v1/pods/ID/proxy/8888/"),
                  0);
  }
  Result<PodPlacement> placement = plane_.Placement(call.principal, call.param(0));
  if (!placement.ok()) return Finish(call, placement.status(), 0);
  const core::Pod& pod = placement->pod;
  const bool has_port =
      std::any_of(pod.ports.begin(), pod.ports.end(),
                  [&](const core::PortSpec& spec) { return spec.container_port == *port; });
  if (!has_port) {
    return Finish(
        call,
        core::InvalidArgumentError(
            "port " + std::to_string(*port) + " is not one of pod " + pod.id + "'s ports" +
            (pod.ports.empty() ? " (it has none)" : " (" + PortList(pod.ports) + ")")),
        0);
  }
  if (pod.state != core::PodState::kRunning || pod.node_id.empty()) {
    return Finish(call,
                  core::FailedPreconditionError("pod " + pod.id + " is " +
                                                std::string(core::PodStateName(pod.state)) +
                                                "; only a running pod's ports can be reached"),
                  0);
  }
  RelayRequest request;
  request.kind = RelayRequest::Kind::kHttp;
  request.pod_id = pod.id;
  request.port = static_cast<int>(*port);
  request.method = call.request.method;
  request.target = PodTarget(call.request.target);
  // Never the user's suanli token: the pod is not to act as its owner. Host and the framing are
  // the agent's connection's own.
  request.headers = EndToEndHeaders(
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

void Api::RelayToNode(Call& call, const PodPlacement& placement, RelayRequest request) {
  if (!placement.node_reachable) {
    return Finish(
        call,
        core::UnavailableError("node " + placement.node_name + " of pod " + placement.pod.id +
                               " is unreachable (no heartbeat lately); its pods keep "
                               "running and can be reached again once it is back"),
        0);
  }
  auto shared = std::make_shared<Call>(std::move(call));
  const bool pod_page = request.kind == RelayRequest::Kind::kHttp;
  const Status submitted = relay_.Submit(
      placement.pod.node_id, placement.node_name, std::move(request),
      [this, shared, pod_page](net::HttpResponse answer) {
        if (pod_page) {
          answer.headers.emplace_back("content-security-policy", std::string(kPodPageSandbox));
        }
        Answer(*shared, std::move(answer));
      });
  if (!submitted.ok()) Answer(*shared, StatusResponse(submitted));
}

void Api::AgentRequests(Call& call) {
  constexpr int64_t kMaxPerPoll = 64;
  std::optional<int64_t> wait_s = 0;
  std::optional<int64_t> max = 16;
  if (const std::optional<std::string> text = call.request.QueryValue("wait_s")) {
    wait_s = ParseInteger(*text, 0, plane_.long_poll_limit_s());
  }
  if (const std::optional<std::string> text = call.request.QueryValue("max")) {
    max = ParseInteger(*text, 1, kMaxPerPoll);
  }
  if (!wait_s || !max) {
    return Finish(call,
                  core::InvalidArgumentError(fmt::format("wait_s must be 0 to {} and max 1 to {}",
                                                         plane_.long_poll_limit_s(), kMaxPerPoll)),
                  0);
  }
  auto shared = std::make_shared<Call>(std::move(call));
  relay_.Poll(shared->principal.node_id, clock_.Now() + std::chrono::seconds(*wait_s),
              static_cast<size_t>(*max), [this, shared](std::vector<RelayRequest> requests) {
                json::array list;
                for (RelayRequest& request : requests) {
                  json::object item{{"id", request.id}, {"pod_id", request.pod_id}};
                  if (request.kind == RelayRequest::Kind::kLogs) {
                    item["kind"] = "logs";
                    if (request.tail >= 0) item["tail"] = request.tail;
                    if (!request.since.empty()) item["since"] = request.since;
                    item["timestamps"] = request.timestamps;
                  } else {
                    item["kind"] = "http";
                    item["port"] = request.port;
                    item["method"] = request.method;
                    item["target"] = request.target;
                    json::array headers;
                    for (const auto& [name, value] : request.headers) {
                      headers.emplace_back(json::array{json::string(name), json::string(value)});
                    }
                    item["headers"] = std::move(headers);
                    item["body_base64"] = net::Base64Encode(request.body);
                  }
                  list.emplace_back(std::move(item));
                }
                Answer(*shared, JsonResponse(200, json::object{{"requests", std::move(list)}}));
              });
}

void Api::AnswerRequest(Call& call) {
  constexpr size_t kMaxHeaders = 128;
  Result<json::object> body = ParseJsonObject(call.request.body);
  if (!body.ok()) return Finish(call, body.status(), 0);
  JsonFields fields(*body);
  net::HttpResponse answer;
  std::string body_base64;
  fields.Int("status", &answer.status, 200, 599, true);
  fields.String("body_base64", &body_base64, false, size_t{4} << 20);
  net::Headers headers;
  if (const json::value* raw = fields.Raw("headers"); raw != nullptr) {
    if (!raw->is_array() || raw->as_array().size() > kMaxHeaders) {
      fields.Fail("headers: must be an array of at most " + std::to_string(kMaxHeaders) +
                  " [name, value] pairs");
    } else {
      for (const json::value& pair : raw->as_array()) {
        const json::array* items = pair.if_array();
        if (items == nullptr || items->size() != 2 || !(*items)[0].is_string() ||
            !(*items)[1].is_string() || !IsHeaderName((*items)[0].as_string()) ||
            !IsHeaderValue((*items)[1].as_string())) {
          fields.Fail(
              "headers: each must be [name, value]: a token for a name, a value without line "
              "breaks");
          break;
        }
        headers.emplace_back((*items)[0].as_string(), (*items)[1].as_string());
      }
    }
  }
  if (Status status = fields.Finish(); !status.ok()) return Finish(call, status, 0);
  Result<std::string> decoded = net::Base64Decode(body_base64);
  if (!decoded.ok()) {
    return Finish(call, core::InvalidArgumentError("body_base64: " + decoded.status().message()),
                  0);
  }
  answer.content_type = "application/octet-stream";
  for (const auto& [name, value] : headers) {
    if (LowerAscii(name) == "content-type") answer.content_type = value;
  }
  // Framing and our own Server header are this connection's; the rest is the pod's answer.
  answer.headers = EndToEndHeaders(headers, {"content-type", "content-length", "server"});
  // These statuses have no body (and Beast refuses to send one).
  if (answer.status != 204 && answer.status != 304) answer.body = std::move(*decoded);
  if (Status answered = relay_.Answer(call.principal.node_id, call.param(0), std::move(answer));
      !answered.ok()) {
    return Finish(call, answered, 0);
  }
  net::HttpResponse accepted;
  accepted.status = 204;
  Answer(call, std::move(accepted));
}

// --- OpenAPI ------------------------------------------------------------------------------------

json::object Api::OpenApiDocument() {
  json::object paths;
  for (const Route& route : RouteTable()) {
    json::object operation{{"summary", route.info.summary},
                           {"x-suanli-access", AccessName(route.info.access)}};
    json::array parameters;
    std::string_view rest = route.info.pattern;
    while (true) {
      const size_t open = rest.find('{');
      if (open == std::string_view::npos) break;
      const size_t close = rest.find('}', open);
      std::string_view name = rest.substr(open + 1, close - open - 1);
      json::object parameter{
          {"in", "path"}, {"required", true}, {"schema", json::object{{"type", "string"}}}};
      if (name.ends_with("...")) {
        name.remove_suffix(3);
        parameter["description"] = "The rest of the path, slashes included; may be empty";
      }
      parameter["name"] = name;
      parameters.emplace_back(std::move(parameter));
      rest.remove_prefix(close + 1);
    }
    if (!parameters.empty()) operation["parameters"] = std::move(parameters);
    if (route.info.access != Access::kPublic) {
      operation["security"] = json::array{json::object{{"bearer", json::array{}}}};
    }
    if (route.info.method == "POST" || route.info.method == "PUT" || route.info.method == "PATCH") {
      // A proxied body is the pod's business, in any format.
      const bool proxied = route.info.pattern.ends_with("...}");
      operation["requestBody"] = json::object{
          {"content", json::object{{proxied ? "*/*" : "application/json",
                                    json::object{{"schema", json::object{{"type", "object"}}}}}}}};
    }
    operation["responses"] = json::object{
        {"200", json::object{{"description", "OK (201 for a create)"}}},
        {"default",
         json::object{
             {"description", "An error"},
             {"content",
              json::object{{"application/json",
                            json::object{{"schema", json::object{{"$ref",
                                                                  "#/components/"
                                                                  "schemas/Error"}}}}}}}}}};
    std::string method(route.info.method);
    for (char& c : method) c = static_cast<char>(std::tolower(c));
    json::value& path = paths[OpenApiPath(route.info.pattern)];
    if (!path.is_object()) path = json::object();
    path.as_object()[method] = std::move(operation);
  }
  json::object string_type{{"type", "string"}};
  json::object error_fields{{"code", string_type}, {"message", string_type}};
  json::object error_body{{"type", "object"},
                          {"required", json::array{"code", "message"}},
                          {"properties", std::move(error_fields)}};
  json::object error_schema{{"type", "object"},
                            {"required", json::array{"error"}},
                            {"properties", json::object{{"error", std::move(error_body)}}}};
  return json::object{
      {"openapi", "3.0.3"},
      {"info", json::object{{"title", "suanli API"},
                            {"version", "1"},
                            {"description",
                             "A self-hosted GPU cloud. Money is integer micro-dollars (*_micros); "
                             "times are RFC 3339 UTC."}}},
      {"paths", std::move(paths)},
      {"components",
       json::object{
           {"securitySchemes",
            json::object{{"bearer", json::object{{"type", "http"}, {"scheme", "bearer"}}}}},
           {"schemas", json::object{{"Error", std::move(error_schema)}}}}}};
}

}  // namespace suanli::server
