// Routes: the rows of the API's route table, a group per resource file under routes/.
//
// Each routes/<resource>.cc defines its handlers in an anonymous namespace and exports its rows
// here; the router (api.cc) joins the groups in a fixed order, which is the table's: it decides
// which of two patterns that both match a path is tried first, and the OpenAPI document and the
// metrics list the routes in it. A new route is a row and a handler in its resource's file; a new
// resource adds its group here and to the router's list.
//
// Internal to the API.
#pragma once

#include <span>

#include "server/api.h"
#include "server/routes/call.h"

namespace suanli::server {

// Runs after the router has authenticated the caller (Call::principal) and checked the route's
// Access; answers the call exactly once, through Call::Respond.
using Handler = void (*)(Call& call);

struct Route {
  RouteInfo info;
  Handler handler;
};

// In the table's order.
std::span<const Route> MetaRoutes();           // meta.cc: health, metrics, the OpenAPI document
std::span<const Route> CatalogRoutes();        // catalog_and_advice.cc: GPUs, models, advice
std::span<const Route> UserRoutes();           // users.cc
std::span<const Route> TokenAndKeyRoutes();    // tokens_and_keys.cc: API tokens, SSH keys
std::span<const Route> TemplateRoutes();       // templates.cc
std::span<const Route> PodRoutes();            // pods.cc
std::span<const Route> PodRelayRoutes();       // relay.cc: a pod's logs, its ports' HTTP
std::span<const Route> BillingRoutes();        // billing.cc: balance, ledger, usage
std::span<const Route> NodeRoutes();           // nodes.cc: join tokens, nodes
std::span<const Route> PriceRoutes();          // billing.cc: GPU prices
std::span<const Route> AgentRoutes();          // agent.cc: the node agent's protocol
std::span<const Route> AgentRelayRoutes();     // relay.cc: the agent's side of the relay
std::span<const Route> EndpointRoutes();       // endpoints.cc: serverless endpoints
std::span<const Route> ServerlessJobRoutes();  // serverless_jobs.cc: /v2, RunPod's job API
std::span<const Route> EventRoutes();          // events.cc: the event stream, the audit log
std::span<const Route> WebhookRoutes();        // webhooks.cc: event webhooks
std::span<const Route> VolumeRoutes();         // volumes.cc: volumes, and their moves' data
std::span<const Route> ProjectRoutes();        // projects.cc: teams' projects and members

// Whether a project token (Principal::project_id) may call the route: its project's pods (their
// logs and ports too), reading its project, the caller's own user, and the catalog, templates and
// advice. Not the account's other things: tokens, keys, volumes, endpoints, billing, webhooks.
bool ProjectTokenReaches(const RouteInfo& route);  // projects.cc

}  // namespace suanli::server
