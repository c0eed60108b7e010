// Call: one API request on its way from the router to its handler and back, with the one way to
// answer it (Respond), and the Services every handler works with.
//
// Respond records the request's metrics and sends the answer; its forms that carry a store
// sequence first wait until the store holds everything up to that sequence: a client never sees
// a write that a crash could still take back. A handler answers exactly once, by one Respond; a
// Call it hands to a callback (a long poll, the relay) moves into a shared_ptr first.
//
// Internal to the API (api.cc and routes/*.cc). Thread-compatible: a Call is used by one thread
// at a time; Services is shared by all and thread-safe.
#pragma once

#include <boost/json/value.hpp>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "advisor/model_zoo.h"
#include "core/clock.h"
#include "core/entropy.h"
#include "core/status.h"
#include "net/http.h"
#include "net/http_server.h"
#include "net/outbound_policy.h"
#include "server/api.h"
#include "server/control_plane.h"
#include "server/job_pusher.h"
#include "server/metrics.h"
#include "server/relay.h"
#include "server/routes/entity_tag.h"
#include "server/routes/pod_list.h"

namespace suanli::server {

// The control plane and what the Api owns around it, for the handlers. Created once per Api and
// alive while any of its calls is (the Api owns it).
struct Services {
  // `routes`: the route table, for the metrics. `entropy` makes the relay's request ids.
  Services(ControlPlane& plane, store::CommitQueue& queue, core::Clock& clock,
           core::Entropy& entropy, RelayOptions relay_options, std::span<const RouteInfo> routes,
           net::OutboundPolicy webhook_policy);
  // Stops the pusher, so that the relay's answers to what waits, as it goes, are dropped.
  ~Services();
  Services(const Services&) = delete;
  Services& operator=(const Services&) = delete;

  ControlPlane& plane;
  store::CommitQueue& queue;
  core::Clock& clock;
  const net::OutboundPolicy webhook_policy;  // which addresses a webhook may be made to call
  const advisor::ModelZoo zoo;
  RequestMetrics metrics;  // one series per route, then one for requests no route matched
  // `method="GET",route="/v1/pods"` per route, in the table's order.
  std::vector<std::string> metric_labels;
  std::vector<RouteInfo> route_table;  // for the audit log
  PodList pod_list;
  // Posts http-mode endpoints' jobs through the relay; made once the relay is, stopped first and
  // destroyed after it (the relay's last answers reach it).
  std::unique_ptr<JobPusher> pusher;
  // Last: destroyed first, answering what still waits while the metrics it records into live.
  Relay relay;
};

class Call {
 public:
  static constexpr size_t kNoRoute = static_cast<size_t>(-1);

  // Starts the request's latency clock.
  Call(Services& services, net::HttpRequest&& request, net::Responder respond);
  Call(Call&&) = default;
  Call(const Call&) = delete;
  Call& operator=(const Call&) = delete;

  net::HttpRequest request;
  std::vector<std::string> params;  // the {…} segments of the pattern, in order
  Principal principal;              // who is calling; empty for a public route
  std::string bearer;               // the Authorization header's token, if any
  size_t route = kNoRoute;          // the index in the route table

  const std::string& param(size_t index) const { return params.at(index); }

  ControlPlane& plane() const { return services_->plane; }
  store::CommitQueue& queue() const { return services_->queue; }
  core::Clock& clock() const { return services_->clock; }
  const advisor::ModelZoo& zoo() const { return services_->zoo; }
  Relay& relay() const { return services_->relay; }
  const net::OutboundPolicy& webhook_policy() const { return services_->webhook_policy; }
  PodList& pod_list() const { return services_->pod_list; }
  const Services& services() const { return *services_; }

  // Answers now: for what reflects no write (the console, the catalog, metrics, relayed answers).
  void Respond(net::HttpResponse response);
  // Answers with `error`'s HTTP status and the API's error body; nothing was changed.
  // REQUIRES: !error.ok().
  void Respond(const core::Status& error);
  // Answers `body` with `status` once everything up to store sequence `sequence` is durable (a
  // write's Written::sequence; for a read, queue().submitted()). *this is moved from after.
  void Respond(const boost::json::value& body, uint64_t sequence, int status = 200);
  // The same for a body already written as JSON text (by the control plane or a wire Encode); or
  // its error.
  void Respond(core::Result<Written<std::string>> json_text, int status = 200);
  // A read whose handler made its entity tag from what the answer shows (TaggedJson), answered
  // 200 with that tag, or 304 when the request's If-None-Match names it; or its error.
  void Respond(core::Result<Written<TaggedJson>> answer);
  // The control plane's answer: its error, or `view(value)` once durable, with `status`.
  template <typename T, typename View>
  void Respond(core::Result<Written<T>> result, View view, int status = 200) {
    if (!result.ok()) return Respond(result.status());
    Respond(boost::json::value(view(result->value)), result->sequence, status);
  }

 private:
  // The durability wait: every durable Respond ends here. A GET answered 200 gets `etag`, or
  // a hash of its body when `etag` is empty.
  void RespondWhenDurable(std::string json_body, uint64_t sequence, int status,
                          std::string etag = {});
  // Records the call in the audit log when its route is audited (server/audit.h), once; returns
  // the store sequence that makes the entry durable (0: nothing recorded).
  uint64_t Audit(int status, std::string_view body);

  Services* services_;  // never null
  net::Responder respond_;
  core::MonotonicTime started_;
  bool audited_ = false;
};

}  // namespace suanli::server
