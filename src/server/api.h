// Api: the REST API under /v1, /healthz and /metrics, over a ControlPlane.
//
// One table of routes {method, path pattern, who may call, summary, handler}: the router, the
// OpenAPI document (/v1/openapi.json) and the metrics' labels all come from it, so they cannot
// drift apart. The router (api.cc) matches a request to its route, authenticates the caller and
// checks the route's RouteAccess; the handlers live in a file per resource under routes/, each file
// owning its rows of the table (routes/routes.h). A handler decodes the request, calls the
// control plane and encodes the answer, which goes out only once the change (or, for a read,
// everything it could have seen) is durable in the store (routes/call.h).
//
// A pod's logs and HTTP requests to its ports go through the Relay (relay.h): queued for the pod's
// node, taken and answered by its agent, which dials out like for everything else.
//
// Thread-safe: Handle runs on the HTTP threads; all state is in the control plane, the commit
// queue, the relay and lock-free metrics.
#pragma once

#include <boost/json/object.hpp>
#include <memory>
#include <span>
#include <string_view>

#include "core/clock.h"
#include "core/entropy.h"
#include "net/http.h"
#include "net/http_server.h"
#include "net/outbound_policy.h"
#include "server/control_plane.h"
#include "server/relay.h"

namespace suanli::server {

enum class RouteAccess {
  kPublic,  // no token
  kUser,    // any person's API token
  kAdmin,   // an admin's API token
  kNode,    // a node agent's token
  kJoin,    // a join token (agent registration)
  // A person's API token, or, with none, the pod's link token (a browser opening a pod's port
  // through the proxy: ?suanli_link= once, then a cookie scoped to that pod's proxy paths).
  kUserOrPodLink,
  // A serverless worker's own token (not an API token), checked by the handler: RunPod's worker
  // library sends it without "Bearer".
  kWorker,
};

// The pod link's query parameter and cookie (RouteAccess::kUserOrPodLink).
inline constexpr std::string_view kPodLinkName = "suanli_link";

struct RouteInfo {
  std::string_view method;
  std::string_view pattern;  // "/v1/pods/{id}"
  RouteAccess access;
  std::string_view summary;
};

struct Services;  // what the handlers work with (routes/call.h)

// RunPod's payload limits: the body of POST /v2/{endpoint}/run and of /runsync.
inline constexpr size_t kRunBodyLimit = size_t{10} << 20;
inline constexpr size_t kRunSyncBodyLimit = size_t{20} << 20;

// The largest request body the route of `method` and `target` (path and query, as sent) takes:
// kRunBodyLimit and kRunSyncBodyLimit for the job API's submissions, `default_limit` (the server's
// --max-body) for every other request; never below `default_limit`. (routes/serverless_jobs.cc)
size_t BodyLimitFor(std::string_view method, std::string_view target, size_t default_limit);

class Api {
 public:
  // `entropy` makes the relay's request ids; `webhook_policy`, which addresses a webhook may be
  // made to call (its default refuses every internal one). All references must outlive the Api.
  Api(ControlPlane& plane, store::CommitQueue& queue, core::Clock& clock, core::Entropy& entropy,
      RelayOptions relay_options = {}, net::OutboundPolicy webhook_policy = {});
  Api(const Api&) = delete;
  Api& operator=(const Api&) = delete;
  // Answers what still waits in the relay.
  ~Api();

  void Handle(net::HttpRequest&& request, net::Responder respond);

  // The route table, in its fixed order (the OpenAPI document and the metrics follow it).
  static std::span<const RouteInfo> Routes();
  static boost::json::object OpenApiDocument();

 private:
  std::unique_ptr<Services> services_;
};

}  // namespace suanli::server
