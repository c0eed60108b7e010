// Routes about the server itself: liveness, Prometheus metrics, and this API's OpenAPI document.
#include <fmt/format.h>

#include <boost/json/value.hpp>
#include <string>
#include <string_view>

#include "server/api.h"
#include "server/routes/routes.h"
#include "server/routes/views.h"

namespace suanli::server {
namespace {

namespace json = boost::json;
using core::Status;

void Healthz(Call& call) {
  const Status store = call.queue().latched_error();
  if (!store.ok()) {
    call.Respond(core::UnavailableError("the store failed: " + store.message()));
    return;
  }
  call.Respond(JsonResponse(200, json::object{{"status", "ok"}}));
}

void Metrics(Call& call) {
  std::string text = call.services().metrics.Render(call.services().metric_labels);
  Gauges gauges = call.plane().gauges();
  gauges.store_transactions = call.queue().transactions();
  gauges.store_batches = call.queue().durable();
  text += RenderGauges(gauges);
  net::HttpResponse response;
  response.content_type = "text/plain; version=0.0.4";
  response.body = std::move(text);
  call.Respond(std::move(response));
}

void OpenApi(Call& call) { call.Respond(JsonResponse(200, Api::OpenApiDocument())); }

// clang-format off
constexpr Route kMetaRoutes[] = {
  {{"GET", "/healthz", RouteAccess::kPublic, "Liveness: 200 while the server serves"}, Healthz},
  {{"GET", "/metrics", RouteAccess::kPublic, "Prometheus metrics"}, Metrics},
  {{"GET", "/v1/openapi.json", RouteAccess::kPublic, "This API as an OpenAPI 3 document"}, OpenApi},
};
// clang-format on

}  // namespace

std::span<const Route> MetaRoutes() { return kMetaRoutes; }

}  // namespace suanli::server
