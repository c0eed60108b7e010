#include "server/routes/call.h"

#include <fmt/format.h>

#include <boost/json/serialize.hpp>
#include <cstring>
#include <memory>

#include "server/audit.h"
#include "server/secrets.h"

namespace suanli::server {

namespace {

uint64_t Nonce(core::Entropy& entropy) {
  const std::string bytes = entropy.Bytes(sizeof(uint64_t));
  uint64_t nonce = 0;
  std::memcpy(&nonce, bytes.data(), sizeof(nonce));
  return nonce;
}

}  // namespace

Services::Services(ControlPlane& plane_in, store::CommitQueue& queue_in, core::Clock& clock_in,
                   core::Entropy& entropy, RelayOptions relay_options,
                   std::span<const RouteInfo> routes, net::OutboundPolicy webhook_policy_in)
    : plane(plane_in),
      queue(queue_in),
      clock(clock_in),
      webhook_policy(std::move(webhook_policy_in)),
      zoo(advisor::LoadBuiltInModelZoo().value()),  // embedded and tested: cannot fail here
      metrics(routes.size()),
      route_table(routes.begin(), routes.end()),
      pod_list(Nonce(entropy)),
      relay(
          clock_in, [&entropy] { return "rly_" + HexEncode(entropy.Bytes(12)); }, relay_options) {
  for (const RouteInfo& route : routes) {
    metric_labels.push_back(fmt::format(R"(method="{}",route="{}")", route.method, route.pattern));
  }
  pusher = std::make_unique<JobPusher>(plane, relay);
}

Services::~Services() { pusher->Stop(); }

Call::Call(Services& services, net::HttpRequest&& request_in, net::Responder respond)
    : request(std::move(request_in)),
      services_(&services),
      respond_(std::move(respond)),
      started_(core::MonotonicNow()) {}

uint64_t Call::Audit(int status, std::string_view body) {
  if (audited_ || route == kNoRoute || !IsAudited(services_->route_table[route])) return 0;
  audited_ = true;
  return plane().RecordAudit(
      AuditEntryFor(services_->route_table[route], principal, params, status, body));
}

void Call::Respond(net::HttpResponse response) {
  Audit(response.status, response.body);
  // Requests no route matched count in the series after the last route's.
  services_->metrics.Record(route == kNoRoute ? services_->metric_labels.size() : route,
                            response.status, core::MonotonicNow() - started_);
  respond_(std::move(response));
}

void Call::Respond(const core::Status& error) {
  Respond(net::ErrorResponse(core::HttpStatusFor(error.code()), core::StatusCodeName(error.code()),
                             error.message()));
}

void Call::Respond(const boost::json::value& body, uint64_t sequence, int status) {
  RespondWhenDurable(boost::json::serialize(body), sequence, status);
}

void Call::Respond(core::Result<Written<std::string>> json_text, int status) {
  if (!json_text.ok()) return Respond(json_text.status());
  RespondWhenDurable(std::move(json_text->value), json_text->sequence, status);
}

void Call::Respond(core::Result<Written<TaggedJson>> answer) {
  if (!answer.ok()) return Respond(answer.status());
  RespondWhenDurable(std::move(answer->value.json), answer->sequence, 200,
                     std::move(answer->value.etag));
}

void Call::RespondWhenDurable(std::string json_body, uint64_t sequence, int status,
                              std::string etag) {
  // Answer once everything the answer reflects is durable: a client never sees a write that a
  // crash could still take back. Serialized before waiting, so the writer thread does not.
  sequence = std::max(sequence, Audit(status, json_body));
  auto shared = std::make_shared<Call>(std::move(*this));
  auto response = std::make_shared<net::HttpResponse>();
  response->status = status;
  response->body = std::move(json_body);
  shared->queue().AfterDurable(
      sequence, [shared, response, etag = std::move(etag)](const core::Status& durable) {
        if (!durable.ok()) {
          shared->Respond(
              core::UnavailableError("the store could not save this (" + durable.message() +
                                     "); nothing was changed, and the server must be restarted"));
          return;
        }
        if (response->status == 200 && shared->request.method == "GET") {
          if (etag.empty()) {
            AddEntityTag(shared->request, *response);
          } else {
            AddEntityTag(shared->request, *response, etag);
          }
        }
        shared->Respond(std::move(*response));
      });
}

}  // namespace suanli::server
