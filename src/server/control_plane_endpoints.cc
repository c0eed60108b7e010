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

constexpr size_t kMaxJobsPerEndpoint = 100'000;  // stored (queued, running, finished in their TTL)

// The token a worker presents: "slw_" and 48 hex digits.
constexpr std::string_view kWorkerTokenPrefix = "slw_";

std::string NotFoundEndpoint(std::string_view id) {
  return "you have no endpoint " + std::string(id) + " (suanli endpoints list)";
}

// The env of a worker: suanli's names, and RunPod's worker library's (runpod-python reads
// RUNPOD_WEBHOOK_GET_JOB, replacing "$ID" by RUNPOD_POD_ID and appending "&job_in_progress=0|1";
// RUNPOD_WEBHOOK_POST_OUTPUT, replacing "$RUNPOD_POD_ID" by the worker and "$ID" by the job; and
// sends RUNPOD_AI_API_KEY as the Authorization header, without "Bearer").
std::map<std::string, std::string> WorkerEnv(const serverless::Endpoint& endpoint,
                                             const std::string& base_url,
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

}  // namespace

// --- Loading -------------------------------------------------------------------------------------

void ControlPlane::LoadEndpoints(std::vector<serverless::Endpoint> endpoints,
                                 std::vector<Job> jobs) {
  const core::TimePoint now = Now();
  for (serverless::Endpoint& endpoint : endpoints) {
    endpoint_runtime_[endpoint.id];
    endpoints_[endpoint.id] = std::move(endpoint);
  }
  for (const auto& [id, pod] : pods_) {
    const auto endpoint = pod.env.find(kEndpointIdEnv);
    const auto token = pod.env.find(kWorkerTokenEnv);
    if (endpoint == pod.env.end() || token == pod.env.end() ||
        !endpoints_.contains(endpoint->second) || pod.state == PodState::kTerminated) {
      continue;
    }
    WorkerRuntime& worker = endpoint_runtime_[endpoint->second].workers[id];
    worker.token_hash = Sha256Hex(token->second);
    worker.stopping = pod.desired != core::DesiredState::kRunning;
    worker.seen_running = pod.state == PodState::kRunning;
    worker.idle_since = now;
  }
  for (Job& job : jobs) {
    last_job_sequence_ = std::max(last_job_sequence_, job.sequence);
    EndpointRuntime& runtime = endpoint_runtime_[job.endpoint_id];
    runtime.jobs.insert(job.id);
    if (job.status == JobStatus::kInQueue) runtime.queue.emplace(job.sequence, job.id);
    const serverless::Endpoint* endpoint = nullptr;
    if (const auto found = endpoints_.find(job.endpoint_id); found != endpoints_.end()) {
      endpoint = &found->second;
    }
    if (job.status == JobStatus::kInProgress && endpoint != nullptr &&
        endpoint->worker_mode == serverless::WorkerMode::kHttp) {
      // Its request to the worker ended with the server: queued again (in memory; the store
      // learns it with the job's next change, and a restart before that does this again).
      if (serverless::WorkerLost(job, endpoint->max_retries,
                                 "the server restarted while the job was posted to it", now)) {
        runtime.queue.emplace(job.sequence, job.id);
      }
    } else if (job.status == JobStatus::kInProgress) {
      const auto worker = runtime.workers.find(job.worker_id);
      // A job whose worker is gone is found by the next tick (its worker is not live).
      if (worker != runtime.workers.end()) worker->second.job_id = job.id;
    }
    const Job& stored = jobs_[job.id] = std::move(job);
    IndexJob(stored);
  }
  // Jobs of an endpoint that is gone (never written so, but a store edited by hand): dropped.
  for (auto it = endpoint_runtime_.begin(); it != endpoint_runtime_.end();) {
    it = endpoints_.contains(it->first) ? std::next(it) : endpoint_runtime_.erase(it);
  }
  // An IN_PROGRESS job whose worker is not known any more goes back to the queue at the first
  // tick: give it a worker entry that is already lost.
  for (auto& [id, job] : jobs_) {
    if (job.status != JobStatus::kInProgress) continue;
    EndpointRuntime& runtime = endpoint_runtime_[job.endpoint_id];
    if (!runtime.workers.contains(job.worker_id)) {
      WorkerRuntime& lost = runtime.workers[job.worker_id];
      lost.job_id = job.id;
      lost.stopping = true;
    }
  }
}

// --- Lookups and views ---------------------------------------------------------------------------

