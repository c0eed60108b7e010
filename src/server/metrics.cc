#include "server/metrics.h"

#include <fmt/format.h>

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

}  // namespace suanli::server
