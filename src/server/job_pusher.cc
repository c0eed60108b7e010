#include "server/job_pusher.h"

#include <chrono>
#include <string>
#include <utility>

namespace suanli::server {
namespace {

// The relay's wait beyond the job's execution timeout: the tick (every 250 ms) times the job out
// first.
constexpr auto kRelayMargin = std::chrono::seconds(5);
constexpr auto kAgentMargin = std::chrono::seconds(2);

}  // namespace

JobPusher::JobPusher(ControlPlane& plane, Relay& relay) : plane_(plane), relay_(relay) {
  plane_.SetPushHook([this] { Push(); });
}

JobPusher::~JobPusher() { Stop(); }

void JobPusher::Stop() {
  if (stopped_.exchange(true)) return;
  plane_.SetPushHook(nullptr);
}

void JobPusher::Push() {
  if (stopped_) return;
  for (PushedJob& job : plane_.TakePushJobs()) {
    RelayRequest request;
    request.kind = RelayRequest::Kind::kHttp;
    request.pod_id = job.worker_id;
    request.port = job.port;
    request.method = "POST";
    request.target = job.path;
    request.headers = {{"content-type", "application/json"}, {"x-suanli-job-id", job.job_id}};
    request.body = job.input;
    request.timeout_ms = static_cast<int>(
        std::chrono::duration_cast<std::chrono::milliseconds>(job.execution_timeout + kAgentMargin)
            .count());
    const std::string node_id = job.node_id;
    const std::string node_name = job.node_name;
    const core::Duration wait = job.execution_timeout + kRelayMargin;
    auto shared = std::make_shared<PushedJob>(std::move(job));
    const core::Status submitted = relay_.Submit(
        node_id, node_name, std::move(request),
        [this, shared](net::HttpResponse answer) { Answered(*shared, answer); }, wait);
    if (!submitted.ok()) {
      // The node has too many requests waiting: as if the worker could not be reached (and not
      // pushed again from here, which would find the node as busy).
      (void)plane_.AnswerPushedJob(*shared, 503, "text/plain", submitted.message());
    }
  }
}

void JobPusher::Answered(const PushedJob& job, const net::HttpResponse& answer) {
  if (stopped_) return;
  (void)plane_.AnswerPushedJob(job, answer.status, answer.content_type, answer.body);
  Push();  // its room on the worker is free again
}

}  // namespace suanli::server
