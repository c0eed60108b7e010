#include "serverless/endpoint.h"

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
  SUANLI_RETURN_IF_ERROR(Range("scaler_value", endpoint.scaler_value, 1, 3'600));
  SUANLI_RETURN_IF_ERROR(
      Range("idle_timeout_s", endpoint.idle_timeout.count(), 1, kMaxIdleTimeout.count()));
  SUANLI_RETURN_IF_ERROR(Range("execution_timeout_s", endpoint.execution_timeout.count(), 1,
                               kMaxExecutionTimeout.count()));
  SUANLI_RETURN_IF_ERROR(Range("job_ttl_s", endpoint.job_ttl.count(), 1, kMaxJobTtl.count()));
  SUANLI_RETURN_IF_ERROR(Range("max_retries", endpoint.max_retries, 0, kMaxRetriesLimit));
  SUANLI_RETURN_IF_ERROR(Range("gpu_count", endpoint.gpu_count, 1, 64));
  SUANLI_RETURN_IF_ERROR(Range("volume_gb", endpoint.volume_gb, 0, 100'000));
  return core::Status::Ok();
}

}  // namespace suanli::serverless
