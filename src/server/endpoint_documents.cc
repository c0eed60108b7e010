#include "server/endpoint_documents.h"

#include <boost/json/serialize.hpp>

#include "server/volume_documents.h"
#include "wire/json_fields.h"

namespace suanli::server {
namespace {

namespace json = boost::json;
using core::FormatTime;
using core::Result;
using wire::JsonFields;

constexpr size_t kLong = size_t{1} << 26;  // a job's input or output: bounded by the store only
constexpr wire::TextRule kText{.max_length = kLong};
constexpr wire::RangeRule<int> kAnyInt{INT32_MIN, INT32_MAX};
constexpr wire::RangeRule<int64_t> kAnyInt64{INT64_MIN, INT64_MAX};

template <typename T>
Result<T> Finished(JsonFields& fields, std::string_view kind, T&& value) {
  if (core::Status status = fields.Finish(); !status.ok()) {
    return core::InternalError("the stored " + std::string(kind) + " " + value.id +
                               " is corrupt: " + status.message());
  }
  return std::move(value);
}

json::value OptionalTime(const std::optional<core::TimePoint>& time) {
  return time ? json::value(FormatTime(*time)) : json::value(nullptr);
}

void ReadOptionalTime(JsonFields& fields, std::string_view key,
                      std::optional<core::TimePoint>* out) {
  const json::value* raw = fields.Raw(key);
  if (raw == nullptr || raw->is_null()) return;
  core::TimePoint time;
  fields.Time(key, &time);
  *out = time;
}

void ReadSeconds(JsonFields& fields, std::string_view key, std::chrono::seconds* out) {
  int64_t seconds = out->count();
  fields.Int64(key, &seconds, kAnyInt64);
  *out = std::chrono::seconds(seconds);
}

}  // namespace

json::object ToDocument(const serverless::Endpoint& endpoint) {
  json::object env;
  for (const auto& [name, value] : endpoint.env) env[name] = value;
  return {{"id", endpoint.id},
          {"owner_id", endpoint.owner_id},
          {"project_id", endpoint.project_id},
          {"name", endpoint.name},
          {"template_id", endpoint.template_id},
          {"image", endpoint.image},
          {"env", std::move(env)},
          {"gpu_type", endpoint.gpu_type},
          {"gpu_count", endpoint.gpu_count},
          {"gpu_milli", endpoint.gpu_milli},
          {"volume_gb", endpoint.volume_gb},
          {"volumes", VolumeMountsDocument(endpoint.volumes)},
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
          {"webhook_secret", endpoint.webhook_secret},
          {"created_at", FormatTime(endpoint.created_at)},
          {"updated_at", FormatTime(endpoint.updated_at)}};
}

Result<serverless::Endpoint> EndpointFromDocument(const json::object& document) {
  JsonFields fields(document, wire::UnknownFields::kIgnore);
  serverless::Endpoint endpoint;
  fields.String("id", &endpoint.id, kText);
  fields.String("owner_id", &endpoint.owner_id, kText);
  fields.String("project_id", &endpoint.project_id, kText);  // absent before projects' endpoints
  fields.String("name", &endpoint.name, kText);
  fields.String("template_id", &endpoint.template_id, kText);
  fields.String("image", &endpoint.image, kText);
  fields.StringMap("env", &endpoint.env, 1024);
  fields.String("gpu_type", &endpoint.gpu_type, kText);
  fields.Int("gpu_count", &endpoint.gpu_count, kAnyInt);
  fields.Int("gpu_milli", &endpoint.gpu_milli, kAnyInt);
  fields.Int("volume_gb", &endpoint.volume_gb, kAnyInt);
  ReadVolumeMounts(fields, &endpoint.volumes);  // absent before endpoints had volumes: none
  fields.Int("min_workers", &endpoint.min_workers, kAnyInt);
  fields.Int("max_workers", &endpoint.max_workers, kAnyInt);
  fields.Int("warm_buffer", &endpoint.warm_buffer, kAnyInt);
  ReadSeconds(fields, "idle_timeout_s", &endpoint.idle_timeout);
  std::string scaler(serverless::ScalerKindName(endpoint.scaler));
  fields.String("scaler", &scaler, kText);
  if (std::optional<serverless::ScalerKind> kind = serverless::ParseScalerKind(scaler)) {
    endpoint.scaler = *kind;
  } else {
    fields.Fail("scaler: unknown kind '" + scaler + "'");
  }
  fields.Int("scaler_value", &endpoint.scaler_value, kAnyInt);
  ReadSeconds(fields, "execution_timeout_s", &endpoint.execution_timeout);
  ReadSeconds(fields, "job_ttl_s", &endpoint.job_ttl);
  fields.Int("max_retries", &endpoint.max_retries, kAnyInt);
  // Absent from the documents of before push workers: a queue endpoint.
  std::string mode(serverless::WorkerModeName(endpoint.worker_mode));
  fields.String("worker_mode", &mode, kText);
  if (std::optional<serverless::WorkerMode> parsed = serverless::ParseWorkerMode(mode)) {
    endpoint.worker_mode = *parsed;
  } else {
    fields.Fail("worker_mode: unknown '" + mode + "'");
  }
  fields.Int("http_port", &endpoint.http_port, kAnyInt);
  fields.String("http_path", &endpoint.http_path, kText);
  fields.Int("http_concurrency", &endpoint.http_concurrency, kAnyInt);
  fields.String("webhook_secret", &endpoint.webhook_secret, kText);
  fields.Time("created_at", &endpoint.created_at);
  fields.Time("updated_at", &endpoint.updated_at);
  return Finished(fields, "endpoint", std::move(endpoint));
}

json::object ToDocument(const serverless::Job& job) {
  return {{"id", job.id},
          {"endpoint_id", job.endpoint_id},
          {"owner_id", job.owner_id},
          {"status", serverless::JobStatusName(job.status)},
          {"input", job.input},
          {"output", job.output},
          {"error", job.error},
          {"webhook", job.webhook},
          {"worker_id", job.worker_id},
          {"retries", job.retries},
          {"sequence", static_cast<int64_t>(job.sequence)},
          {"created_at", FormatTime(job.created_at)},
          {"started_at", OptionalTime(job.started_at)},
          {"finished_at", OptionalTime(job.finished_at)},
          {"execution_timeout_s", job.execution_timeout.count()},
          {"ttl_s", job.ttl.count()}};
}

Result<serverless::Job> JobFromDocument(const json::object& document) {
  JsonFields fields(document, wire::UnknownFields::kIgnore);
  serverless::Job job;
  fields.String("id", &job.id, kText);
  fields.String("endpoint_id", &job.endpoint_id, kText);
  fields.String("owner_id", &job.owner_id, kText);
  std::string status;
  fields.String("status", &status, kText);
  if (std::optional<serverless::JobStatus> parsed = serverless::ParseJobStatus(status)) {
    job.status = *parsed;
  } else {
    fields.Fail("status: unknown '" + status + "'");
  }
  fields.String("input", &job.input, kText);
  fields.String("output", &job.output, kText);
  fields.String("error", &job.error, kText);
  fields.String("webhook", &job.webhook, kText);
  fields.String("worker_id", &job.worker_id, kText);
  fields.Int("retries", &job.retries, kAnyInt);
  int64_t sequence = 0;
  fields.Int64("sequence", &sequence, {0, INT64_MAX});
  job.sequence = static_cast<uint64_t>(sequence);
  fields.Time("created_at", &job.created_at);
  ReadOptionalTime(fields, "started_at", &job.started_at);
  ReadOptionalTime(fields, "finished_at", &job.finished_at);
  ReadSeconds(fields, "execution_timeout_s", &job.execution_timeout);
  ReadSeconds(fields, "ttl_s", &job.ttl);
  return Finished(fields, "job", std::move(job));
}

std::string DocumentText(const serverless::Endpoint& endpoint) {
  return json::serialize(ToDocument(endpoint));
}

std::string DocumentText(const serverless::Job& job) { return json::serialize(ToDocument(job)); }

}  // namespace suanli::server
