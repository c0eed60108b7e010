// EndpointRuntime: what the control plane keeps in memory about a serverless endpoint beside its
// stored settings and jobs: the queue in order, the workers with their tokens and idle times, and
// counters for its health. Rebuilt on load from the stored jobs and the endpoint's pods (a worker
// is a pod whose env names the endpoint, SUANLI_ENDPOINT_ID, and holds its token).
//
// Thread-compatible: the control plane holds its lock around every use.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>

#include "core/clock.h"

namespace suanli::server {

// The env names a worker pod is given (docs/api.md lists them with RunPod's names).
inline constexpr char kEndpointIdEnv[] = "SUANLI_ENDPOINT_ID";
inline constexpr char kWorkerTokenEnv[] = "SUANLI_WORKER_TOKEN";

struct WorkerRuntime {
  std::string token_hash;      // SHA-256 hex of the worker's token
  std::string job_id;          // the job it runs; empty when idle
  bool seen_running = false;   // its pod has run: idle_since counts from then
  bool stopping = false;       // asked to stop (scaled down, timed out, lost): no longer live
  core::TimePoint idle_since;  // its last job ended, or it started running
};

struct EndpointRuntime {
  std::set<std::pair<uint64_t, std::string>> queue;  // (sequence, job id), oldest first
  std::set<std::string> jobs;                        // every stored job of the endpoint
  std::map<std::string, WorkerRuntime> workers;      // by pod id
  int64_t retried = 0;      // jobs re-queued after a worker was lost, since the server started
  std::string scale_error;  // why the last worker could not be started; empty once one was
};

}  // namespace suanli::server
