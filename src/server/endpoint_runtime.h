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
#include <vector>

#include "core/clock.h"

namespace suanli::server {

// The env names a worker pod is given (docs/api.md lists them with RunPod's names).
inline constexpr char kEndpointIdEnv[] = "SUANLI_ENDPOINT_ID";
inline constexpr char kWorkerTokenEnv[] = "SUANLI_WORKER_TOKEN";

struct WorkerRuntime {
  std::string token_hash;        // SHA-256 hex of the worker's token
  std::string job_id;            // the job it pulled and runs; empty when idle
  std::set<std::string> pushed;  // worker_mode http: the jobs posted to it, not yet answered
  // worker_mode http: its answers of 500 and above in a row (or failures to reach it); it is
  // posted nothing before `push_after` (1 s, doubling, at most 30 s), so that a worker whose
  // server is down does not spend a job's retries in a moment.
  int push_failures = 0;
  core::TimePoint push_after;
  bool seen_running = false;   // its pod has run: idle_since counts from then
  bool stopping = false;       // asked to stop (scaled down, timed out, lost): no longer live
  core::TimePoint idle_since;  // its last job ended, or it started running

  bool busy() const { return !job_id.empty() || !pushed.empty(); }
  int in_progress() const { return static_cast<int>(pushed.size()) + (job_id.empty() ? 0 : 1); }
};

struct EndpointRuntime {
  std::set<std::pair<uint64_t, std::string>> queue;  // (sequence, job id), oldest first
  std::set<std::string> jobs;                        // every stored job of the endpoint
  // The tick's index (ControlPlane::JobChanged keeps it): the queued and running jobs, whose
  // timeouts it checks, and the finished ones by when they expire, so that a tick costs what is
  // live or due, not every job kept for its TTL. An expiry whose job changed since is skipped.
  std::set<std::string> unfinished;
  std::set<std::pair<core::TimePoint, std::string>> expiries;
  std::map<std::string, WorkerRuntime> workers;  // by pod id
  // Partial outputs a worker posted for a job (RunPod's streaming handlers), not yet read by
  // /stream; a job is here once its worker streamed. Memory only: lost when the server restarts.
  std::map<std::string, std::vector<std::string>> streams;
  int64_t retried = 0;      // jobs re-queued after a worker was lost, since the server started
  std::string scale_error;  // why the last worker could not be started; empty once one was
};

}  // namespace suanli::server
