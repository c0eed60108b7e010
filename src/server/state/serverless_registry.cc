#include "server/state/serverless_registry.h"

#include <algorithm>
#include <numeric>

namespace suanli::server {

using serverless::Job;
using serverless::JobStatus;

namespace {

size_t StatusIndex(JobStatus status) { return static_cast<size_t>(status); }

}  // namespace

bool EndpointRuntime::HasLiveWorker() const {
  return std::any_of(workers.begin(), workers.end(),
                     [](const auto& entry) { return !entry.second.stopping; });
}

// --- Endpoints -----------------------------------------------------------------------------------

serverless::Endpoint* ServerlessRegistry::FindEndpoint(const std::string& id) {
  const auto it = endpoints_.find(id);
  return it == endpoints_.end() ? nullptr : &it->second;
}

const serverless::Endpoint* ServerlessRegistry::FindEndpoint(const std::string& id) const {
  const auto it = endpoints_.find(id);
  return it == endpoints_.end() ? nullptr : &it->second;
}

serverless::Endpoint& ServerlessRegistry::AddEndpoint(serverless::Endpoint endpoint) {
  const std::string id = endpoint.id;
  runtime_[id];
  by_endpoint_[id];
  return endpoints_.insert_or_assign(id, std::move(endpoint)).first->second;
}

std::vector<std::string> ServerlessRegistry::RemoveEndpoint(const std::string& id) {
  // Every job is unfinished or waits for its expiry: the two indexes hold the endpoint's jobs.
  std::vector<std::string> removed;
  if (const auto index = by_endpoint_.find(id); index != by_endpoint_.end()) {
    removed.assign(index->second.unfinished.begin(), index->second.unfinished.end());
    for (const auto& [at, job_id] : index->second.expiries) removed.push_back(job_id);
  }
  for (const std::string& job_id : removed) RemoveJob(job_id);
  endpoints_.erase(id);
  runtime_.erase(id);
  by_endpoint_.erase(id);
  return removed;
}

size_t ServerlessRegistry::OwnedBy(const std::string& owner_id) const {
  return static_cast<size_t>(
      std::count_if(endpoints_.begin(), endpoints_.end(),
                    [&](const auto& entry) { return entry.second.owner_id == owner_id; }));
}

// --- Jobs ----------------------------------------------------------------------------------------

Job* ServerlessRegistry::FindJob(const std::string& id) {
  const auto it = jobs_.find(id);
  return it == jobs_.end() ? nullptr : &it->second;
}

Job* ServerlessRegistry::FindJobOf(std::string_view endpoint_id, std::string_view job_id) {
  const auto it = jobs_.find(std::string(job_id));
  return it == jobs_.end() || it->second.endpoint_id != endpoint_id ? nullptr : &it->second;
}

const Job* ServerlessRegistry::FindJobOf(std::string_view endpoint_id,
                                         std::string_view job_id) const {
  const auto it = jobs_.find(std::string(job_id));
  return it == jobs_.end() || it->second.endpoint_id != endpoint_id ? nullptr : &it->second;
}

Job& ServerlessRegistry::AddJob(Job job) {
  const std::string id = job.id;
  last_sequence_ = std::max(last_sequence_, job.sequence);
  jobs_.insert_or_assign(id, std::move(job));
  Reindex(id);
  return jobs_.at(id);
}

void ServerlessRegistry::Reindex(const std::string& id) {
  const auto job = jobs_.find(id);
  if (job == jobs_.end()) return;
  const Keys now = KeysOf(job->second);
  const auto [indexed, added] = keys_.try_emplace(id, now);
  if (!added) {
    if (indexed->second == now) return;  // most writes (an output, a worker) move nothing
    Unindex(id, indexed->second);
    indexed->second = now;
  }
  Index(id, now);
}

void ServerlessRegistry::RemoveJob(const std::string& id) {
  const auto keys = keys_.find(id);
  if (keys != keys_.end()) {
    Unindex(id, keys->second);
    const auto runtime = runtime_.find(keys->second.endpoint);
    if (runtime != runtime_.end()) runtime->second.streams.erase(id);
    keys_.erase(keys);
  }
  jobs_.erase(id);
}

ServerlessRegistry::Keys ServerlessRegistry::KeysOf(const Job& job) {
  Keys keys;
  keys.endpoint = job.endpoint_id;
  keys.owner = job.owner_id;
  keys.status = job.status;
  keys.sequence = job.sequence;
  if (serverless::IsFinal(job.status)) {
    keys.expires_at = serverless::ExpiresAt(job);
  } else {
    keys.waiting_bytes = job.input.size();
  }
  return keys;
}

void ServerlessRegistry::Index(const std::string& id, const Keys& keys) {
  EndpointIndex& index = by_endpoint_[keys.endpoint];
  ++index.counts[StatusIndex(keys.status)];
  if (keys.status == JobStatus::kInQueue) index.queue.emplace(keys.sequence, id);
  if (serverless::IsFinal(keys.status)) {
    index.expiries.emplace(keys.expires_at, id);
  } else {
    index.unfinished.insert(id);
    if (keys.waiting_bytes > 0) waiting_bytes_[keys.owner] += keys.waiting_bytes;
  }
}

void ServerlessRegistry::Unindex(const std::string& id, const Keys& keys) {
  const auto found = by_endpoint_.find(keys.endpoint);
  if (found != by_endpoint_.end()) {
    EndpointIndex& index = found->second;
    --index.counts[StatusIndex(keys.status)];
    index.queue.erase({keys.sequence, id});
    index.expiries.erase({keys.expires_at, id});
    index.unfinished.erase(id);
  }
  if (keys.waiting_bytes > 0) {
    const auto bytes = waiting_bytes_.find(keys.owner);
    if (bytes != waiting_bytes_.end()) {
      bytes->second -= keys.waiting_bytes;
      if (bytes->second == 0) waiting_bytes_.erase(bytes);
    }
  }
}

// --- Indexes -------------------------------------------------------------------------------------

const ServerlessRegistry::Queue& ServerlessRegistry::QueueOf(const std::string& endpoint_id) const {
  static const Queue kNone;
  const auto index = by_endpoint_.find(endpoint_id);
  return index == by_endpoint_.end() ? kNone : index->second.queue;
}

const ServerlessRegistry::Ids& ServerlessRegistry::UnfinishedOf(
    const std::string& endpoint_id) const {
  static const Ids kNone;
  const auto index = by_endpoint_.find(endpoint_id);
  return index == by_endpoint_.end() ? kNone : index->second.unfinished;
}

const ServerlessRegistry::Expiries& ServerlessRegistry::ExpiriesOf(
    const std::string& endpoint_id) const {
  static const Expiries kNone;
  const auto index = by_endpoint_.find(endpoint_id);
  return index == by_endpoint_.end() ? kNone : index->second.expiries;
}

ServerlessRegistry::StatusCounts ServerlessRegistry::CountsOf(
    const std::string& endpoint_id) const {
  const auto index = by_endpoint_.find(endpoint_id);
  return index == by_endpoint_.end() ? StatusCounts{} : index->second.counts;
}

int64_t ServerlessRegistry::JobCount(const std::string& endpoint_id) const {
  const StatusCounts counts = CountsOf(endpoint_id);
  return std::accumulate(counts.begin(), counts.end(), int64_t{0});
}

size_t ServerlessRegistry::WaitingInputBytes(const std::string& owner_id) const {
  const auto bytes = waiting_bytes_.find(owner_id);
  return bytes == waiting_bytes_.end() ? 0 : bytes->second;
}

// --- Workers and streams -------------------------------------------------------------------------

core::Result<WorkerRuntime*> ServerlessRegistry::FindWorker(std::string_view endpoint_id,
                                                            std::string_view worker_id,
                                                            std::string_view token_hash) {
  const auto runtime = runtime_.find(std::string(endpoint_id));
  if (runtime != runtime_.end() && !token_hash.empty()) {
    const auto worker = runtime->second.workers.find(std::string(worker_id));
    if (worker != runtime->second.workers.end() && worker->second.token_hash == token_hash) {
      if (worker->second.stopping) {
        return core::NotFoundError("worker " + std::string(worker_id) + " is being stopped");
      }
      return &worker->second;
    }
  }
  return core::UnauthenticatedError("not a worker of endpoint " + std::string(endpoint_id) +
                                    " with this token");
}

core::Status ServerlessRegistry::AppendStream(const Job& job, std::string output) {
  std::vector<std::string>& chunks = runtime_.at(job.endpoint_id).streams[job.id];
  const size_t unread =
      std::accumulate(chunks.begin(), chunks.end(), size_t{0},
                      [](size_t sum, const std::string& chunk) { return sum + chunk.size(); });
  if (chunks.size() >= kMaxUnreadStreamChunks || unread + output.size() > kMaxUnreadStreamBytes) {
    return core::ResourceExhaustedError(
        "job " + job.id + " has " + std::to_string(chunks.size()) +
        " partial outputs that its client has not read (/stream); at most " +
        std::to_string(kMaxUnreadStreamChunks) + " or " +
        std::to_string(kMaxUnreadStreamBytes >> 20) + " MiB wait");
  }
  chunks.push_back(std::move(output));
  return core::Status::Ok();
}

std::optional<std::vector<std::string>> ServerlessRegistry::TakeStream(const Job& job) {
  EndpointRuntime& runtime = runtime_.at(job.endpoint_id);
  const auto stream = runtime.streams.find(job.id);
  if (stream == runtime.streams.end()) return std::nullopt;
  return std::exchange(stream->second, {});
}

// --- Loading -------------------------------------------------------------------------------------

void ServerlessRegistry::LoadJobs(std::vector<Job> jobs, core::TimePoint now) {
  for (Job& job : jobs) {
    last_sequence_ = std::max(last_sequence_, job.sequence);
    const serverless::Endpoint* endpoint = FindEndpoint(job.endpoint_id);
    if (endpoint == nullptr) continue;
    EndpointRuntime& runtime = runtime_.at(job.endpoint_id);
    if (job.status == JobStatus::kInProgress &&
        endpoint->worker_mode == serverless::WorkerMode::kHttp) {
      // Its request to the worker ended with the server: queued again (in memory; the store
      // learns it with the job's next change, and a restart before that does this again).
      (void)serverless::WorkerLost(job, endpoint->max_retries,
                                   "the server restarted while the job was posted to it", now);
    } else if (job.status == JobStatus::kInProgress) {
      // A job whose worker is not known any more gets a worker entry that is already lost: the
      // next tick finds it (its worker is not live) and queues the job again.
      const auto [worker, added] = runtime.workers.try_emplace(job.worker_id);
      if (added) worker->second.stopping = true;
      worker->second.job_id = job.id;
    }
    AddJob(std::move(job));
  }
}

core::Status ServerlessRegistry::CheckIndexes() const {
  ServerlessRegistry rebuilt;
  for (const auto& [id, endpoint] : endpoints_) rebuilt.by_endpoint_[id];
  for (const auto& [id, job] : jobs_) rebuilt.Index(id, KeysOf(job));
  for (const auto& [id, job] : jobs_) {
    const auto keys = keys_.find(id);
    if (keys == keys_.end() || !(keys->second == KeysOf(job))) {
      return core::InternalError("job " + id + " is not indexed as its fields say (" +
                                 std::string(serverless::JobStatusName(job.status)) +
                                 "): a write without Reindex");
    }
  }
  if (keys_.size() != jobs_.size()) {
    return core::InternalError(std::to_string(keys_.size()) + " jobs indexed, " +
                               std::to_string(jobs_.size()) + " kept");
  }
  for (const auto& [endpoint_id, index] : by_endpoint_) {
    const auto expected = rebuilt.by_endpoint_.find(endpoint_id);
    const EndpointIndex none;
    const EndpointIndex& want = expected == rebuilt.by_endpoint_.end() ? none : expected->second;
    if (index.queue != want.queue || index.unfinished != want.unfinished ||
        index.expiries != want.expiries || index.counts != want.counts) {
      return core::InternalError("endpoint " + endpoint_id +
                                 "'s job indexes differ from its jobs' fields");
    }
  }
  if (waiting_bytes_ != rebuilt.waiting_bytes_) {
    return core::InternalError("the owners' waiting input bytes differ from their jobs'");
  }
  return core::Status::Ok();
}

}  // namespace suanli::server
