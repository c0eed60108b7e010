// The control plane: serverless endpoints, their jobs, their workers (pods the endpoint owns,
// created through CreatePod so that they are scheduled, checked against the owner's balance and
// billed like any pod) and the tick that scales them. The rules are src/serverless's (pure); this
// file keeps the state, stores it and wakes whoever waits on it.
#include <algorithm>
#include <boost/json/serialize.hpp>

#include "core/pod_state.h"
#include "server/control_plane.h"
#include "server/control_plane_internal.h"
#include "server/job_view.h"
#include "server/secrets.h"
#include "serverless/scaler.h"

namespace suanli::server {

using serverless::Job;
using serverless::JobStatus;

namespace {

constexpr int64_t kMaxJobsPerEndpoint = 100'000;  // stored (queued, running, finished in their TTL)

// The token a worker presents: "slw_" and 48 hex digits.
constexpr std::string_view kWorkerTokenPrefix = "slw_";

std::string NotFoundEndpoint(std::string_view id) {
  return "you have no endpoint " + std::string(id) + " (suanli endpoints list)";
}

std::string NoJob(std::string_view endpoint_id, std::string_view job_id) {
  return "endpoint " + std::string(endpoint_id) + " has no job " + std::string(job_id) +
         " (a finished job is kept for its TTL)";
}

}  // namespace

// --- Loading -------------------------------------------------------------------------------------

void ControlPlane::LoadEndpoints(std::vector<serverless::Endpoint> endpoints,
                                 std::vector<Job> jobs) {
  const core::TimePoint now = Now();
  for (serverless::Endpoint& endpoint : endpoints) serverless_.AddEndpoint(std::move(endpoint));
  for (const auto& [id, pod] : pods_) {
    const auto endpoint = pod.env.find(serverless::kEndpointIdEnv);
    const auto token = pod.env.find(serverless::kWorkerTokenEnv);
    if (endpoint == pod.env.end() || token == pod.env.end() ||
        serverless_.FindEndpoint(endpoint->second) == nullptr ||
        pod.state == PodState::kTerminated) {
      continue;
    }
    WorkerRuntime& worker = serverless_.RuntimeOf(endpoint->second).workers[id];
    worker.token_hash = Sha256Hex(token->second);
    worker.stopping = pod.desired != core::DesiredState::kRunning;
    worker.seen_running = pod.state == PodState::kRunning;
    worker.idle_since = now;
  }
  serverless_.LoadJobs(std::move(jobs), now);
}

// --- Lookups and views ---------------------------------------------------------------------------

Result<serverless::Endpoint*> ControlPlane::FindOwnEndpoint(const Principal& caller,
                                                            std::string_view id, Access access) {
  serverless::Endpoint* endpoint = serverless_.FindEndpoint(std::string(id));
  if (endpoint == nullptr ||
      !access_.Allowed(caller, endpoint->owner_id, endpoint->project_id, Access::kRead)) {
    return core::NotFoundError(NotFoundEndpoint(id));
  }
  if (!access_.Allowed(caller, endpoint->owner_id, endpoint->project_id, access)) {
    return core::PermissionDeniedError("endpoint " + endpoint->name +
                                       " is a project's you only view: its members change it "
                                       "and run its jobs; its owner can make you one");
  }
  return endpoint;
}

Result<Job*> ControlPlane::FindOwnJob(const Principal& caller, std::string_view endpoint_id,
                                      std::string_view job_id, Access access) {
  Result<serverless::Endpoint*> endpoint = FindOwnEndpoint(caller, endpoint_id, access);
  if (!endpoint.ok()) return endpoint.status();
  Job* job = serverless_.FindJobOf((*endpoint)->id, job_id);
  if (job == nullptr) return core::NotFoundError(NoJob(endpoint_id, job_id));
  return job;
}

Result<WorkerRuntime*> ControlPlane::FindWorker(std::string_view endpoint_id,
                                                std::string_view worker_id,
                                                std::string_view token) {
  return serverless_.FindWorker(endpoint_id, worker_id,
                                token.empty() ? std::string() : Sha256Hex(token));
}

EndpointInfo ControlPlane::InfoOf(const serverless::Endpoint& endpoint) const {
  EndpointInfo info;
  info.endpoint = endpoint;
  const EndpointRuntime& runtime = serverless_.RuntimeOf(endpoint.id);
  for (const auto& [pod_id, worker] : runtime.workers) {
    const auto pod = pods_.find(pod_id);
    std::string state = "initializing";
    if (worker.stopping || pod == pods_.end()) {
      state = "stopping";
    } else if (pod->second.state == PodState::kRunning) {
      state = worker.busy() ? "running" : "idle";
    }
    info.workers.push_back(
        {pod_id, std::move(state), worker.pushed.empty() ? worker.job_id : *worker.pushed.begin()});
  }
  const ServerlessRegistry::StatusCounts counts = serverless_.CountsOf(endpoint.id);
  for (size_t status = 0; status < counts.size(); ++status) {
    if (counts[status] > 0) {
      info.jobs[static_cast<JobStatus>(status)] = static_cast<int>(counts[status]);
    }
  }
  info.retried = runtime.retried;
  info.scale_error = runtime.scale_error;
  return info;
}

void ControlPlane::AddEndpointGauges(Gauges& gauges) const {
  const core::TimePoint now = Now();
  for (const auto& [id, endpoint] : serverless_.endpoints()) {
    const EndpointInfo info = InfoOf(endpoint);
    Gauges::Endpoint& out = gauges.endpoints.emplace_back();
    out.id = id;
    for (const auto& [status, count] : info.jobs) {
      out.jobs_by_status[std::string(serverless::JobStatusName(status))] = count;
    }
    for (const EndpointInfo::Worker& worker : info.workers) ++out.workers_by_state[worker.state];
    out.retried = info.retried;
    const ServerlessRegistry::Queue& queue = serverless_.QueueOf(id);
    if (!queue.empty()) {
      out.oldest_wait_s = std::chrono::duration<double>(
                              now - serverless_.jobs().at(queue.begin()->second).created_at)
                              .count();
    }
  }
}

std::vector<WebhookDelivery> ControlPlane::TakeWebhooks() {
  core::MutexLock lock(mutex_);
  return std::exchange(webhooks_, {});
}

void ControlPlane::JobChanged(Change& change, const Job& job) {
  change.Dirty(Collection::kJobs, job.id);
  if (serverless::IsFinal(job.status) && !job.webhook.empty()) {
    const serverless::Endpoint* endpoint = serverless_.FindEndpoint(job.endpoint_id);
    if (endpoint != nullptr) {
      webhooks_.push_back({job.webhook, boost::json::serialize(JobStatusView(job, Now())),
                           endpoint->webhook_secret, 0});
    }
  }
  // Whoever waits on the job (runsync, a status wait) answers after the lock is released. The
  // waiters are the agents' (NodeWaiters); job ids ("job_") never equal a node's id.
  waiters_.Wake(job.id);
}

void ControlPlane::Enqueue(Change& change, const Job& job) {
  JobChanged(change, job);
  waiters_.Wake(job.endpoint_id);  // the workers' long polls
}

// --- Endpoints -----------------------------------------------------------------------------------

namespace {

// Applies what `spec` gives to `endpoint`.
void Apply(const EndpointSpec& spec, serverless::Endpoint& endpoint) {
  if (spec.name) endpoint.name = *spec.name;
  if (spec.template_id) endpoint.template_id = *spec.template_id;
  if (spec.image) endpoint.image = *spec.image;
  if (spec.env) endpoint.env = *spec.env;
  if (spec.gpu_count) endpoint.gpu_count = *spec.gpu_count;
  if (spec.gpu_milli) endpoint.gpu_milli = *spec.gpu_milli;
  if (spec.volume_gb) endpoint.volume_gb = *spec.volume_gb;
  if (spec.min_workers) endpoint.min_workers = *spec.min_workers;
  if (spec.max_workers) endpoint.max_workers = *spec.max_workers;
  if (spec.warm_buffer) endpoint.warm_buffer = *spec.warm_buffer;
  if (spec.idle_timeout_s) endpoint.idle_timeout = std::chrono::seconds(*spec.idle_timeout_s);
  if (spec.scaler) endpoint.scaler = *spec.scaler;
  if (spec.scaler_value) endpoint.scaler_value = *spec.scaler_value;
  if (spec.execution_timeout_s) {
    endpoint.execution_timeout = std::chrono::seconds(*spec.execution_timeout_s);
  }
  if (spec.job_ttl_s) endpoint.job_ttl = std::chrono::seconds(*spec.job_ttl_s);
  if (spec.max_retries) endpoint.max_retries = *spec.max_retries;
  if (spec.worker_mode) endpoint.worker_mode = *spec.worker_mode;
  if (spec.http_port) endpoint.http_port = *spec.http_port;
  if (spec.http_path) endpoint.http_path = *spec.http_path;
  if (spec.http_concurrency) endpoint.http_concurrency = *spec.http_concurrency;
}

}  // namespace

Status ControlPlane::MountEndpointVolumes(const EndpointSpec& spec,
                                          serverless::Endpoint& endpoint) const {
  if (!spec.volumes) return Status::Ok();
  // The volumes are the endpoint's owner's (also when an admin changes it), or its project's.
  Principal owner;
  owner.user_id = endpoint.owner_id;
  Result<std::vector<core::VolumeMount>> mounts =
      ResolveVolumes(owner, *spec.volumes, "", endpoint.project_id);
  if (!mounts.ok()) return mounts.status();
  endpoint.volumes = std::move(*mounts);
  return Status::Ok();
}

Result<Written<EndpointInfo>> ControlPlane::CreateEndpoint(const Principal& caller,
                                                           EndpointSpec spec) {
  SUANLI_RETURN_IF_ERROR(PersonOnly(caller));
  if (!spec.name || spec.name->empty()) {
    return core::InvalidArgumentError("name: an endpoint needs a name");
  }
  Locked locked(*this);
  serverless::Endpoint endpoint;
  Apply(spec, endpoint);
  // A project's endpoint is paid by the project's owner, within the owner's quota.
  Result<AccessPolicy::CreateScope> scope =
      access_.ScopeToCreateIn(caller, spec.project.value_or(""));
  if (!scope.ok()) return scope.status();
  endpoint.project_id = scope->project_id;
  endpoint.owner_id = scope->payer_id;
  SUANLI_RETURN_IF_ERROR(MountEndpointVolumes(spec, endpoint));
  SUANLI_RETURN_IF_ERROR(CheckName("endpoint name", endpoint.name));
  SUANLI_RETURN_IF_ERROR(CheckEnv(endpoint.env));
  SUANLI_RETURN_IF_ERROR(serverless::CheckEndpoint(endpoint));
  if (endpoint.template_id.empty() && endpoint.image.empty()) {
    return core::InvalidArgumentError(
        "give a template (suanli templates lists them; demo-worker runs the demo) or an image for "
        "the workers");
  }
  if (!endpoint.template_id.empty()) {
    Result<const core::Template*> found = FindTemplate(caller, endpoint.template_id);
    if (!found.ok()) return found.status().WithContext("template");
  }
  if (spec.gpu_type && !spec.gpu_type->empty() && *spec.gpu_type != "cheapest") {
    Result<catalog::GpuMatch> gpu = catalog_.Find(*spec.gpu_type);
    if (!gpu.ok()) return gpu.status().WithContext("gpu_type");
    endpoint.gpu_type = gpu->gpu->name;
  }
  const size_t owned = serverless_.OwnedBy(endpoint.owner_id);
  const core::User limits = Shown(users_.at(endpoint.owner_id));
  if (owned >= static_cast<size_t>(std::max(0, limits.max_endpoints))) {
    return core::ResourceExhaustedError(
        std::string(endpoint.project_id.empty() ? "you have " : "the project's owner has ") +
        std::to_string(owned) + " endpoints, " + (endpoint.project_id.empty() ? "your" : "their") +
        " quota's limit (" + std::to_string(limits.max_endpoints) +
        "); delete one (suanli endpoints rm), or ask an admin to "
        "raise it (suanli users set-quota " +
        limits.name + " --endpoints N)");
  }
  endpoint.id = NewId("ep");
  endpoint.webhook_secret = HexEncode(entropy_.Bytes(32));
  endpoint.created_at = Now();
  endpoint.updated_at = endpoint.created_at;
  Change change(*this);
  const serverless::Endpoint& stored = serverless_.AddEndpoint(std::move(endpoint));
  change.Dirty(Collection::kEndpoints, stored.id);
  return Written<EndpointInfo>{InfoOf(stored), change.Commit()};
}

Result<Written<std::vector<EndpointInfo>>> ControlPlane::ListEndpoints(
    const Principal& caller) const {
  SUANLI_RETURN_IF_ERROR(PersonOnly(caller));
  core::MutexLock lock(mutex_);
  std::vector<EndpointInfo> out;
  for (const auto& [id, endpoint] : serverless_.endpoints()) {
    if (access_.Allowed(caller, endpoint.owner_id, endpoint.project_id, Access::kRead)) {
      out.push_back(InfoOf(endpoint));
    }
  }
  return Written<std::vector<EndpointInfo>>{std::move(out), queue_.submitted()};
}

Result<Written<EndpointInfo>> ControlPlane::GetEndpoint(const Principal& caller,
                                                        std::string_view id) const {
  SUANLI_RETURN_IF_ERROR(PersonOnly(caller));
  core::MutexLock lock(mutex_);
  const serverless::Endpoint* endpoint = serverless_.FindEndpoint(std::string(id));
  if (endpoint == nullptr ||
      !access_.Allowed(caller, endpoint->owner_id, endpoint->project_id, Access::kRead)) {
    return core::NotFoundError(NotFoundEndpoint(id));
  }
  return Written<EndpointInfo>{InfoOf(*endpoint), queue_.submitted()};
}

Result<Written<EndpointInfo>> ControlPlane::UpdateEndpoint(const Principal& caller,
                                                           std::string_view id, EndpointSpec spec) {
  SUANLI_RETURN_IF_ERROR(PersonOnly(caller));
  Locked locked(*this);
  Result<serverless::Endpoint*> found = FindOwnEndpoint(caller, id);
  if (!found.ok()) return found.status();
  if (spec.project) {
    return core::InvalidArgumentError(
        "project: an endpoint stays where it was made; make a new one in the other project");
  }
  serverless::Endpoint changed = **found;
  Apply(spec, changed);
  SUANLI_RETURN_IF_ERROR(MountEndpointVolumes(spec, changed));
  SUANLI_RETURN_IF_ERROR(CheckName("endpoint name", changed.name));
  SUANLI_RETURN_IF_ERROR(CheckEnv(changed.env));
  SUANLI_RETURN_IF_ERROR(serverless::CheckEndpoint(changed));
  if (spec.template_id && !spec.template_id->empty()) {
    Result<const core::Template*> base = FindTemplate(caller, *spec.template_id);
    if (!base.ok()) return base.status().WithContext("template");
  }
  if (changed.template_id.empty() && changed.image.empty()) {
    return core::InvalidArgumentError("give a template or an image for the workers");
  }
  if (spec.gpu_type) {
    changed.gpu_type.clear();
    if (!spec.gpu_type->empty() && *spec.gpu_type != "cheapest") {
      Result<catalog::GpuMatch> gpu = catalog_.Find(*spec.gpu_type);
      if (!gpu.ok()) return gpu.status().WithContext("gpu_type");
      changed.gpu_type = gpu->gpu->name;
    }
  }
  changed.updated_at = Now();
  **found = std::move(changed);
  Change change(*this);
  change.Dirty(Collection::kEndpoints, (*found)->id);
  return Written<EndpointInfo>{InfoOf(**found), change.Commit()};
}

Result<Written<EndpointInfo>> ControlPlane::DeleteEndpoint(const Principal& caller,
                                                           std::string_view id) {
  SUANLI_RETURN_IF_ERROR(PersonOnly(caller));
  Locked locked(*this);
  Result<serverless::Endpoint*> found = FindOwnEndpoint(caller, id);
  if (!found.ok()) return found.status();
  const std::string endpoint_id = (*found)->id;
  Change change(*this);
  for (auto& [pod_id, worker] : serverless_.RuntimeOf(endpoint_id).workers) {
    StopWorker(change, pod_id, worker, "its endpoint " + endpoint_id + " was deleted");
  }
  EndpointInfo info = InfoOf(**found);
  // Its jobs go with it; whoever waits on one learns it is gone.
  for (const std::string& job_id : serverless_.RemoveEndpoint(endpoint_id)) {
    waiters_.Wake(job_id);
    change.Dirty(Collection::kJobs, job_id);
  }
  waiters_.Wake(endpoint_id);
  change.Dirty(Collection::kEndpoints, endpoint_id);
  return Written<EndpointInfo>{std::move(info), change.Commit()};
}

// --- Jobs ----------------------------------------------------------------------------------------

Result<Written<Job>> ControlPlane::SubmitJob(const Principal& caller, std::string_view endpoint_id,
                                             JobRequest request) {
  Enqueued enqueued;
  Result<Written<Job>> submitted = EnqueueJob(caller, endpoint_id, std::move(request), &enqueued);
  // Start its first worker now rather than at the next tick (up to 250 ms later): a cold start
  // is the engine's time plus as little of ours as can be.
  if (submitted.ok() && enqueued.no_worker) TickEndpoints();
  // Likewise a push worker with room gets it now.
  if (submitted.ok() && enqueued.push) WakePusher();
  return submitted;
}

Result<Written<Job>> ControlPlane::EnqueueJob(const Principal& caller, std::string_view endpoint_id,
                                              JobRequest request, Enqueued* enqueued) {
  SUANLI_RETURN_IF_ERROR(PersonOnly(caller));
  Locked locked(*this);
  Result<serverless::Endpoint*> found = FindOwnEndpoint(caller, endpoint_id);
  if (!found.ok()) return found.status();
  const serverless::Endpoint& endpoint = **found;
  const int64_t held = serverless_.JobCount(endpoint.id);
  if (held >= kMaxJobsPerEndpoint) {
    return core::ResourceExhaustedError(
        "endpoint " + endpoint.id + " holds " + std::to_string(held) +
        " jobs, the most allowed; wait for them to finish or purge its queue");
  }
  // Queued work is held in memory until a worker takes it: an owner who could not pay for a
  // worker queues none, and each owner's waiting input is bounded.
  const core::User& owner = users_.at(endpoint.owner_id);
  if (LiveBalance(owner, Now()).micros() <= 0) {
    return core::FailedPreconditionError(
        std::string(endpoint.project_id.empty() ? "your" : "the project owner's") + " balance is " +
        LiveBalance(owner, Now()).ToString() +
        ": no worker could run this job; ask an admin for credits (suanli users credit)");
  }
  const size_t waiting = serverless_.WaitingInputBytes(endpoint.owner_id);
  if (waiting + request.input.size() > options_.max_waiting_job_bytes) {
    return core::ResourceExhaustedError(
        "input: " + std::to_string(request.input.size()) + " bytes would take the input of " +
        (endpoint.project_id.empty() ? "your" : "the project owner's") +
        " queued and running jobs past " + std::to_string(options_.max_waiting_job_bytes >> 20) +
        " MiB (" + std::to_string(waiting) +
        " bytes wait now); wait for jobs to finish, or purge a queue (suanli endpoints "
        "purge-queue)");
  }
  enqueued->push = endpoint.worker_mode == serverless::WorkerMode::kHttp;
  if (enqueued->push && request.input.size() > kMaxPushedInputBytes) {
    return core::InvalidArgumentError(
        "input: " + std::to_string(request.input.size()) + " bytes; endpoint " + endpoint.id +
        " posts each job to its workers' port (worker_mode http), which takes at most " +
        std::to_string(kMaxPushedInputBytes >> 20) + " MiB of input");
  }
  Job job;
  job.id = NewId("job");
  job.endpoint_id = endpoint.id;
  job.owner_id = endpoint.owner_id;
  job.input = std::move(request.input);
  job.webhook = std::move(request.webhook);
  job.created_at = Now();
  job.sequence = serverless_.NextSequence();
  job.execution_timeout = request.execution_timeout_s
                              ? std::chrono::seconds(*request.execution_timeout_s)
                              : endpoint.execution_timeout;
  job.ttl = request.ttl_s ? std::chrono::seconds(*request.ttl_s) : endpoint.job_ttl;
  Change change(*this);
  const Job& stored = serverless_.AddJob(std::move(job));
  Enqueue(change, stored);
  enqueued->no_worker = !serverless_.RuntimeOf(endpoint.id).HasLiveWorker();
  return Written<Job>{stored, change.Commit()};
}

Result<Written<Job>> ControlPlane::GetJob(const Principal& caller, std::string_view endpoint_id,
                                          std::string_view job_id) const {
  SUANLI_RETURN_IF_ERROR(PersonOnly(caller));
  core::MutexLock lock(mutex_);
  // FindOwnJob is not const (it hands out a mutable pointer); the lookup here is the same.
  const serverless::Endpoint* endpoint = serverless_.FindEndpoint(std::string(endpoint_id));
  if (endpoint == nullptr ||
      !access_.Allowed(caller, endpoint->owner_id, endpoint->project_id, Access::kRead)) {
    return core::NotFoundError(NotFoundEndpoint(endpoint_id));
  }
  const Job* job = std::as_const(serverless_).FindJobOf(endpoint->id, job_id);
  if (job == nullptr) return core::NotFoundError(NoJob(endpoint_id, job_id));
  return Written<Job>{*job, queue_.submitted()};
}

Result<Written<Job>> ControlPlane::CancelJob(const Principal& caller, std::string_view endpoint_id,
                                             std::string_view job_id) {
  SUANLI_RETURN_IF_ERROR(PersonOnly(caller));
  Locked locked(*this);
  Result<Job*> found = FindOwnJob(caller, endpoint_id, job_id);
  if (!found.ok()) return found.status();
  Job& job = **found;
  const JobStatus before = job.status;
  const std::string worker_id = job.worker_id;
  SUANLI_RETURN_IF_ERROR(serverless::Cancel(job, Now()));
  job.input.clear();  // held in memory, and a cancelled job is not run again
  EndpointRuntime& runtime = serverless_.RuntimeOf(job.endpoint_id);
  Change change(*this);
  if (before == JobStatus::kInProgress) {
    // The worker may still be computing it: stopped, so that it does not take the next job late.
    const auto worker = runtime.workers.find(worker_id);
    if (worker != runtime.workers.end() && worker->second.pushed.erase(job.id) > 0) {
      // A pushed job's request ends on its own; the worker's answer then finds it cancelled.
    } else if (worker != runtime.workers.end()) {
      worker->second.job_id.clear();
      StopWorker(change, worker_id, worker->second, "its job " + job.id + " was cancelled");
    }
  }
  JobChanged(change, job);
  return Written<Job>{job, change.Commit()};
}

Result<Written<Job>> ControlPlane::RetryJob(const Principal& caller, std::string_view endpoint_id,
                                            std::string_view job_id) {
  SUANLI_RETURN_IF_ERROR(PersonOnly(caller));
  Locked locked(*this);
  Result<Job*> found = FindOwnJob(caller, endpoint_id, job_id);
  if (!found.ok()) return found.status();
  Job& job = **found;
  if (job.status == JobStatus::kCancelled) {
    return core::FailedPreconditionError(
        "job " + job.id +
        " was cancelled, and its input freed with it; submit it again (retry takes FAILED and "
        "TIMED_OUT jobs, as RunPod's does)");
  }
  SUANLI_RETURN_IF_ERROR(serverless::Requeue(job, serverless_.NextSequence()));
  job.created_at = Now();  // its TTL and delay count from the retry
  Change change(*this);
  Enqueue(change, job);
  return Written<Job>{job, change.Commit()};
}

Result<Written<int>> ControlPlane::PurgeQueue(const Principal& caller,
                                              std::string_view endpoint_id) {
  SUANLI_RETURN_IF_ERROR(PersonOnly(caller));
  Locked locked(*this);
  Result<serverless::Endpoint*> found = FindOwnEndpoint(caller, endpoint_id);
  if (!found.ok()) return found.status();
  Change change(*this);
  const core::TimePoint now = Now();
  // A copy: each job cancelled leaves the queue as it is written.
  const ServerlessRegistry::Queue queued = serverless_.QueueOf((*found)->id);
  for (const auto& [sequence, id] : queued) {
    Job& job = *serverless_.FindJob(id);
    (void)serverless::Cancel(job, now);
    job.error = "removed from the queue by purge-queue";
    job.input.clear();  // the memory it held is free at once, not at the end of its TTL
    JobChanged(change, job);
  }
  return Written<int>{static_cast<int>(queued.size()), change.Commit()};
}

void ControlPlane::WhenJobChanges(std::string_view job_id, core::TimePoint deadline,
                                  std::function<void()> notify) {
  Locked locked(*this);
  const std::string id(job_id);
  waiters_.Add(id, deadline, std::move(notify));
  const Job* job = serverless_.FindJob(id);
  if (job == nullptr || serverless::IsFinal(job->status)) waiters_.Wake(id);
}

// --- Workers -------------------------------------------------------------------------------------

Result<Written<std::optional<Job>>> ControlPlane::TakeJob(std::string_view endpoint_id,
                                                          std::string_view worker_id,
                                                          std::string_view token,
                                                          WorkerJob current) {
  Locked locked(*this);
  Result<WorkerRuntime*> found = FindWorker(endpoint_id, worker_id, token);
  if (!found.ok()) return found.status();
  WorkerRuntime& worker = **found;
  const serverless::Endpoint& endpoint = *serverless_.FindEndpoint(std::string(endpoint_id));
  if (endpoint.worker_mode == serverless::WorkerMode::kHttp) {
    return core::FailedPreconditionError(
        "endpoint " + endpoint.id +
        " posts its jobs to its workers' port (worker_mode http); its workers take none");
  }
  EndpointRuntime& runtime = serverless_.RuntimeOf(endpoint.id);
  const core::TimePoint now = Now();
  Change change(*this);
  if (!worker.seen_running) {
    worker.seen_running = true;
    worker.idle_since = now;
  }
  if (!worker.job_id.empty() && current == WorkerJob::kStillRunning) {
    return Written<std::optional<Job>>{std::nullopt, change.Commit()};
  }
  if (!worker.job_id.empty()) {
    // It asks for another while one is its own: it dropped that one (a restarted worker loop).
    Job& dropped = *serverless_.FindJob(worker.job_id);
    worker.job_id.clear();
    worker.idle_since = now;
    if (serverless::WorkerLost(dropped, endpoint.max_retries, "it asked for another job", now)) {
      ++runtime.retried;
      Enqueue(change, dropped);
    } else {
      JobChanged(change, dropped);
    }
  }
  const ServerlessRegistry::Queue& queue = serverless_.QueueOf(endpoint.id);
  if (queue.empty()) return Written<std::optional<Job>>{std::nullopt, change.Commit()};
  Job& job = *serverless_.FindJob(queue.begin()->second);
  SUANLI_CHECK(serverless::Start(job, std::string(worker_id), now).ok(),
               "a queued job is IN_QUEUE");
  worker.job_id = job.id;
  JobChanged(change, job);
  return Written<std::optional<Job>>{job, change.Commit()};
}

Result<Written<Job>> ControlPlane::FinishJob(std::string_view endpoint_id,
                                             std::string_view worker_id, std::string_view token,
                                             std::string_view job_id, std::string output,
                                             std::string error) {
  Locked locked(*this);
  Result<WorkerRuntime*> found = FindWorker(endpoint_id, worker_id, token);
  if (!found.ok()) return found.status();
  WorkerRuntime& worker = **found;
  Job* found_job = serverless_.FindJobOf(endpoint_id, job_id);
  if (found_job == nullptr) return core::NotFoundError(NoJob(endpoint_id, job_id));
  Job& job = *found_job;
  const core::TimePoint now = Now();
  SUANLI_RETURN_IF_ERROR(
      serverless::Finish(job, worker_id, std::move(output), std::move(error), now));
  if (worker.job_id == job.id) {
    worker.job_id.clear();
    worker.idle_since = now;
  }
  Change change(*this);
  JobChanged(change, job);
  return Written<Job>{job, change.Commit()};
}

void ControlPlane::WhenJobQueued(std::string_view endpoint_id, core::TimePoint deadline,
                                 std::function<void()> notify) {
  Locked locked(*this);
  const std::string id(endpoint_id);
  waiters_.Add(id, deadline, std::move(notify));
  if (serverless_.FindEndpoint(id) == nullptr || !serverless_.QueueOf(id).empty()) {
    waiters_.Wake(id);
  }
}

// --- The tick: timeouts, lost workers, scaling ---------------------------------------------------

void ControlPlane::StopWorker(Change& change, const std::string& pod_id, WorkerRuntime& worker,
                              std::string reason) {
  worker.stopping = true;
  const auto pod = pods_.find(pod_id);
  if (pod == pods_.end() || pod->second.desired == core::DesiredState::kTerminated) return;
  SetDesired(change, pod->second, core::DesiredState::kTerminated, std::move(reason));
}

void ControlPlane::LoseWorker(Change& change, const serverless::Endpoint& endpoint,
                              const std::string& pod_id, WorkerRuntime& worker,
                              std::string_view reason) {
  std::vector<std::string> lost(worker.pushed.begin(), worker.pushed.end());
  if (!worker.job_id.empty()) lost.push_back(worker.job_id);
  worker.pushed.clear();
  worker.job_id.clear();
  for (const std::string& job_id : lost) {
    Job* found = serverless_.FindJob(job_id);
    if (found == nullptr) continue;
    Job& job = *found;
    if (job.status == JobStatus::kInProgress && job.worker_id == pod_id) {
      if (serverless::WorkerLost(job, endpoint.max_retries, reason, Now())) {
        ++serverless_.RuntimeOf(endpoint.id).retried;
        Enqueue(change, job);
      } else {
        JobChanged(change, job);
      }
    }
  }
  StopWorker(change, pod_id, worker,
             "worker of endpoint " + endpoint.id + ": " + std::string(reason));
}

uint64_t ControlPlane::TickEndpoints() {
  struct NewWorker {
    std::string endpoint_id;
    std::string owner_id;
    std::string token;
    PodSpec spec;
  };
  std::vector<NewWorker> new_workers;
  uint64_t sequence = 0;
  bool push_work = false;  // an http-mode endpoint has queued jobs
  {
    Locked locked(*this);
    const core::TimePoint now = Now();
    Change change(*this);
    for (const auto& [endpoint_id, endpoint] : serverless_.endpoints()) {
      EndpointRuntime& runtime = serverless_.RuntimeOf(endpoint_id);
      // Jobs: execution timeouts and TTLs of the unfinished ones, then the expired ones.
      const ServerlessRegistry::Ids& unfinished = serverless_.UnfinishedOf(endpoint_id);
      for (auto it = unfinished.begin(); it != unfinished.end();) {
        Job& job = *serverless_.FindJob(*it);
        ++it;  // JobChanged moves a job that ends out of `unfinished`
        const JobStatus before = job.status;
        if (serverless::CheckTimeouts(job, now)) {
          if (before == JobStatus::kInProgress) {
            const auto worker = runtime.workers.find(job.worker_id);
            if (worker != runtime.workers.end() && worker->second.pushed.erase(job.id) > 0) {
              // Its request to the worker ends at its own deadline; the answer is not taken.
              if (!worker->second.busy()) worker->second.idle_since = now;
            } else if (worker != runtime.workers.end() && worker->second.job_id == job.id) {
              worker->second.job_id.clear();
              StopWorker(change, job.worker_id, worker->second,
                         "its job " + job.id + " ran past the execution timeout");
            }
          }
          JobChanged(change, job);
        }
      }
      const ServerlessRegistry::Expiries& expiries = serverless_.ExpiriesOf(endpoint_id);
      while (!expiries.empty() && expiries.begin()->first <= now) {
        const std::string id = expiries.begin()->second;
        serverless_.RemoveJob(id);
        change.Dirty(Collection::kJobs, id);
      }
      // Workers: lost ones, and the scaler's view of the live ones.
      serverless::ScalerInput input;
      input.now = now;
      for (auto it = runtime.workers.begin(); it != runtime.workers.end();) {
        const std::string& pod_id = it->first;
        WorkerRuntime& worker = it->second;
        const auto pod = pods_.find(pod_id);
        const bool gone = pod == pods_.end() || pod->second.state == PodState::kTerminated;
        const bool down = gone || core::IsDown(pod->second.state) ||
                          pod->second.desired != core::DesiredState::kRunning;
        if (down && (!worker.stopping || worker.busy())) {
          std::string reason = "its pod is gone";
          if (!gone) {
            reason = "its pod is " + std::string(core::PodStateName(pod->second.state));
            if (!pod->second.state_reason.empty()) reason += ": " + pod->second.state_reason;
          }
          LoseWorker(change, endpoint, pod_id, worker, reason);
        } else if (!down && !worker.stopping) {
          serverless::WorkerView view{pod_id, serverless::WorkerState::kStarting,
                                      worker.idle_since};
          if (pod->second.state == PodState::kRunning) {
            if (!worker.seen_running) {
              worker.seen_running = true;
              worker.idle_since = now;
              view.idle_since = now;
            }
            view.state =
                worker.busy() ? serverless::WorkerState::kBusy : serverless::WorkerState::kIdle;
          }
          input.workers.push_back(view);
          input.in_progress += worker.in_progress();
        }
        it = gone ? runtime.workers.erase(it) : std::next(it);
      }
      // After the lost workers' jobs went back to the queue.
      const ServerlessRegistry::Queue& queue = serverless_.QueueOf(endpoint_id);
      input.in_queue = static_cast<int>(queue.size());
      push_work |= endpoint.worker_mode == serverless::WorkerMode::kHttp && !queue.empty();
      if (!queue.empty()) {
        input.oldest_queued_at = serverless_.FindJob(queue.begin()->second)->created_at;
      }
      const serverless::ScalerDecision decision = serverless::DecideScale(endpoint, input);
      for (const std::string& pod_id : decision.stop) {
        StopWorker(change, pod_id, runtime.workers.at(pod_id),
                   "endpoint " + endpoint.name + " scaled down: idle for " +
                       std::to_string(endpoint.idle_timeout.count()) + " s");
      }
      for (int i = 0; i < decision.add; ++i) {
        NewWorker worker;
        worker.endpoint_id = endpoint_id;
        worker.owner_id = endpoint.owner_id;
        worker.spec.project = endpoint.project_id;  // a project's endpoint's workers are its pods
        worker.token = std::string(kWorkerTokenPrefix) + HexEncode(entropy_.Bytes(24));
        worker.spec.name = endpoint.name + "-worker";
        worker.spec.template_id = endpoint.template_id;
        worker.spec.image = endpoint.image;
        worker.spec.env = serverless::WorkerEnv(endpoint, options_.worker_url, worker.token);
        worker.spec.gpu_type = endpoint.gpu_type;
        worker.spec.gpu_count = endpoint.gpu_count;
        worker.spec.gpu_milli = endpoint.gpu_milli;
        worker.spec.volume_gb = endpoint.volume_gb;
        for (const core::VolumeMount& mount : endpoint.volumes) {
          worker.spec.volumes.push_back({mount.volume_id, mount.mount_path, mount.read_only});
        }
        if (endpoint.worker_mode == serverless::WorkerMode::kHttp) {
          // Published, so that its node's relay reaches it, and probed, so that jobs go to it only
          // once it answers (the pod's `ready`).
          worker.spec.ports = std::vector<core::PortSpec>{{endpoint.http_port, "http"}};
        }
        // A worker waits for a GPU of its type as RunPod's "throttled" workers do, even where no
        // node has one yet: the endpoint asked for it, and nodes come and go.
        worker.spec.queue = true;
        new_workers.push_back(std::move(worker));
      }
    }
    // The workers asked for, in the same critical section: no endpoint can go meanwhile, and no
    // second run of the tick can start the worker this decision asked for. Each is its owner's
    // pod, checked as any pod (balance, quotas, budgets); one refused leaves the others be.
    for (NewWorker& worker : new_workers) {
      Principal owner;
      owner.user_id = worker.owner_id;
      EndpointRuntime& runtime = serverless_.RuntimeOf(worker.endpoint_id);
      Result<core::Pod*> pod = AddPod(change, owner, std::move(worker.spec));
      if (!pod.ok()) {
        runtime.scale_error = "a worker could not start: " + pod.status().message();
        continue;
      }
      runtime.scale_error.clear();
      WorkerRuntime& added = runtime.workers[(*pod)->id];
      added.token_hash = Sha256Hex(worker.token);
      added.idle_since = now;
    }
    sequence = change.Commit();
  }
  if (push_work) WakePusher();
  return sequence;
}

}  // namespace suanli::server
