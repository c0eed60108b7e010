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
  const Gauges gauges = call.plane().gauges();
  std::string text = call.services().metrics.Render(call.services().metric_labels);
  text += "# HELP suanli_pods Pods by state.\n# TYPE suanli_pods gauge\n";
  for (std::string_view state : {"pending", "starting", "running", "stopping", "stopped", "exited",
                                 "failed", "terminated"}) {
    const auto it = gauges.pods_by_state.find(std::string(state));
    text += fmt::format("suanli_pods{{state=\"{}\"}} {}\n", state,
                        it == gauges.pods_by_state.end() ? 0 : it->second);
  }
  text += "# HELP suanli_gpus GPUs on ready nodes, allocated or free.\n# TYPE suanli_gpus gauge\n";
  for (const auto& [type, counts] : gauges.gpus_by_type) {
    text += fmt::format("suanli_gpus{{type=\"{}\",status=\"allocated\"}} {}\n", type, counts.first);
    text += fmt::format("suanli_gpus{{type=\"{}\",status=\"free\"}} {}\n", type, counts.second);
  }
  text += fmt::format(
      "# HELP suanli_scheduler_pending Pods waiting for a GPU.\n# TYPE suanli_scheduler_pending "
      "gauge\nsuanli_scheduler_pending {}\n",
      gauges.pending);
  text += fmt::format(
      "# HELP suanli_nodes Nodes by state.\n# TYPE suanli_nodes gauge\n"
      "suanli_nodes{{state=\"ready\"}} {}\nsuanli_nodes{{state=\"unreachable\"}} {}\n",
      gauges.nodes_ready, gauges.nodes_unreachable);
  text += fmt::format(
      "# HELP suanli_billing_charged_micros_total Micro-dollars charged since start-up.\n"
      "# TYPE suanli_billing_charged_micros_total counter\n"
      "suanli_billing_charged_micros_total {}\n",
      gauges.charged_micros);
  text += fmt::format(
      "# HELP suanli_store_transactions_total Store transactions (group commits).\n"
      "# TYPE suanli_store_transactions_total counter\nsuanli_store_transactions_total {}\n"
      "# HELP suanli_store_batches_total Changes committed.\n"
      "# TYPE suanli_store_batches_total counter\nsuanli_store_batches_total {}\n",
      call.queue().transactions(), call.queue().durable());
  text += fmt::format(
      "# HELP suanli_store_unreadable_records Stored records the server could not read at start-up "
      "and does not serve (its log names them).\n"
      "# TYPE suanli_store_unreadable_records gauge\nsuanli_store_unreadable_records {}\n",
      gauges.unreadable_records);
  // Serverless endpoints, by id (not name: /metrics is public).
  text +=
      "# HELP suanli_endpoint_jobs An endpoint's stored jobs by status.\n"
      "# TYPE suanli_endpoint_jobs gauge\n";
  for (const Gauges::Endpoint& endpoint : gauges.endpoints) {
    for (std::string_view status :
         {"IN_QUEUE", "IN_PROGRESS", "COMPLETED", "FAILED", "CANCELLED", "TIMED_OUT"}) {
      const auto it = endpoint.jobs_by_status.find(std::string(status));
      text += fmt::format("suanli_endpoint_jobs{{endpoint=\"{}\",status=\"{}\"}} {}\n", endpoint.id,
                          status, it == endpoint.jobs_by_status.end() ? 0 : it->second);
    }
  }
  text +=
      "# HELP suanli_endpoint_workers An endpoint's workers by state.\n"
      "# TYPE suanli_endpoint_workers gauge\n";
  for (const Gauges::Endpoint& endpoint : gauges.endpoints) {
    for (std::string_view state : {"initializing", "idle", "running", "stopping"}) {
      const auto it = endpoint.workers_by_state.find(std::string(state));
      text +=
          fmt::format("suanli_endpoint_workers{{endpoint=\"{}\",state=\"{}\"}} {}\n", endpoint.id,
                      state, it == endpoint.workers_by_state.end() ? 0 : it->second);
    }
  }
  text +=
      "# HELP suanli_endpoint_queue_wait_seconds How long the oldest queued job has waited.\n"
      "# TYPE suanli_endpoint_queue_wait_seconds gauge\n";
  for (const Gauges::Endpoint& endpoint : gauges.endpoints) {
    text += fmt::format("suanli_endpoint_queue_wait_seconds{{endpoint=\"{}\"}} {:.3f}\n",
                        endpoint.id, endpoint.oldest_wait_s);
  }
  text +=
      "# HELP suanli_endpoint_jobs_retried_total Jobs re-queued after their worker was lost.\n"
      "# TYPE suanli_endpoint_jobs_retried_total counter\n";
  for (const Gauges::Endpoint& endpoint : gauges.endpoints) {
    text += fmt::format("suanli_endpoint_jobs_retried_total{{endpoint=\"{}\"}} {}\n", endpoint.id,
                        endpoint.retried);
  }
  net::HttpResponse response;
  response.content_type = "text/plain; version=0.0.4";
  response.body = std::move(text);
  call.Respond(std::move(response));
}

void OpenApi(Call& call) { call.Respond(JsonResponse(200, Api::OpenApiDocument())); }

// clang-format off
constexpr Route kMetaRoutes[] = {
  {{"GET", "/healthz", Access::kPublic, "Liveness: 200 while the server serves"}, Healthz},
  {{"GET", "/metrics", Access::kPublic, "Prometheus metrics"}, Metrics},
  {{"GET", "/v1/openapi.json", Access::kPublic, "This API as an OpenAPI 3 document"}, OpenApi},
};
// clang-format on

}  // namespace

std::span<const Route> MetaRoutes() { return kMetaRoutes; }

}  // namespace suanli::server
