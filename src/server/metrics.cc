#include "server/metrics.h"

#include <fmt/format.h>

#include "core/pod_state.h"
#include "serverless/job.h"

namespace suanli::server {

RequestMetrics::RequestMetrics(size_t routes)
    : routes_(std::make_unique<PerRoute[]>(routes + 1)), size_(routes + 1) {}

void RequestMetrics::Record(size_t route, int status, std::chrono::nanoseconds latency) {
  PerRoute& entry = routes_[route < size_ ? route : size_ - 1];
  const int status_class = status / 100;
  if (status_class >= 1 && status_class <= 5) {
    entry.by_status_class[static_cast<size_t>(status_class)].fetch_add(1,
                                                                       std::memory_order_relaxed);
  }
  const double seconds = std::chrono::duration<double>(latency).count();
  size_t bucket = 0;
  while (bucket < kBuckets.size() && seconds > kBuckets[bucket]) ++bucket;
  entry.buckets[bucket].fetch_add(1, std::memory_order_relaxed);
  entry.latency_ns.fetch_add(static_cast<uint64_t>(latency.count()), std::memory_order_relaxed);
  entry.count.fetch_add(1, std::memory_order_relaxed);
}

std::string RequestMetrics::Render(const std::vector<std::string>& route_labels) const {
  std::string out;
  out += "# HELP suanli_http_requests_total HTTP requests by route and status class.\n";
  out += "# TYPE suanli_http_requests_total counter\n";
  for (size_t route = 0; route < size_; ++route) {
    const std::string& label =
        route < route_labels.size() ? route_labels[route] : R"(method="",route="unmatched")";
    for (size_t status_class = 1; status_class <= 5; ++status_class) {
      const uint64_t count = routes_[route].by_status_class[status_class].load();
      if (count == 0) continue;
      out += fmt::format("suanli_http_requests_total{{{},status=\"{}xx\"}} {}\n", label,
                         status_class, count);
    }
  }
  out += "# HELP suanli_http_request_duration_seconds Time from request to response.\n";
  out += "# TYPE suanli_http_request_duration_seconds histogram\n";
  for (size_t route = 0; route < size_; ++route) {
    const PerRoute& entry = routes_[route];
    const uint64_t count = entry.count.load();
    if (count == 0) continue;
    const std::string& label =
        route < route_labels.size() ? route_labels[route] : R"(method="",route="unmatched")";
    uint64_t cumulative = 0;
    for (size_t bucket = 0; bucket < kBuckets.size(); ++bucket) {
      cumulative += entry.buckets[bucket].load();
      out += fmt::format("suanli_http_request_duration_seconds_bucket{{{},le=\"{}\"}} {}\n", label,
                         kBuckets[bucket], cumulative);
    }
    out += fmt::format("suanli_http_request_duration_seconds_bucket{{{},le=\"+Inf\"}} {}\n", label,
                       count);
    out += fmt::format("suanli_http_request_duration_seconds_sum{{{}}} {:.6f}\n", label,
                       static_cast<double>(entry.latency_ns.load()) / 1e9);
    out += fmt::format("suanli_http_request_duration_seconds_count{{{}}} {}\n", label, count);
  }
  return out;
}

std::string RenderGauges(const Gauges& gauges) {
  std::string text;
  text += "# HELP suanli_pods Pods by state.\n# TYPE suanli_pods gauge\n";
  for (const core::PodState pod_state : core::kPodStates) {
    const std::string_view state = core::PodStateName(pod_state);
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
      gauges.store_transactions, gauges.store_batches);
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
    for (const serverless::JobStatus job_status : serverless::kJobStatuses) {
      const std::string_view status = serverless::JobStatusName(job_status);
      const auto it = endpoint.jobs_by_status.find(std::string(status));
      text += fmt::format("suanli_endpoint_jobs{{endpoint=\"{}\",status=\"{}\"}} {}\n", endpoint.id,
                          status, it == endpoint.jobs_by_status.end() ? 0 : it->second);
    }
  }
  text +=
      "# HELP suanli_endpoint_workers An endpoint's workers by state.\n"
      "# TYPE suanli_endpoint_workers gauge\n";
  for (const Gauges::Endpoint& endpoint : gauges.endpoints) {
    for (std::string_view state : kWorkerStates) {
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
  return text;
}

}  // namespace suanli::server
