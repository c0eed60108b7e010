// Routes of serverless jobs, wire-compatible with RunPod's serverless API under /v2/{endpoint}
// (run, runsync, status, stream, cancel, retry, health, purge-queue: a client of that API works
// when pointed at suanli's base URL with a suanli token), and the workers' side: a long poll that
// hands out the next job and the post of its result, authenticated by the worker's own token.
// docs/api.md lists what differs from RunPod.
#include <algorithm>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>
#include <chrono>
#include <memory>
#include <string>
#include <utility>

#include "server/job_view.h"
#include "server/routes/request_fields.h"
#include "server/routes/routes.h"
#include "server/routes/views.h"
#include "server/webhooks.h"
#include "serverless/job.h"
#include "wire/json_fields.h"
#include "wire/relay_protocol.h"

namespace suanli::server {
namespace {

namespace json = boost::json;
using core::Result;
using core::Status;
using serverless::Job;
using serverless::JobStatus;

constexpr int64_t kMaxTimeoutMillis = int64_t{7} * 24 * 3'600 * 1'000;
constexpr int64_t kRunSyncDefaultWaitMillis = 90'000;  // RunPod's

json::object JobView(const Job& job, core::TimePoint now) { return JobStatusView(job, now); }

json::object ShortView(const Job& job) {
  return {{"id", job.id}, {"status", serverless::JobStatusName(job.status)}};
}

// The body of /run and /runsync: {"input": ..., "webhook": "...", "policy": {"executionTimeout":
// ms, "ttl": ms, "lowPriority": bool}}.
Result<JobRequest> ReadJobRequest(std::string_view text,
                                  const net::OutboundPolicy& webhook_policy) {
  Result<json::object> body = ParseJsonObject(text);
  if (!body.ok()) return body.status();
  JsonFields fields(*body);
  JobRequest request;
  const json::value* input = fields.Raw("input");
  if (input == nullptr) {
    fields.Fail("input: required (the job's payload for the worker, e.g. {\"input\": {...}})");
  } else {
    request.input = json::serialize(*input);
  }
  fields.String("webhook", &request.webhook, {.max_length = 2048});
  if (!request.webhook.empty()) {
    if (core::Status url = CheckWebhookTarget(webhook_policy, request.webhook); !url.ok()) {
      fields.Fail(url.message());
    }
  }
  fields.Object("policy", [&request](JsonFields& policy) {
    int64_t execution_ms = 0;
    int64_t ttl_ms = 0;
    bool low_priority = false;
    policy.Int64("executionTimeout", &execution_ms, {1'000, kMaxTimeoutMillis});
    policy.Int64("ttl", &ttl_ms, {1'000, kMaxTimeoutMillis});
    policy.Bool("lowPriority", &low_priority);  // accepted; every job has the same priority
    if (execution_ms > 0) request.execution_timeout_s = static_cast<int>(execution_ms / 1'000);
    if (ttl_ms > 0) request.ttl_s = static_cast<int>(ttl_ms / 1'000);
  });
  if (Status status = fields.Finish(); !status.ok()) return status;
  return request;
}

void Run(Call& call) {
  Result<JobRequest> request = ReadJobRequest(call.request.body, call.webhook_policy());
  if (!request.ok()) return call.Respond(request.status());
  call.Respond(call.plane().SubmitJob(call.principal, call.param(0), std::move(*request)),
               ShortView);
}

// Answers the job's status once it is finished or `deadline` passes.
void AnswerWhenDone(std::shared_ptr<Call> call, std::string endpoint_id, std::string job_id,
                    core::TimePoint deadline) {
  Result<Written<Job>> job = call->plane().GetJob(call->principal, endpoint_id, job_id);
  if (!job.ok()) return call->Respond(job.status());
  const core::TimePoint now = call->clock().Now();
  if (serverless::IsFinal(job->value.status) || now >= deadline) {
    return call->Respond(JobView(job->value, now), job->sequence);
  }
  ControlPlane& plane = call->plane();
  plane.WhenJobChanges(job_id, deadline,
                       [call = std::move(call), endpoint_id, job_id, deadline]() mutable {
                         AnswerWhenDone(std::move(call), endpoint_id, job_id, deadline);
                       });
}

void RunSync(Call& call) {
  int64_t wait_ms = std::min<int64_t>(kRunSyncDefaultWaitMillis,
                                      int64_t{call.plane().long_poll_limit_s()} * 1'000);
  if (std::optional<std::string> text = call.request.QueryValue("wait")) {
    std::optional<int64_t> value =
        ParseInteger(*text, 0, int64_t{call.plane().long_poll_limit_s()} * 1'000);
    if (!value) {
      return call.Respond(core::InvalidArgumentError(
          "wait: milliseconds from 0 to " +
          std::to_string(int64_t{call.plane().long_poll_limit_s()} * 1'000)));
    }
    wait_ms = *value;
  }
  Result<JobRequest> request = ReadJobRequest(call.request.body, call.webhook_policy());
  if (!request.ok()) return call.Respond(request.status());
  Result<Written<Job>> job =
      call.plane().SubmitJob(call.principal, call.param(0), std::move(*request));
  if (!job.ok()) return call.Respond(job.status());
  const core::TimePoint deadline = call.clock().Now() + std::chrono::milliseconds(wait_ms);
  const std::string endpoint_id = call.param(0);
  AnswerWhenDone(std::make_shared<Call>(std::move(call)), endpoint_id, job->value.id, deadline);
}

void GetJobStatus(Call& call) {
  const core::TimePoint now = call.clock().Now();
  call.Respond(call.plane().GetJob(call.principal, call.param(0), call.param(1)),
               [now](const Job& job) { return JobView(job, now); });
}

// RunPod's /stream: the partial outputs the worker posted (a generator handler's yields) since
// the last read. A job whose worker never streamed shows its output once it is finished.
void Stream(Call& call) {
  call.Respond(call.plane().ReadJobStream(call.principal, call.param(0), call.param(1)),
               [](const ControlPlane::StreamRead& read) {
                 const Job& job = read.job;
                 json::array stream;
                 for (const std::string& chunk : read.chunks) {
                   stream.push_back(json::object{{"output", ParsedOrText(chunk)}});
                 }
                 if (!read.streamed && job.status == JobStatus::kCompleted && !job.output.empty()) {
                   stream.push_back(json::object{{"output", ParsedOrText(job.output)}});
                 }
                 json::object view{{"status", serverless::JobStatusName(job.status)},
                                   {"stream", std::move(stream)}};
                 if (!job.error.empty()) view["error"] = job.error;
                 return view;
               });
}

void Cancel(Call& call) {
  call.Respond(call.plane().CancelJob(call.principal, call.param(0), call.param(1)), ShortView);
}

void Retry(Call& call) {
  call.Respond(call.plane().RetryJob(call.principal, call.param(0), call.param(1)), ShortView);
}

// RunPod's health: jobs and workers by state.
void Health(Call& call) {
  call.Respond(
      call.plane().GetEndpoint(call.principal, call.param(0)), [](const EndpointInfo& info) {
        const auto count = [&info](JobStatus status) {
          const auto it = info.jobs.find(status);
          return it == info.jobs.end() ? 0 : it->second;
        };
        int idle = 0;
        int running = 0;
        int initializing = 0;
        for (const EndpointInfo::Worker& worker : info.workers) {
          if (worker.state == "idle") ++idle;
          if (worker.state == "running") ++running;
          if (worker.state == "initializing") ++initializing;
        }
        return json::object{{"jobs",
                             {{"completed", count(JobStatus::kCompleted)},
                              {"failed", count(JobStatus::kFailed) + count(JobStatus::kTimedOut)},
                              {"inProgress", count(JobStatus::kInProgress)},
                              {"inQueue", count(JobStatus::kInQueue)},
                              {"retried", info.retried}}},
                            {"workers",
                             {{"idle", idle},
                              {"initializing", initializing},
                              {"ready", idle},
                              {"running", running},
                              {"throttled", 0},
                              {"unhealthy", 0}}}};
      });
}

void PurgeQueue(Call& call) {
  call.Respond(call.plane().PurgeQueue(call.principal, call.param(0)), [](int removed) {
    return json::object{{"removed", removed}, {"status", "completed"}};
  });
}

// --- The workers' side ---------------------------------------------------------------------------

// The worker's token: RunPod's library sends it bare in Authorization; "Bearer " is taken too.
std::string WorkerToken(const Call& call) {
  std::string header = call.request.Header("authorization").value_or("");
  if (header.starts_with("Bearer ")) header.erase(0, 7);
  return header;
}

void TryTake(std::shared_ptr<Call> call, std::string endpoint_id, std::string worker_id,
             std::string token, core::TimePoint deadline) {
  // runpod-python appends job_in_progress=1 while it still runs one.
  const ControlPlane::WorkerJob current =
      call->request.QueryValue("job_in_progress").value_or("0") == "1"
          ? ControlPlane::WorkerJob::kStillRunning
          : ControlPlane::WorkerJob::kDropped;
  Result<Written<std::optional<Job>>> taken =
      call->plane().TakeJob(endpoint_id, worker_id, token, current);
  if (!taken.ok()) return call->Respond(taken.status());
  if (taken->value) {
    const Job& job = *taken->value;
    return call->Respond(json::object{{"id", job.id}, {"input", ParsedOrText(job.input)}},
                         taken->sequence);
  }
  if (call->clock().Now() >= deadline) {
    net::HttpResponse none;
    none.status = 204;
    return call->Respond(std::move(none));
  }
  ControlPlane& plane = call->plane();
  plane.WhenJobQueued(endpoint_id, deadline,
                      [call = std::move(call), endpoint_id, worker_id, token, deadline]() mutable {
                        TryTake(std::move(call), endpoint_id, worker_id, token, deadline);
                      });
}

void TakeJob(Call& call) {
  int64_t wait_s = 0;
  if (std::optional<std::string> text = call.request.QueryValue("wait_s")) {
    std::optional<int64_t> value = ParseInteger(*text, 0, call.plane().long_poll_limit_s());
    if (!value) {
      return call.Respond(core::InvalidArgumentError(
          "wait_s: seconds from 0 to " + std::to_string(call.plane().long_poll_limit_s())));
    }
    wait_s = *value;
  }
  const core::TimePoint deadline = call.clock().Now() + std::chrono::seconds(wait_s);
  std::string endpoint_id = call.param(0);
  std::string worker_id = call.param(1);
  std::string token = WorkerToken(call);
  TryTake(std::make_shared<Call>(std::move(call)), std::move(endpoint_id), std::move(worker_id),
          std::move(token), deadline);
}

// The job id of a worker's post: runpod-python appends "&isStream=true|false" to its result and
// stream URLs, which ends up in the last path segment when the URL has no query.
std::string JobParam(const Call& call) {
  const std::string& job = call.param(2);
  return job.substr(0, job.find('&'));
}

// A partial output: {"output": ...} (RunPod's library posts each value a generator handler
// yields). Fields a newer library adds are ignored.
void StreamJob(Call& call) {
  Result<json::object> body = ParseJsonObject(call.request.body);
  if (!body.ok()) return call.Respond(body.status());
  JsonFields fields(*body, wire::UnknownFields::kIgnore);
  const json::value* raw = fields.Raw("output");
  if (raw == nullptr)
    fields.Fail("output: required (the partial output, e.g. {\"output\": \"tok\"})");
  if (Status status = fields.Finish(); !status.ok()) return call.Respond(status);
  call.Respond(call.plane().StreamJobOutput(call.param(0), call.param(1), WorkerToken(call),
                                            JobParam(call), json::serialize(*raw)),
               [](const Job& job) { return ShortView(job); });
}

// The result: {"output": ..., "error": ..., "stopPod": bool} (RunPod's library sends this JSON,
// labelled as a form). Fields a newer library adds are ignored.
void FinishJob(Call& call) {
  Result<json::object> body = ParseJsonObject(call.request.body);
  if (!body.ok()) return call.Respond(body.status());
  JsonFields fields(*body, wire::UnknownFields::kIgnore);
  std::string output;
  std::string error;
  if (const json::value* raw = fields.Raw("output"); raw != nullptr && !raw->is_null()) {
    output = json::serialize(*raw);
  }
  if (const json::value* raw = fields.Raw("error"); raw != nullptr && !raw->is_null()) {
    error = raw->is_string() ? std::string(raw->as_string()) : json::serialize(*raw);
    if (error.empty()) error = "the worker reported an error";
  }
  bool stop_pod = false;
  fields.Bool("stopPod", &stop_pod);  // suanli's scaler decides when a worker stops
  if (Status status = fields.Finish(); !status.ok()) return call.Respond(status);
  const core::TimePoint now = call.clock().Now();
  call.Respond(call.plane().FinishJob(call.param(0), call.param(1), WorkerToken(call),
                                      JobParam(call), std::move(output), std::move(error)),
               [now](const Job& job) { return JobView(job, now); });
}

// "/v2/{endpoint}/{verb}" with nothing after: `verb`; else empty.
std::string_view JobApiVerb(std::string_view target) {
  std::string_view path = target.substr(0, target.find('?'));
  if (!path.starts_with("/v2/")) return {};
  path.remove_prefix(4);
  const size_t slash = path.find('/');
  if (slash == 0 || slash == std::string_view::npos) return {};
  const std::string_view verb = path.substr(slash + 1);
  return verb.find('/') == std::string_view::npos ? verb : std::string_view();
}

// clang-format off
constexpr Route kServerlessJobRoutes[] = {
  {{"POST", "/v2/{endpoint}/run", RouteAccess::kUser, "Queue a job (RunPod-compatible)"}, Run},
  {{"POST", "/v2/{endpoint}/runsync", RouteAccess::kUser, "Run a job and wait for its output (?wait=ms)"}, RunSync},
  {{"GET", "/v2/{endpoint}/status/{job}", RouteAccess::kUser, "A job's status and output"}, GetJobStatus},
  {{"GET", "/v2/{endpoint}/stream/{job}", RouteAccess::kUser, "A job's output as a stream"}, Stream},
  {{"POST", "/v2/{endpoint}/cancel/{job}", RouteAccess::kUser, "Cancel a queued or running job"}, Cancel},
  {{"POST", "/v2/{endpoint}/retry/{job}", RouteAccess::kUser, "Queue a failed, timed-out or cancelled job again"}, Retry},
  {{"GET", "/v2/{endpoint}/health", RouteAccess::kUser, "An endpoint's jobs and workers by state"}, Health},
  {{"POST", "/v2/{endpoint}/purge-queue", RouteAccess::kUser, "Cancel every queued job"}, PurgeQueue},
  {{"GET", "/v2/{endpoint}/job-take/{worker}", RouteAccess::kWorker, "Worker: the next job (?wait_s=N long-polls; 204: none)"}, TakeJob},
  {{"POST", "/v2/{endpoint}/job-done/{worker}/{job}", RouteAccess::kWorker, "Worker: a job's result"}, FinishJob},
  {{"POST", "/v2/{endpoint}/job-stream/{worker}/{job}", RouteAccess::kWorker, "Worker: a partial output of its job, for /stream"}, StreamJob},
};
// clang-format on

}  // namespace

std::span<const Route> ServerlessJobRoutes() { return kServerlessJobRoutes; }

size_t BodyLimitFor(std::string_view method, std::string_view target, size_t default_limit) {
  if (method != "POST") return default_limit;
  // An agent's relayed answer: a chunk of a moving volume's archive is up to
  // wire::kMaxVolumeChunkBytes, as base64 in JSON.
  if (target.starts_with("/v1/agent/requests/")) {
    return std::max(default_limit, wire::kMaxRelayBodyBase64 + (size_t{64} << 10));
  }
  const std::string_view verb = JobApiVerb(target);
  if (verb == "run") return std::max(default_limit, kRunBodyLimit);
  if (verb == "runsync") return std::max(default_limit, kRunSyncBodyLimit);
  return default_limit;
}

}  // namespace suanli::server