Result<serverless::Endpoint*> ControlPlane::FindOwnEndpoint(const Principal& caller,
                                                            std::string_view id, Access access) {
  const auto it = endpoints_.find(std::string(id));
  if (it == endpoints_.end() ||
      !access_.Allowed(caller, it->second.owner_id, it->second.project_id, Access::kRead)) {
    return core::NotFoundError(NotFoundEndpoint(id));
  }
  if (!access_.Allowed(caller, it->second.owner_id, it->second.project_id, access)) {
    return core::PermissionDeniedError("endpoint " + it->second.name +
                                       " is a project's you only view: its members change it "
                                       "and run its jobs; its owner can make you one");
  }
  return &it->second;
}

Result<Job*> ControlPlane::FindOwnJob(const Principal& caller, std::string_view endpoint_id,
                                      std::string_view job_id, Access access) {
  Result<serverless::Endpoint*> endpoint = FindOwnEndpoint(caller, endpoint_id, access);
  if (!endpoint.ok()) return endpoint.status();
  const auto it = jobs_.find(std::string(job_id));
  if (it == jobs_.end() || it->second.endpoint_id != (*endpoint)->id) {
    return core::NotFoundError("endpoint " + std::string(endpoint_id) + " has no job " +
                               std::string(job_id) + " (a finished job is kept for its TTL)");
  }
  return &it->second;
}

Result<WorkerRuntime*> ControlPlane::FindWorker(std::string_view endpoint_id,
                                                std::string_view worker_id,
                                                std::string_view token) {
  const auto runtime = endpoint_runtime_.find(std::string(endpoint_id));
  if (runtime != endpoint_runtime_.end()) {
    const auto worker = runtime->second.workers.find(std::string(worker_id));
    if (worker != runtime->second.workers.end() && !token.empty() &&
        worker->second.token_hash == Sha256Hex(token)) {
      if (worker->second.stopping) {
        return core::NotFoundError("worker " + std::string(worker_id) + " is being stopped");
      }
      return &worker->second;
    }
  }
  return core::UnauthenticatedError("not a worker of endpoint " + std::string(endpoint_id) +
                                    " with this token");
}

EndpointInfo ControlPlane::InfoOf(const serverless::Endpoint& endpoint) const {
  EndpointInfo info;
  info.endpoint = endpoint;
  const EndpointRuntime& runtime = endpoint_runtime_.at(endpoint.id);
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
  for (const std::string& id : runtime.jobs) ++info.jobs[jobs_.at(id).status];
  info.retried = runtime.retried;
  info.scale_error = runtime.scale_error;
  return info;
}

void ControlPlane::AddEndpointGauges(Gauges& gauges) const {
  const core::TimePoint now = Now();
  for (const auto& [id, endpoint] : endpoints_) {
    const EndpointInfo info = InfoOf(endpoint);
    Gauges::Endpoint& out = gauges.endpoints.emplace_back();
    out.id = id;
    for (const auto& [status, count] : info.jobs) {
      out.jobs_by_status[std::string(serverless::JobStatusName(status))] = count;
    }
    for (const EndpointInfo::Worker& worker : info.workers) ++out.workers_by_state[worker.state];
    out.retried = info.retried;
    const EndpointRuntime& runtime = endpoint_runtime_.at(id);
    if (!runtime.queue.empty()) {
      out.oldest_wait_s =
          std::chrono::duration<double>(now - jobs_.at(runtime.queue.begin()->second).created_at)
              .count();
    }
  }
}

std::vector<WebhookDelivery> ControlPlane::TakeWebhooks() {
  core::MutexLock lock(mutex_);
  return std::exchange(webhooks_, {});
}

void ControlPlane::IndexJob(const Job& job) {
  const auto runtime = endpoint_runtime_.find(job.endpoint_id);
  if (runtime == endpoint_runtime_.end()) return;
  if (serverless::IsFinal(job.status)) {
    runtime->second.unfinished.erase(job.id);
    runtime->second.expiries.emplace(serverless::ExpiresAt(job), job.id);
  } else {
    runtime->second.unfinished.insert(job.id);
  }
}

void ControlPlane::JobChanged(Change& change, const Job& job) {
  change.Dirty(Collection::kJobs, job.id);
  IndexJob(job);
  if (serverless::IsFinal(job.status) && !job.webhook.empty()) {
    const auto endpoint = endpoints_.find(job.endpoint_id);
    if (endpoint != endpoints_.end()) {
      webhooks_.push_back({job.webhook, boost::json::serialize(JobStatusView(job, Now())),
                           endpoint->second.webhook_secret, 0});
    }
  }
  // Whoever waits on the job (runsync, a status wait) answers after the lock is released. The
  // waiters are the agents' (NodeWaiters); job ids ("job_") never equal a node's id.
  waiters_.Wake(job.id);
}

