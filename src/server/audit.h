// The audit log: which calls go in it, and what an entry of one says. The router's one way to
// answer (routes/call.cc) records the entry before the answer leaves, and a durable answer waits
// for it too, so an acknowledged change always has its entry.
//
// Logged: every call of a mutating method (not GET or HEAD) on a route for people or for joining
// nodes, refused ones included (a bad token, a 403, a 400). Not logged: agents' reports and long
// polls (a node's heartbeat every few seconds is not an action), POST /v1/advise (a question),
// serverless workers' calls, the proxy to pods' ports (traffic to a pod, not a call to the cloud)
// and the public routes.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/event.h"
#include "server/api.h"
#include "server/control_plane.h"

namespace suanli::server {

bool IsAudited(const RouteInfo& route);

// The entry for a call of `route` by `caller` (empty when unauthenticated) with path parameters
// `params`, answered with `status` and `body`: the object is the first path parameter, or the
// "id" of what a create (201) answered; an error's code comes from the API's error body.
core::AuditEntry AuditEntryFor(const RouteInfo& route, const Principal& caller,
                               const std::vector<std::string>& params, int status,
                               std::string_view body);

}  // namespace suanli::server
