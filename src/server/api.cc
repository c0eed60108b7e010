// The router: the route table joined from the resource files, path matching, authentication and
// the routes' RouteAccess, and the pod link's cookie flow.
#include "server/api.h"

#include <memory>
#include <string>
#include <vector>

#include "server/console.h"
#include "server/openapi.h"
#include "server/routes/call.h"
#include "server/routes/routes.h"

namespace suanli::server {

using core::Result;

namespace {

std::span<const Route> RouteTable() {
  static const std::vector<Route> kRoutes = [] {
    std::vector<Route> routes;
    for (std::span<const Route> group :
         {MetaRoutes(), CatalogRoutes(), UserRoutes(), TokenAndKeyRoutes(), TemplateRoutes(),
          PodRoutes(), PodRelayRoutes(), BillingRoutes(), NodeRoutes(), PriceRoutes(),
          AgentRoutes(), AgentRelayRoutes(), EndpointRoutes(), ServerlessJobRoutes(), EventRoutes(),
          WebhookRoutes(), VolumeRoutes(), ProjectRoutes()}) {
      routes.insert(routes.end(), group.begin(), group.end());
    }
    return routes;
  }();
  return kRoutes;
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

// For a kUserOrPodLink route called without an API token: when the request carries the pod's
// link (query or cookie), answers it (a redirect that sets the cookie, an error, or the route run
// as the pod's owner) and returns true; false when it carries none.
bool FollowPodLink(Call& call) {
  const std::string& pod_id = call.params.front();
  std::optional<std::string> link = call.request.QueryValue(kPodLinkName);
  const bool in_query = link.has_value();
  if (!in_query) link = net::CookieValue(call.request.Header("cookie").value_or(""), kPodLinkName);
  if (!link) return false;  // then it needs an API token
  Result<Principal> owner = call.plane().AuthenticatePodLink(pod_id, *link);
  if (!owner.ok()) {
    call.Respond(owner.status());
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
    call.Respond(std::move(redirect));
    return true;
  }
  call.principal = *owner;
  RouteTable()[call.route].handler(call);
  return true;
}

}  // namespace

std::span<const RouteInfo> Api::Routes() {
  static const std::vector<RouteInfo> kInfos = [] {
    std::vector<RouteInfo> infos;
    for (const Route& route : RouteTable()) infos.push_back(route.info);
    return infos;
  }();
  return kInfos;
}

boost::json::object Api::OpenApiDocument() { return MakeOpenApiDocument(Routes()); }

Api::Api(ControlPlane& plane, store::CommitQueue& queue, core::Clock& clock, core::Entropy& entropy,
         RelayOptions relay_options, net::OutboundPolicy webhook_policy)
    : services_(std::make_unique<Services>(plane, queue, clock, entropy, relay_options, Routes(),
                                           std::move(webhook_policy))) {}

Api::~Api() = default;

void Api::Handle(net::HttpRequest&& request, net::Responder respond) {
  Call call(*services_, std::move(request), std::move(respond));
  // The console's files are not API routes (not in the OpenAPI document, no token).
  if (call.request.method == "GET" || call.request.method == "HEAD") {
    if (std::optional<net::HttpResponse> file = ConsoleFile(call.request.path)) {
      call.Respond(std::move(*file));
      return;
    }
  }
  bool path_known = false;
  const std::span<const Route> routes = RouteTable();
  for (size_t i = 0; i < routes.size(); ++i) {
    if (!MatchPath(routes[i].info.pattern, call.request.path, &call.params)) continue;
    path_known = true;
    if (routes[i].info.method == call.request.method) {
      call.route = i;
      break;
    }
  }
  if (call.route == Call::kNoRoute) {
    call.Respond(path_known ? net::ErrorResponse(405, "METHOD_NOT_ALLOWED",
                                                 call.request.method + " is not allowed on " +
                                                     call.request.path + " (see /v1/openapi.json)")
                            : net::ErrorResponse(
                                  404, "NOT_FOUND",
                                  "no route " + call.request.path + " (see /v1/openapi.json)"));
    return;
  }
  const Route& route = routes[call.route];
  if (route.info.access != RouteAccess::kPublic && route.info.access != RouteAccess::kWorker) {
    const std::string authorization = call.request.Header("authorization").value_or("");
    if (authorization.starts_with("Bearer ")) call.bearer = authorization.substr(7);
    if (route.info.access == RouteAccess::kUserOrPodLink && call.bearer.empty() &&
        FollowPodLink(call)) {
      return;
    }
    if (route.info.access != RouteAccess::kJoin) {
      Result<Principal> principal = call.plane().Authenticate(call.bearer);
      if (!principal.ok()) {
        call.Respond(principal.status());
        return;
      }
      call.principal = *principal;
      const bool is_node = !call.principal.node_id.empty();
      if (route.info.access == RouteAccess::kNode && !is_node) {
        call.Respond(core::PermissionDeniedError("only a node's agent may call " +
                                                 std::string(route.info.pattern)));
        return;
      }
      if (route.info.access != RouteAccess::kNode && is_node) {
        call.Respond(core::PermissionDeniedError("a node's token cannot call " +
                                                 std::string(route.info.pattern)));
        return;
      }
      if (route.info.access == RouteAccess::kAdmin && !call.principal.is_admin()) {
        call.Respond(core::PermissionDeniedError("only an admin may call " +
                                                 std::string(route.info.method) + " " +
                                                 std::string(route.info.pattern)));
        return;
      }
      if (call.principal.read_only && route.info.method != "GET" && route.info.method != "HEAD") {
        call.Respond(core::PermissionDeniedError(
            "this API token is read-only: it cannot call " + std::string(route.info.method) + " " +
            std::string(route.info.pattern) +
            "; use a full token (suanli tokens create NAME makes one)"));
        return;
      }
      if (!call.principal.project_id.empty() && !ProjectTokenReaches(route.info)) {
        call.Respond(core::PermissionDeniedError(
            "this API token is scoped to project " + call.principal.project_id +
            ": it reaches that project's pods and the catalog, not " +
            std::string(route.info.method) + " " + std::string(route.info.pattern) +
            "; use an account token"));
        return;
      }
    }
  }
  route.handler(call);
}

}  // namespace suanli::server
