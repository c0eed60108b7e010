// Api: the REST API under /v1, /healthz and /metrics, over a ControlPlane.
//
// One table of routes {method, path pattern, who may call, summary, handler}: the router, the
// OpenAPI document (/v1/openapi.json) and the metrics' labels all come from it, so they cannot
// drift apart. A handler parses and checks the request, calls the control plane, and answers only
// once the change (or, for a read, everything it could have seen) is durable in the store.
//
// A pod's logs and HTTP requests to its ports go through the Relay (relay.h): queued for the pod's
// node, taken and answered by its agent, which dials out like for everything else.
//
// Thread-safe: Handle runs on the HTTP threads; all state is in the control plane, the commit
// queue, the relay and lock-free metrics.
#pragma once

#include <boost/json/object.hpp>
#include <span>
#include <string>
#include <string_view>

#include "advisor/model_zoo.h"
#include "net/http.h"
#include "net/http_server.h"
#include "server/control_plane.h"
#include "server/json_fields.h"
#include "server/metrics.h"
#include "server/relay.h"

namespace suanli::server {

enum class Access {
  kPublic,  // no token
  kUser,    // any person's API token
  kAdmin,   // an admin's API token
  kNode,    // a node agent's token
  kJoin,    // a join token (agent registration)
  // A person's API token, or, with none, the pod's link token (a browser opening a pod's port
  // through the proxy: ?suanli_link= once, then a cookie scoped to that pod's proxy paths).
  kUserOrPodLink,
};

struct RouteInfo {
  std::string_view method;
  std::string_view pattern;  // "/v1/pods/{id}"
  Access access;
  std::string_view summary;
};

class Api {
 public:
  Api(ControlPlane& plane, store::CommitQueue& queue, core::Clock& clock,
      RelayOptions relay_options = {});
  Api(const Api&) = delete;
  Api& operator=(const Api&) = delete;

  void Handle(net::HttpRequest&& request, net::Responder respond);

  static std::span<const RouteInfo> Routes();
  static boost::json::object OpenApiDocument();

 private:
  struct Call;
  using Handler = void (Api::*)(Call& call);
  struct Route;
  static std::span<const Route> RouteTable();

  void Finish(Call& call, core::Result<boost::json::value> result, uint64_t sequence,
              int created_status = 200);
  void FinishText(Call& call, std::string json_body, uint64_t sequence, int status = 200);
  void Answer(Call& call, net::HttpResponse response);
  // For a kUserOrPodLink route called without an API token: when the request carries the pod's
  // link (query or cookie), answers it (a redirect that sets the cookie, an error, or the route
  // run as the pod's owner) and returns true; false when it carries none.
  bool FollowPodLink(Call& call);
  template <typename T, typename View>
  void Reply(Call& call, core::Result<Written<T>> result, View view, int status = 200);

  void Healthz(Call& call);
  void Metrics(Call& call);
  void OpenApi(Call& call);
  void Gpus(Call& call);
  void Availability(Call& call);
  void CreateUser(Call& call);
  void ListUsers(Call& call);
  void GetUser(Call& call);
  void AddCredits(Call& call);
  void UpdateMe(Call& call);
  void ListTokens(Call& call);
  void CreateToken(Call& call);
  void RevokeToken(Call& call);
  void ListSshKeys(Call& call);
  void AddSshKey(Call& call);
  void DeleteSshKey(Call& call);
  void ListTemplates(Call& call);
  void CreateTemplate(Call& call);
  void GetTemplate(Call& call);
  void DeleteTemplate(Call& call);
  void ListPods(Call& call);
  void CreatePod(Call& call);
  void GetPod(Call& call);
  void StopPod(Call& call);
  void StartPod(Call& call);
  void RestartPod(Call& call);
  void TerminatePod(Call& call);
  void PodTransitions(Call& call);
  void PodLogs(Call& call);
  void ProxyToPod(Call& call);
  void Balance(Call& call);
  void LedgerEntries(Call& call);
  void Usage(Call& call);
  void ListJoinTokens(Call& call);
  void CreateJoinToken(Call& call);
  void DeleteJoinToken(Call& call);
  void ListNodes(Call& call);
  void GetNode(Call& call);
  void CordonNode(Call& call);
  void UncordonNode(Call& call);
  void DrainNode(Call& call);
  void DeleteNode(Call& call);
  void SetPrice(Call& call);
  void RegisterNode(Call& call);
  void Heartbeat(Call& call);
  void AgentPods(Call& call);
  void ReportPod(Call& call);
  void AgentRequests(Call& call);
  void AnswerRequest(Call& call);

  void ActOnPod(Call& call, core::PodAction action);
  // Queues `request` for the pod's node and answers `call` with what its agent sends back.
  void RelayToNode(Call& call, const PodPlacement& placement, RelayRequest request);
  void ActOnNode(Call& call, ControlPlane::NodeAction action);
  // The pod as `viewer` may see it (only its owner and its node's agent see the Jupyter token).
  boost::json::object PodView(const core::Pod& pod, const Principal& viewer) const;
  std::optional<advisor::Workload> ReadWorkload(JsonFields& fields) const;
  void Advise(Call& call);
  void Models(Call& call);

  ControlPlane& plane_;
  store::CommitQueue& queue_;
  core::Clock& clock_;
  advisor::ModelZoo zoo_;
  RequestMetrics metrics_;
  std::vector<std::string> metric_labels_;
  // Last: destroyed first, answering what still waits while the metrics it records into live.
  Relay relay_;
};

}  // namespace suanli::server
