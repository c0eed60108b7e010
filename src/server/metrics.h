// Metrics: request counts and latencies per route, in Prometheus text format.
//
// Lock-free on the request path (relaxed atomics): a route's counters live at its index in the
// route table. Gauges (pods by state, GPUs, the queue) are read from the control plane when
// /metrics is scraped.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "server/gauges.h"

namespace suanli::server {

// The gauges' lines in Prometheus text: every pod state, job status and worker state listed (0
// where none is), so a dashboard's series never vanish.
std::string RenderGauges(const Gauges& gauges);

class RequestMetrics {
 public:
  // Upper bounds of the latency buckets, in seconds (Prometheus `le`).
  static constexpr std::array<double, 10> kBuckets = {0.0005, 0.001, 0.0025, 0.005, 0.01,
                                                      0.025,  0.05,  0.1,    0.5,   1.0};

  explicit RequestMetrics(size_t routes);

  // `route` is an index into the route table, or routes() for requests no route matched.
  void Record(size_t route, int status, std::chrono::nanoseconds latency);

  // The counter and histogram lines; `route_labels[i]` is `method="GET",route="/v1/pods"`.
  std::string Render(const std::vector<std::string>& route_labels) const;

 private:
  struct PerRoute {
    std::array<std::atomic<uint64_t>, 6> by_status_class{};  // 1xx..5xx, index 1..5
    std::array<std::atomic<uint64_t>, kBuckets.size() + 1> buckets{};
    std::atomic<uint64_t> latency_ns{0};
    std::atomic<uint64_t> count{0};
  };
  std::unique_ptr<PerRoute[]> routes_;
  size_t size_;
};

}  // namespace suanli::server