void ControlPlane::Enqueue(Change& change, Job& job) {
  endpoint_runtime_[job.endpoint_id].queue.emplace(job.sequence, job.id);
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
  int owned = 0;
  for (const auto& entry : endpoints_) owned += entry.second.owner_id == endpoint.owner_id ? 1 : 0;
  const core::User limits = Shown(users_.at(endpoint.owner_id));
  if (owned >= limits.max_endpoints) {
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
  endpoint_runtime_[endpoint.id];
  const serverless::Endpoint& stored = endpoints_[endpoint.id] = std::move(endpoint);
  change.Dirty(Collection::kEndpoints, stored.id);
  return Written<EndpointInfo>{InfoOf(stored), change.Commit()};
}

Result<Written<std::vector<EndpointInfo>>> ControlPlane::ListEndpoints(
    const Principal& caller) const {
  SUANLI_RETURN_IF_ERROR(PersonOnly(caller));
  core::MutexLock lock(mutex_);
  std::vector<EndpointInfo> out;
  for (const auto& [id, endpoint] : endpoints_) {
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
  const auto it = endpoints_.find(std::string(id));
  if (it == endpoints_.end() ||
      !access_.Allowed(caller, it->second.owner_id, it->second.project_id, Access::kRead)) {
    return core::NotFoundError(NotFoundEndpoint(id));
  }
  return Written<EndpointInfo>{InfoOf(it->second), queue_.submitted()};
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
  EndpointRuntime& runtime = endpoint_runtime_.at(endpoint_id);
  for (auto& [pod_id, worker] : runtime.workers) {
    StopWorker(change, pod_id, worker, "its endpoint " + endpoint_id + " was deleted");
  }
  const core::TimePoint now = Now();
  for (const std::string& job_id : runtime.jobs) {
    Job& job = jobs_.at(job_id);
    if (!serverless::IsFinal(job.status)) (void)serverless::Cancel(job, now);
    waiters_.Wake(job_id);
    jobs_.erase(job_id);
    change.Dirty(Collection::kJobs, job_id);
  }
  runtime.jobs.clear();
  EndpointInfo info = InfoOf(**found);
  endpoints_.erase(endpoint_id);
  endpoint_runtime_.erase(endpoint_id);
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
  EndpointRuntime& runtime = endpoint_runtime_.at(endpoint.id);
  if (runtime.jobs.size() >= kMaxJobsPerEndpoint) {
    return core::ResourceExhaustedError(
        "endpoint " + endpoint.id + " holds " + std::to_string(runtime.jobs.size()) +
        " jobs, the most allowed; wait for them to finish or purge its queue");
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
  job.sequence = ++last_job_sequence_;
  job.execution_timeout = request.execution_timeout_s
                              ? std::chrono::seconds(*request.execution_timeout_s)
                              : endpoint.execution_timeout;
  job.ttl = request.ttl_s ? std::chrono::seconds(*request.ttl_s) : endpoint.job_ttl;
  Change change(*this);
  runtime.jobs.insert(job.id);
  Job& stored = jobs_[job.id] = std::move(job);
  Enqueue(change, stored);
  enqueued->no_worker = std::none_of(runtime.workers.begin(), runtime.workers.end(),
                                     [](const auto& entry) { return !entry.second.stopping; });
  return Written<Job>{stored, change.Commit()};
}

Result<Written<Job>> ControlPlane::GetJob(const Principal& caller, std::string_view endpoint_id,
                                          std::string_view job_id) const {
  SUANLI_RETURN_IF_ERROR(PersonOnly(caller));
  core::MutexLock lock(mutex_);
  // FindOwnJob is not const (it hands out a mutable pointer); the lookup here is the same.
  const auto endpoint = endpoints_.find(std::string(endpoint_id));
  if (endpoint == endpoints_.end() ||
      !access_.Allowed(caller, endpoint->second.owner_id, endpoint->second.project_id,
                       Access::kRead)) {
    return core::NotFoundError(NotFoundEndpoint(endpoint_id));
  }
  const auto job = jobs_.find(std::string(job_id));
  if (job == jobs_.end() || job->second.endpoint_id != endpoint->second.id) {
    return core::NotFoundError("endpoint " + std::string(endpoint_id) + " has no job " +
                               std::string(job_id) + " (a finished job is kept for its TTL)");
  }
  return Written<Job>{job->second, queue_.submitted()};
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
  EndpointRuntime& runtime = endpoint_runtime_.at(job.endpoint_id);
  Change change(*this);
  runtime.queue.erase({job.sequence, job.id});
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
  SUANLI_RETURN_IF_ERROR(serverless::Requeue(job, ++last_job_sequence_));
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
  EndpointRuntime& runtime = endpoint_runtime_.at((*found)->id);
  Change change(*this);
  const core::TimePoint now = Now();
  int removed = 0;
  for (const auto& [sequence, id] : runtime.queue) {
    Job& job = jobs_.at(id);
    (void)serverless::Cancel(job, now);
    job.error = "removed from the queue by purge-queue";
    JobChanged(change, job);
    ++removed;
  }
  runtime.queue.clear();
  return Written<int>{removed, change.Commit()};
}

void ControlPlane::WhenJobChanges(std::string_view job_id, core::TimePoint deadline,
                                  std::function<void()> notify) {
  Locked locked(*this);
  const std::string id(job_id);
  waiters_.Add(id, deadline, std::move(notify));
  const auto job = jobs_.find(id);
  if (job == jobs_.end() || serverless::IsFinal(job->second.status)) waiters_.Wake(id);
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
  const serverless::Endpoint& endpoint = endpoints_.at(std::string(endpoint_id));
  if (endpoint.worker_mode == serverless::WorkerMode::kHttp) {
    return core::FailedPreconditionError(
        "endpoint " + endpoint.id +
        " posts its jobs to its workers' port (worker_mode http); its workers take none");
  }
  EndpointRuntime& runtime = endpoint_runtime_.at(endpoint.id);
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
    Job& dropped = jobs_.at(worker.job_id);
    worker.job_id.clear();
    worker.idle_since = now;
    if (serverless::WorkerLost(dropped, endpoint.max_retries, "it asked for another job", now)) {
      ++runtime.retried;
      Enqueue(change, dropped);
    } else {
      JobChanged(change, dropped);
    }
  }
  if (runtime.queue.empty()) {
    return Written<std::optional<Job>>{std::nullopt, change.Commit()};
  }
  Job& job = jobs_.at(runtime.queue.begin()->second);
  runtime.queue.erase(runtime.queue.begin());
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
  const auto it = jobs_.find(std::string(job_id));
  if (it == jobs_.end() || it->second.endpoint_id != endpoint_id) {
    return core::NotFoundError("endpoint " + std::string(endpoint_id) + " has no job " +
                               std::string(job_id));
  }
  Job& job = it->second;
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
  const auto runtime = endpoint_runtime_.find(id);
  if (runtime == endpoint_runtime_.end() || !runtime->second.queue.empty()) waiters_.Wake(id);
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
    const auto found = jobs_.find(job_id);
    if (found == jobs_.end()) continue;
    Job& job = found->second;
    if (job.status == JobStatus::kInProgress && job.worker_id == pod_id) {
      if (serverless::WorkerLost(job, endpoint.max_retries, reason, Now())) {
        ++endpoint_runtime_.at(endpoint.id).retried;
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
    for (auto& [endpoint_id, endpoint] : endpoints_) {
      EndpointRuntime& runtime = endpoint_runtime_.at(endpoint_id);
      // Jobs: execution timeouts and TTLs of the unfinished ones, then the expired ones.
      for (auto it = runtime.unfinished.begin(); it != runtime.unfinished.end();) {
        Job& job = jobs_.at(*it);
        ++it;  // JobChanged moves a job that ends out of `unfinished`
        const JobStatus before = job.status;
        if (serverless::CheckTimeouts(job, now)) {
          runtime.queue.erase({job.sequence, job.id});
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
      while (!runtime.expiries.empty() && runtime.expiries.begin()->first <= now) {
        const std::string id = runtime.expiries.begin()->second;
        runtime.expiries.erase(runtime.expiries.begin());
        const auto job = jobs_.find(id);
        if (job == jobs_.end() || !serverless::Expired(job->second, now)) continue;
        change.Dirty(Collection::kJobs, id);
        runtime.streams.erase(id);
        runtime.jobs.erase(id);
        jobs_.erase(job);
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
      input.in_queue = static_cast<int>(runtime.queue.size());
      push_work |= endpoint.worker_mode == serverless::WorkerMode::kHttp && !runtime.queue.empty();
      if (!runtime.queue.empty()) {
        input.oldest_queued_at = jobs_.at(runtime.queue.begin()->second).created_at;
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
        worker.spec.env = WorkerEnv(endpoint, options_.worker_url, worker.token);
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
      EndpointRuntime& runtime = endpoint_runtime_.at(worker.endpoint_id);
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
