// The control plane: jobs of http-mode endpoints (worker_mode http), pushed to their workers.
// Such a worker is an HTTP server (vLLM's OpenAI server, a web app); a queued job goes to a ready
// worker with room (fewer than http_concurrency jobs posted to it), the JobPusher posts its input
// to the worker's port through its node's relay, and the answer comes back here. The queue, the
// scaler, timeouts and lost workers are the same as for pull workers (control_plane_endpoints.cc).
#include <algorithm>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>
#include <system_error>

#include "server/control_plane.h"
#include "server/control_plane_internal.h"

namespace suanli::server {

using serverless::Job;
using serverless::JobStatus;

namespace {

constexpr size_t kMaxErrorExcerpt = 1'000;  // characters of a worker's failed answer kept
constexpr std::chrono::seconds kMaxPushBackoff{30};

// The answer as a job's output: JSON text when it is JSON, else a JSON string of it.
std::string OutputOf(std::string_view content_type, const std::string& body) {
  if (body.empty()) return "";
  std::error_code error;
  boost::json::value parsed = boost::json::parse(body, error);
  if (!error) return boost::json::serialize(parsed);
  (void)content_type;  // a body that claims JSON and is not is kept as the text it is
  return boost::json::serialize(boost::json::value(body));
}

std::string Excerpt(const std::string& body) {
  if (body.size() <= kMaxErrorExcerpt) return body;
  return body.substr(0, kMaxErrorExcerpt) + "...";
}

}  // namespace

std::vector<PushedJob> ControlPlane::TakePushJobs() {
  std::vector<PushedJob> out;
  Locked locked(*this);
  const core::TimePoint now = Now();
  Change change(*this);
  for (const auto& [endpoint_id, endpoint] : serverless_.endpoints()) {
    if (endpoint.worker_mode != serverless::WorkerMode::kHttp) continue;
    EndpointRuntime& runtime = serverless_.RuntimeOf(endpoint_id);
    const ServerlessRegistry::Queue& queue = serverless_.QueueOf(endpoint_id);
    if (queue.empty()) continue;
    // The workers that take jobs now: live, running, answering on their ports, on a node whose
    // agent is there to relay.
    std::vector<std::pair<const core::Pod*, WorkerRuntime*>> ready;
    for (auto& [pod_id, worker] : runtime.workers) {
      const auto pod = pods_.find(pod_id);
      if (worker.stopping || pod == pods_.end() || pod->second.state != PodState::kRunning ||
          !pod->second.ready || pod->second.desired != core::DesiredState::kRunning ||
          now < worker.push_after) {
        continue;
      }
      const auto node = nodes_.find(pod->second.node_id);
      if (node == nodes_.end() || node->second.state != core::NodeState::kReady) continue;
      ready.emplace_back(&pod->second, &worker);
    }
    // A job each in turn, so that the jobs spread over the workers.
    bool gave = true;
    while (gave && !queue.empty()) {
      gave = false;
      for (auto& [pod, worker] : ready) {
        if (queue.empty()) break;
        if (static_cast<int>(worker->pushed.size()) >= endpoint.http_concurrency) continue;
        Job& job = *serverless_.FindJob(queue.begin()->second);
        SUANLI_CHECK(serverless::Start(job, pod->id, now).ok(), "a queued job is IN_QUEUE");
        if (!worker->seen_running) worker->seen_running = true;
        worker->pushed.insert(job.id);
        JobChanged(change, job);  // which takes it out of the queue
        out.push_back({job.id, endpoint_id, pod->id, pod->node_id, NodeName(pod->node_id),
                       endpoint.http_port, endpoint.http_path, job.input, job.execution_timeout});
        gave = true;
      }
    }
  }
  // Not waited for: a crash before it is durable leaves the job queued, and it runs again (at
  // least once, as for a worker lost mid-job).
  (void)change.Commit();
  return out;
}

uint64_t ControlPlane::AnswerPushedJob(const PushedJob& pushed, int status,
                                       std::string_view content_type, std::string body) {
  Locked locked(*this);
  const core::TimePoint now = Now();
  Change change(*this);
  const serverless::Endpoint* endpoint = serverless_.FindEndpoint(pushed.endpoint_id);
  Job* job = serverless_.FindJob(pushed.job_id);
  if (endpoint == nullptr || job == nullptr) return change.Commit();
  EndpointRuntime& runtime = serverless_.RuntimeOf(pushed.endpoint_id);
  const auto worker = runtime.workers.find(pushed.worker_id);
  if (worker != runtime.workers.end()) {
    WorkerRuntime& answered = worker->second;
    if (answered.pushed.erase(pushed.job_id) > 0 && !answered.busy()) answered.idle_since = now;
    if (status >= 500) {
      const std::chrono::seconds pause(int64_t{1} << std::min(answered.push_failures, 5));
      answered.push_after = now + std::min(kMaxPushBackoff, pause);
      ++answered.push_failures;
    } else {
      answered.push_failures = 0;
    }
  }
  Job& stored = *job;
  if (stored.status != JobStatus::kInProgress || stored.worker_id != pushed.worker_id) {
    return change.Commit();  // cancelled or timed out meanwhile: its answer is not taken
  }
  if (status >= 500) {
    const std::string reason = "it answered HTTP " + std::to_string(status) +
                               (body.empty() ? std::string() : ": " + Excerpt(body));
    if (serverless::WorkerLost(stored, endpoint->max_retries, reason, now)) {
      ++runtime.retried;
      Enqueue(change, stored);
    } else {
      JobChanged(change, stored);
    }
    return change.Commit();
  }
  std::string output;
  std::string error;
  if (status >= 200 && status < 300) {
    output = OutputOf(content_type, body);
  } else {
    error = "the worker answered HTTP " + std::to_string(status) +
            (body.empty() ? std::string() : ": " + Excerpt(body));
  }
  SUANLI_CHECK(
      serverless::Finish(stored, pushed.worker_id, std::move(output), std::move(error), now).ok(),
      "the job is IN_PROGRESS on this worker");
  JobChanged(change, stored);
  return change.Commit();
}

void ControlPlane::SetPushHook(std::function<void()> hook) {
  core::MutexLock lock(mutex_);
  push_hook_ = std::move(hook);
}

void ControlPlane::WakePusher() {
  std::function<void()> hook;
  {
    core::MutexLock lock(mutex_);
    hook = push_hook_;
  }
  if (hook) hook();
}

}  // namespace suanli::server
