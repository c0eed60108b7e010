// Routes for a person's event webhooks (event_webhooks.h delivers them): create, list with their
// delivery log, delete.
#include "server/webhooks.h"

#include <boost/json/value.hpp>
#include <string>
#include <vector>

#include "server/routes/request_fields.h"
#include "server/routes/routes.h"
#include "server/routes/views.h"

namespace suanli::server {
namespace {

namespace json = boost::json;
using core::Result;
using core::Status;

json::object WebhookView(const EventWebhookInfo& info) {
  json::array kinds;
  for (const std::string& kind : info.hook.kinds) kinds.emplace_back(kind);
  json::array deliveries;
  for (const WebhookAttempt& attempt : info.deliveries) {
    deliveries.emplace_back(json::object{{"at", core::FormatTime(attempt.at)},
                                         {"event_id", attempt.event_id},
                                         {"kind", attempt.kind},
                                         {"status", attempt.status},
                                         {"error", attempt.error}});
  }
  return {{"id", info.hook.id},
          {"owner_id", info.hook.owner_id},
          {"url", info.hook.url},
          {"secret", info.hook.secret},
          {"kinds", std::move(kinds)},
          {"delivered_through", info.hook.delivered_seq},
          {"created_at", core::FormatTime(info.hook.created_at)},
          {"deliveries", std::move(deliveries)}};
}

void CreateWebhook(Call& call) {
  Result<json::object> body = ParseJsonObject(call.request.body);
  if (!body.ok()) return call.Respond(body.status());
  JsonFields fields(*body);
  std::string url;
  std::vector<std::string> kinds;
  fields.String("url", &url, {.required = true, .max_length = 2048});
  fields.StringList("kinds", &kinds, 32);
  if (Status status = fields.Finish(); !status.ok()) return call.Respond(status);
  if (Status target = CheckWebhookTarget(call.webhook_policy(), url); !target.ok()) {
    return call.Respond(target.WithContext("url"));
  }
  call.Respond(call.plane().CreateEventWebhook(call.principal, std::move(url), std::move(kinds)),
               WebhookView, 201);
}

void ListWebhooks(Call& call) {
  call.Respond(call.plane().ListEventWebhooks(call.principal),
               [](const std::vector<EventWebhookInfo>& hooks) {
                 return ListOf("webhooks", hooks, WebhookView);
               });
}

void DeleteWebhook(Call& call) {
  call.Respond(call.plane().DeleteEventWebhook(call.principal, call.param(0)), WebhookView);
}

// clang-format off
constexpr Route kWebhookRoutes[] = {
  {{"GET", "/v1/webhooks", RouteAccess::kUser, "Your event webhooks, with their last deliveries"}, ListWebhooks},
  {{"POST", "/v1/webhooks", RouteAccess::kUser, "POST your events to a URL, signed, in order, at least once"}, CreateWebhook},
  {{"DELETE", "/v1/webhooks/{id}", RouteAccess::kUser, "Stop a webhook"}, DeleteWebhook},
};
// clang-format on

}  // namespace

std::span<const Route> WebhookRoutes() { return kWebhookRoutes; }

}  // namespace suanli::server
