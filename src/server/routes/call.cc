#include "server/routes/call.h"

#include <fmt/format.h>

#include <boost/json/serialize.hpp>
#include <memory>

#include "server/audit.h"
#include "server/secrets.h"

namespace suanli::server {

Services::Services(ControlPlane& plane_in, store::CommitQueue& queue_in, core::Clock& clock_in,
                   core::Entropy& entropy, RelayOptions relay_options,
                   std::span<const RouteInfo> routes)
    : plane(plane_in),
      queue(queue_in),
      clock(clock_in),
      zoo(advisor::LoadBuiltInModelZoo().value()),  // embedded and tested: cannot fail here
      metrics(routes.size()),
      route_table(routes.begin(), routes.end()),
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

void Call::RespondWhenDurable(std::string json_body, uint64_t sequence, int status) {
  // Answer once everything the answer reflects is durable: a client never sees a write that a
  // crash could still take back. Serialized before waiting, so the writer thread does not.
  sequence = std::max(sequence, Audit(status, json_body));
  auto shared = std::make_shared<Call>(std::move(*this));
  auto response = std::make_shared<net::HttpResponse>();
  response->status = status;
  response->body = std::move(json_body);
  shared->queue().AfterDurable(sequence, [shared, response](const core::Status& durable) {
    if (!durable.ok()) {
      shared->Respond(
          core::UnavailableError("the store could not save this (" + durable.message() +
                                 "); nothing was changed, and the server must be restarted"));
      return;
    }
    if (response->status == 200 && shared->request.method == "GET") {
      AddEntityTag(shared->request, *response);
    }
    shared->Respond(std::move(*response));
  });
}

namespace {

// The body's hash: a change of any byte changes the tag. Not a defence against anyone (the tag
// only spares a poller the bytes of an answer it already has), so no cryptographic hash;
// libstdc++'s string hash (MurmurHash2, not randomized) reads 8 bytes a step, where FNV-1a's byte
// at a time cost a 120 KB list about a tenth of its answer time.
uint64_t BodyHash(std::string_view text) { return std::hash<std::string_view>()(text); }

// Whether an If-None-Match value ("\"a\", W/\"b\"" or "*") names `tag`.
bool Matches(std::string_view if_none_match, std::string_view tag) {
  while (!if_none_match.empty()) {
    const size_t comma = if_none_match.find(',');
    std::string_view item = if_none_match.substr(0, comma);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    if (item.starts_with("W/")) item.remove_prefix(2);
    if (item == tag || item == "*") return true;
    if (comma == std::string_view::npos) break;
    if_none_match.remove_prefix(comma + 1);
  }
  return false;
}

}  // namespace

void AddEntityTag(const net::HttpRequest& request, net::HttpResponse& response) {
  const std::string tag = fmt::format("\"{:016x}\"", BodyHash(response.body));
  response.headers.emplace_back("ETag", tag);
  // Browsers keep the answer but ask again each time, with If-None-Match: the console's polls
  // then cost a 304 while nothing changed.
  response.headers.emplace_back("Cache-Control", "private, no-cache");
  if (const std::optional<std::string> asked = request.Header("if-none-match");
      asked && Matches(*asked, tag)) {
    response.status = 304;
    response.body.clear();
  }
}

}  // namespace suanli::server
