// Endpoint: a serverless endpoint's settings, which decide how its workers scale and how long its
// jobs may take and live.
//
// An endpoint runs jobs on workers, which are pods it owns (scheduled and billed like any pod; its
// owner pays). Its settings follow RunPod's serverless endpoints (min/max workers, idle timeout, a
// queue-delay or request-count scaler, execution timeout, job TTL) and Modal's warm buffer. Pure:
// the control plane stores endpoints and acts on the scaler's decisions (scaler.h).
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/clock.h"
#include "core/domain.h"
#include "core/status.h"

namespace suanli::serverless {

// How the scaler decides that more workers are needed (scaler.h).
enum class ScalerKind {
  // A worker more when the oldest queued job has waited `scaler_value` seconds (RunPod's default,
  // 4 s); the first worker at once.
  kQueueDelay,
  // ceil((in queue + in progress) / scaler_value) workers (RunPod's default value: 4).
  kRequestCount,
};
std::string_view ScalerKindName(ScalerKind kind);  // "queue_delay", "request_count"
std::optional<ScalerKind> ParseScalerKind(std::string_view name);

// How a worker gets its jobs.
enum class WorkerMode {
  // It pulls them: a long poll for the next job, a post of its result (RunPod's worker library).
  kQueue,
  // It is an HTTP server (vLLM's OpenAI server, a web app): the control plane posts each job's
  // input to `http_path` on its port `http_port` and takes the answer as the job's output.
  kHttp,
};
std::string_view WorkerModeName(WorkerMode mode);  // "queue", "http"
std::optional<WorkerMode> ParseWorkerMode(std::string_view name);

// Bounds of the settings, checked by CheckEndpoint.
inline constexpr int kMaxWorkersLimit = 100;
inline constexpr int kMaxRetriesLimit = 10;
inline constexpr std::chrono::seconds kMaxIdleTimeout{3'600};
inline constexpr std::chrono::seconds kMaxExecutionTimeout{7 * 24 * 3'600};
inline constexpr std::chrono::seconds kMaxJobTtl{7 * 24 * 3'600};
inline constexpr int kMaxHttpConcurrency = 64;
inline constexpr size_t kMaxHttpPathLength = 512;

struct Endpoint {
  std::string id;        // "ep_..."
  std::string owner_id;  // who pays its workers: its creator, or its project's owner
  // A project's endpoint ("": a person's): its members manage it and run jobs on it, its viewers
  // read it; its workers are the project's pods.
  std::string project_id{};
  std::string name;
  // What each worker runs: a template, or an image (with the template's settings under it).
  std::string template_id;
  std::string image;
  std::map<std::string, std::string> env;
  std::string gpu_type;  // canonical catalog name
  int gpu_count = 1;     // of each worker
  int gpu_milli = 1000;  // of each GPU; below 1000 a share of one (gpu_count 1)
  int volume_gb = 0;     // each worker's volume
  // Volumes of their own (core::Volume) every worker mounts: read-only, unless the endpoint has
  // one worker at most (a volume is one pod's read-write or any number's read-only).
  std::vector<core::VolumeMount> volumes;
  int min_workers = 0;                   // kept running even with nothing to do
  int max_workers = 3;                   // never more (RunPod's default)
  int warm_buffer = 0;                   // idle workers kept ready beyond the busy ones (Modal)
  std::chrono::seconds idle_timeout{5};  // an idle worker above the floor stops after this
  ScalerKind scaler = ScalerKind::kQueueDelay;
  int scaler_value = 4;                         // seconds of queue delay, or jobs per worker
  std::chrono::seconds execution_timeout{600};  // a job running longer is TIMED_OUT
  std::chrono::seconds job_ttl{24 * 3'600};     // a job and its result live this long
  int max_retries = 3;  // re-queues of a job whose worker died, before it FAILED
  WorkerMode worker_mode = WorkerMode::kQueue;
  int http_port = 0;            // kHttp: the workers' port that takes jobs (1 to 65535)
  std::string http_path = "/";  // kHttp: the path the jobs are posted to, with its query
  int http_concurrency = 1;     // kHttp: jobs pushed to one worker at a time, at most
  std::string webhook_secret;   // signs its jobs' webhooks (HMAC-SHA256); its owner sees it
  core::TimePoint created_at;
  core::TimePoint updated_at;

  friend bool operator==(const Endpoint&, const Endpoint&) = default;
};

// INVALID_ARGUMENT naming the field for a setting out of its bounds: workers 0 to
// kMaxWorkersLimit with min <= max, warm buffer <= max, scaler_value 1 to 3600, timeouts and TTL
// from 1 s to their limits, retries 0 to kMaxRetriesLimit, gpu_count 1 to 64; in http mode a port
// 1 to 65535, a path that starts with "/" (printable ASCII, no spaces, at most
// kMaxHttpPathLength) and a concurrency 1 to kMaxHttpConcurrency; a volume read-write only with
// max_workers 1.
core::Status CheckEndpoint(const Endpoint& endpoint);

// The env names a worker pod is given (docs/api.md lists them with RunPod's names): a pod is an
// endpoint's worker when its env names the endpoint and holds its token.
inline constexpr char kEndpointIdEnv[] = "SUANLI_ENDPOINT_ID";
inline constexpr char kWorkerTokenEnv[] = "SUANLI_WORKER_TOKEN";

// The env of a worker of `endpoint` holding `token`, whose container reaches the server at
// `base_url`: the endpoint's own env, suanli's names, and RunPod's worker library's.
std::map<std::string, std::string> WorkerEnv(const Endpoint& endpoint, const std::string& base_url,
                                             const std::string& token);

}  // namespace suanli::serverless
