// Gauges: the control plane's state as numbers, read when /metrics is scraped (metrics.h renders
// them in Prometheus text, every pod state and job status listed even at 0).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace suanli::server {

// A serverless worker's states as EndpointInfo::Worker and /metrics name them.
inline constexpr std::string_view kWorkerStates[] = {"initializing", "idle", "running", "stopping"};

struct Gauges {
  std::map<std::string, int> pods_by_state;
  std::map<std::string, std::pair<int, int>> gpus_by_type;  // allocated, free
  int pending = 0;
  int nodes_ready = 0;
  int nodes_unreachable = 0;
  int64_t charged_micros = 0;  // total charged since start-up
  int unreadable_records = 0;  // stored records not served (ControlPlane::UnreadableRecords)
  // The commit queue's counters, which the /metrics route adds (the control plane has none).
  uint64_t store_transactions = 0;
  uint64_t store_batches = 0;
  struct Endpoint {
    std::string id;
    std::map<std::string, int> jobs_by_status;    // "IN_QUEUE", ... (stored jobs)
    std::map<std::string, int> workers_by_state;  // "initializing", "idle", "running", "stopping"
    double oldest_wait_s = 0;                     // the oldest queued job's wait; 0 with none
    int64_t retried = 0;
  };
  std::vector<Endpoint> endpoints;
};

}  // namespace suanli::server
