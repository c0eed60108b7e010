// Routes for serverless endpoints: create, list, read, update, delete (/v1/endpoints). Their jobs
// are served under /v2 (serverless_jobs.cc).
#include <boost/json/value.hpp>
#include <utility>
#include <vector>

#include "server/routes/request_fields.h"
#include "server/routes/routes.h"
#include "server/routes/views.h"
#include "serverless/endpoint.h"
#include "wire/json_fields.h"
#include "wire/views.h"

namespace suanli::server {
namespace {

namespace json = boost::json;
using core::Result;
using core::Status;

json::object EndpointView(const EndpointInfo& info) {
  const serverless::Endpoint& endpoint = info.endpoint;
  json::object env;
  for (const auto& [name, value] : endpoint.env) env[name] = value;
  json::array workers;
  for (const EndpointInfo::Worker& worker : info.workers) {
    json::object view{{"id", worker.pod_id}, {"state", worker.state}};
    if (!worker.job_id.empty()) view["job_id"] = worker.job_id;
    workers.push_back(std::move(view));
  }
  const auto count = [&info](serverless::JobStatus status) {
    const auto it = info.jobs.find(status);
    return it == info.jobs.end() ? 0 : it->second;
  };
  using serverless::JobStatus;
  return {{"id", endpoint.id},
          {"name", endpoint.name},
          {"owner_id", endpoint.owner_id},
          {"project_id", endpoint.project_id},
          {"template", endpoint.template_id},
          {"image", endpoint.image},
          {"env", std::move(env)},
          {"gpu_type", endpoint.gpu_type.empty() ? "cheapest" : endpoint.gpu_type},
          {"gpu_count", endpoint.gpu_count},
          {"gpu_milli", endpoint.gpu_milli},
          {"volume_gb", endpoint.volume_gb},
          {"volumes", wire::VolumeMountsView(endpoint.volumes)},
          {"min_workers", endpoint.min_workers},
          {"max_workers", endpoint.max_workers},
          {"warm_buffer", endpoint.warm_buffer},
          {"idle_timeout_s", endpoint.idle_timeout.count()},
          {"scaler", serverless::ScalerKindName(endpoint.scaler)},
          {"scaler_value", endpoint.scaler_value},
          {"execution_timeout_s", endpoint.execution_timeout.count()},
          {"job_ttl_s", endpoint.job_ttl.count()},
          {"max_retries", endpoint.max_retries},
          {"worker_mode", serverless::WorkerModeName(endpoint.worker_mode)},
          {"http_port", endpoint.http_port},
          {"http_path", endpoint.http_path},
          {"http_concurrency", endpoint.http_concurrency},
          {"url", "/v2/" + endpoint.id},
          {"workers", std::move(workers)},
          {"jobs",
           {{"in_queue", count(JobStatus::kInQueue)},
            {"in_progress", count(JobStatus::kInProgress)},
            {"completed", count(JobStatus::kCompleted)},
            {"failed", count(JobStatus::kFailed)},
            {"cancelled", count(JobStatus::kCancelled)},
            {"timed_out", count(JobStatus::kTimedOut)},
            {"retried", info.retried}}},
          {"scale_error", info.scale_error},
          {"webhook_secret", endpoint.webhook_secret},
          {"created_at", core::FormatTime(endpoint.created_at)},
          {"updated_at", core::FormatTime(endpoint.updated_at)}};
}

// The fields of a create or an update: what is absent stays absent.
Result<EndpointSpec> ReadEndpointSpec(std::string_view body_text) {
  Result<json::object> body = ParseJsonObject(body_text);
  if (!body.ok()) return body.status();
  JsonFields fields(*body);
  EndpointSpec spec;
  const auto text = [&fields](std::string_view key, std::optional<std::string>* out,
                              size_t max_length) {
    if (fields.Raw(key) == nullptr) return;
    std::string value;
    fields.String(key, &value, {.max_length = max_length});
    *out = std::move(value);
  };
  text("name", &spec.name, 64);
  text("template", &spec.template_id, 64);
  text("image", &spec.image, 512);
  text("gpu_type", &spec.gpu_type, 128);
  text("project", &spec.project, 64);
  if (fields.Raw("env") != nullptr) {
    std::map<std::string, std::string> env;
    fields.StringMap("env", &env);
    spec.env = std::move(env);
  }
  if (fields.Raw("gpu_count") != nullptr) {
    int gpu_count = 1;
    int gpu_milli = 1000;
    ReadGpuCount(fields, &gpu_count, &gpu_milli);
    spec.gpu_count = gpu_count;
    spec.gpu_milli = gpu_milli;
  }
  const int max_s = static_cast<int>(serverless::kMaxJobTtl.count());
  fields.OptionalInt("volume_gb", &spec.volume_gb, {0, 100'000});
  spec.volumes = ReadVolumeRequests(fields);
  fields.OptionalInt("min_workers", &spec.min_workers, {0, serverless::kMaxWorkersLimit});
  fields.OptionalInt("max_workers", &spec.max_workers, {1, serverless::kMaxWorkersLimit});
  fields.OptionalInt("warm_buffer", &spec.warm_buffer, {0, serverless::kMaxWorkersLimit});
  fields.OptionalInt("idle_timeout_s", &spec.idle_timeout_s,
                     {1, static_cast<int>(serverless::kMaxIdleTimeout.count())});
  if (fields.Raw("scaler") != nullptr) {
    std::string scaler;
    fields.String("scaler", &scaler, {.max_length = 32});
    if (std::optional<serverless::ScalerKind> kind = serverless::ParseScalerKind(scaler)) {
      spec.scaler = *kind;
    } else if (fields.ok()) {
      fields.Fail("scaler: must be queue_delay or request_count, not '" + scaler + "'");
    }
  }
  fields.OptionalInt("scaler_value", &spec.scaler_value, {1, 3'600});
  fields.OptionalInt("execution_timeout_s", &spec.execution_timeout_s, {1, max_s});
  fields.OptionalInt("job_ttl_s", &spec.job_ttl_s, {1, max_s});
  fields.OptionalInt("max_retries", &spec.max_retries, {0, serverless::kMaxRetriesLimit});
  if (fields.Raw("worker_mode") != nullptr) {
    std::string mode;
    fields.String("worker_mode", &mode, {.max_length = 32});
    if (std::optional<serverless::WorkerMode> parsed = serverless::ParseWorkerMode(mode)) {
      spec.worker_mode = *parsed;
    } else if (fields.ok()) {
      fields.Fail(
          "worker_mode: must be queue (workers take jobs from the queue) or http (jobs "
          "are posted to the workers' http_port), not '" +
          mode + "'");
    }
  }
  fields.OptionalInt("http_port", &spec.http_port, {1, 65'535});
  text("http_path", &spec.http_path, serverless::kMaxHttpPathLength);
  fields.OptionalInt("http_concurrency", &spec.http_concurrency,
                     {1, serverless::kMaxHttpConcurrency});
  if (Status status = fields.Finish(); !status.ok()) return status;
  return spec;
}

void ListEndpoints(Call& call) {
  call.Respond(call.plane().ListEndpoints(call.principal),
               [](const std::vector<EndpointInfo>& endpoints) {
                 return ListOf("endpoints", endpoints, EndpointView);
               });
}

void CreateEndpoint(Call& call) {
  Result<EndpointSpec> spec = ReadEndpointSpec(call.request.body);
  if (!spec.ok()) return call.Respond(spec.status());
  call.Respond(call.plane().CreateEndpoint(call.principal, std::move(*spec)), EndpointView, 201);
}

void GetEndpoint(Call& call) {
  call.Respond(call.plane().GetEndpoint(call.principal, call.param(0)), EndpointView);
}

void UpdateEndpoint(Call& call) {
  Result<EndpointSpec> spec = ReadEndpointSpec(call.request.body);
  if (!spec.ok()) return call.Respond(spec.status());
  call.Respond(call.plane().UpdateEndpoint(call.principal, call.param(0), std::move(*spec)),
               EndpointView);
}

void DeleteEndpoint(Call& call) {
  call.Respond(call.plane().DeleteEndpoint(call.principal, call.param(0)), EndpointView);
}

// clang-format off
constexpr Route kEndpointRoutes[] = {
  {{"GET", "/v1/endpoints", RouteAccess::kUser, "Your serverless endpoints"}, ListEndpoints},
  {{"POST", "/v1/endpoints", RouteAccess::kUser, "Create a serverless endpoint"}, CreateEndpoint},
  {{"GET", "/v1/endpoints/{id}", RouteAccess::kUser, "An endpoint, its workers and jobs"}, GetEndpoint},
  {{"PATCH", "/v1/endpoints/{id}", RouteAccess::kUser, "Change an endpoint's settings"}, UpdateEndpoint},
  {{"DELETE", "/v1/endpoints/{id}", RouteAccess::kUser, "Delete an endpoint, its workers and jobs"}, DeleteEndpoint},
};
// clang-format on

}  // namespace

std::span<const Route> EndpointRoutes() { return kEndpointRoutes; }

}  // namespace suanli::server
