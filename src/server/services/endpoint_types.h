// What callers of the control plane send and get back about serverless endpoints, their jobs and
// their workers, and the limits on jobs.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "server/services/pod_types.h"
#include "serverless/endpoint.h"
#include "serverless/job.h"

namespace suanli::server {

// A serverless endpoint's settings as given to create (what is absent takes its default) or update
// (what is absent stays as it is). Units: seconds.
struct EndpointSpec {
  std::optional<std::string> name;
  std::optional<std::string> template_id;
  std::optional<std::string> image;
  std::optional<std::map<std::string, std::string>> env;
  std::optional<std::string> gpu_type;  // "" or "cheapest": the cheapest free type per worker
  std::optional<int> gpu_count;
  std::optional<int> gpu_milli;
  std::optional<int> volume_gb;
  std::optional<int> min_workers;
  std::optional<int> max_workers;
  std::optional<int> warm_buffer;
  std::optional<int> idle_timeout_s;
  std::optional<serverless::ScalerKind> scaler;
  std::optional<int> scaler_value;
  std::optional<int> execution_timeout_s;
  std::optional<int> job_ttl_s;
  std::optional<int> max_retries;
  std::optional<serverless::WorkerMode> worker_mode;
  std::optional<int> http_port;
  std::optional<std::string> http_path;
  std::optional<int> http_concurrency;
  // Volumes of their own every worker mounts (serverless::Endpoint::volumes); empty: none.
  std::optional<std::vector<VolumeRequest>> volumes;
  // At creation only: a project (id or name) the caller is a member of, whose endpoint it is.
  std::optional<std::string> project;
};

// An endpoint as shown: its settings, its workers now and its jobs by status.
struct EndpointInfo {
  struct Worker {
    std::string pod_id;
    std::string state;  // "initializing", "idle", "running" (a job), "stopping"
    std::string job_id;
  };
  serverless::Endpoint endpoint;
  std::vector<Worker> workers;
  std::map<serverless::JobStatus, int> jobs;  // stored jobs by status
  int64_t retried = 0;
  std::string scale_error;
};

// A job for an http-mode endpoint's worker, as ControlPlane::TakePushJobs hands it out to be
// posted to the worker's port through its node's relay (job_pusher.h).
struct PushedJob {
  std::string job_id;
  std::string endpoint_id;
  std::string worker_id;  // the worker's pod
  std::string node_id;
  std::string node_name;
  int port = 0;
  std::string path;   // the request's target: the endpoint's http_path
  std::string input;  // JSON text: the request's body
  std::chrono::seconds execution_timeout{600};
};

// The largest input of a job for an http-mode endpoint: what the relay to its node carries
// (wire::kMaxRelayBodyBase64 as base64, with room for the rest of the request).
inline constexpr size_t kMaxPushedInputBytes = size_t{3} << 20;

// A job as a client asks for it (POST /v2/{endpoint}/run). Units: seconds.
struct JobRequest {
  std::string input;  // JSON text
  std::string webhook;
  std::optional<int> execution_timeout_s;  // else the endpoint's
  std::optional<int> ttl_s;                // else the endpoint's
};

}  // namespace suanli::server
