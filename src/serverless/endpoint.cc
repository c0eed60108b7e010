#include "serverless/endpoint.h"

#include <algorithm>
#include <string>

namespace suanli::serverless {

std::string_view ScalerKindName(ScalerKind kind) {
  return kind == ScalerKind::kQueueDelay ? "queue_delay" : "request_count";
}

std::optional<ScalerKind> ParseScalerKind(std::string_view name) {
  if (name == "queue_delay") return ScalerKind::kQueueDelay;
  if (name == "request_count") return ScalerKind::kRequestCount;
  return std::nullopt;
}

std::string_view WorkerModeName(WorkerMode mode) {
  return mode == WorkerMode::kQueue ? "queue" : "http";
}

std::optional<WorkerMode> ParseWorkerMode(std::string_view name) {
  if (name == "queue") return WorkerMode::kQueue;
  if (name == "http") return WorkerMode::kHttp;
  return std::nullopt;
}

namespace {

core::Status Range(std::string_view field, int64_t value, int64_t min, int64_t max) {
  if (value >= min && value <= max) return core::Status::Ok();
  return core::InvalidArgumentError(std::string(field) + ": must be from " + std::to_string(min) +
                                    " to " + std::to_string(max) + ", not " +
                                    std::to_string(value));
}

}  // namespace

core::Status CheckEndpoint(const Endpoint& endpoint) {
  SUANLI_RETURN_IF_ERROR(Range("max_workers", endpoint.max_workers, 1, kMaxWorkersLimit));
  SUANLI_RETURN_IF_ERROR(Range("min_workers", endpoint.min_workers, 0, endpoint.max_workers));
  SUANLI_RETURN_IF_ERROR(Range("warm_buffer", endpoint.warm_buffer, 0, endpoint.max_workers));
  for (const core::VolumeMount& mount : endpoint.volumes) {
    if (!mount.read_only && endpoint.max_workers > 1) {
      return core::InvalidArgumentError(
          "volumes: " + mount.volume_id + " at " + mount.mount_path +
          " would be read-write in each of up to " + std::to_string(endpoint.max_workers) +
          " workers, and a volume is one pod's read-write or any number's read-only; mount it "
          "read-only (NAME:/path:ro), or give the endpoint max_workers 1");
    }
  }
  SUANLI_RETURN_IF_ERROR(Range("scaler_value", endpoint.scaler_value, 1, 3'600));
  SUANLI_RETURN_IF_ERROR(
      Range("idle_timeout_s", endpoint.idle_timeout.count(), 1, kMaxIdleTimeout.count()));
  SUANLI_RETURN_IF_ERROR(Range("execution_timeout_s", endpoint.execution_timeout.count(), 1,
                               kMaxExecutionTimeout.count()));
  SUANLI_RETURN_IF_ERROR(Range("job_ttl_s", endpoint.job_ttl.count(), 1, kMaxJobTtl.count()));
  SUANLI_RETURN_IF_ERROR(Range("max_retries", endpoint.max_retries, 0, kMaxRetriesLimit));
  SUANLI_RETURN_IF_ERROR(Range("gpu_count", endpoint.gpu_count, 1, 64));
  SUANLI_RETURN_IF_ERROR(Range("volume_gb", endpoint.volume_gb, 0, 100'000));
  if (endpoint.worker_mode == WorkerMode::kHttp) {
    if (endpoint.http_port == 0) {
      return core::InvalidArgumentError(
          "http_port: worker_mode http needs the workers' port that takes jobs (1 to 65535)");
    }
    SUANLI_RETURN_IF_ERROR(Range("http_port", endpoint.http_port, 1, 65'535));
    SUANLI_RETURN_IF_ERROR(
        Range("http_concurrency", endpoint.http_concurrency, 1, kMaxHttpConcurrency));
    const std::string& path = endpoint.http_path;
    const bool printable =
        std::all_of(path.begin(), path.end(), [](char c) { return c > ' ' && c < 0x7f; });
    if (!path.starts_with('/') || !printable || path.size() > kMaxHttpPathLength) {
      return core::InvalidArgumentError(
          "http_path: must start with / and be printable ASCII without spaces, at most " +
          std::to_string(kMaxHttpPathLength) + " characters (e.g. /v1/completions), not '" +
          path.substr(0, 64) + "'");
    }
  }
  return core::Status::Ok();
}

// runpod-python reads RUNPOD_WEBHOOK_GET_JOB, replacing "$ID" by RUNPOD_POD_ID and appending
// "&job_in_progress=0|1"; RUNPOD_WEBHOOK_POST_OUTPUT, replacing "$RUNPOD_POD_ID" by the worker and
// "$ID" by the job; and sends RUNPOD_AI_API_KEY as the Authorization header, without "Bearer".
std::map<std::string, std::string> WorkerEnv(const Endpoint& endpoint, const std::string& base_url,
                                             const std::string& token) {
  const std::string root = base_url + "/v2/" + endpoint.id;
  std::map<std::string, std::string> env = endpoint.env;
  env[kEndpointIdEnv] = endpoint.id;
  env[kWorkerTokenEnv] = token;
  // ${SUANLI_POD_ID} is expanded by the agent (docs/agent.md, Variables).
  env["SUANLI_JOB_URL"] = root + "/job-take/${SUANLI_POD_ID}";
  env["SUANLI_RESULT_URL"] = root + "/job-done/${SUANLI_POD_ID}";
  env["SUANLI_STREAM_URL"] = root + "/job-stream/${SUANLI_POD_ID}";
  env["RUNPOD_ENDPOINT_ID"] = endpoint.id;
  env["RUNPOD_POD_ID"] = "${SUANLI_POD_ID}";
  env["RUNPOD_AI_API_KEY"] = token;
  env["RUNPOD_WEBHOOK_GET_JOB"] = root + "/job-take/$ID?wait_s=20";
  env["RUNPOD_WEBHOOK_POST_OUTPUT"] = root + "/job-done/$RUNPOD_POD_ID/$ID";
  env["RUNPOD_WEBHOOK_POST_STREAM"] = root + "/job-stream/$RUNPOD_POD_ID/$ID";
  return env;
}

}  // namespace suanli::serverless
