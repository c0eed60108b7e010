// ServerlessRegistry: the serverless endpoints, their jobs and workers, and every index of the
// jobs behind one upsert.
//
// The control plane reads a job by id, an endpoint's queue in order, the unfinished jobs whose
// timeouts the tick checks, the finished ones by when they expire, the count of each endpoint's
// jobs by status (its info and /metrics) and the bytes of input each owner has waiting (a bound:
// queued jobs live in memory). Each index is a function of the job's fields (Keys), so none is
// kept by hand: after any write to a job, Reindex(id) moves its entries to where the job now
// belongs. The control plane calls it from Change::Dirty, as it does for pods (PodRegistry), so a
// job written is a job both stored and indexed; CheckIndexes (the tests') finds one that is not.
//
// What is not a function of stored fields is each endpoint's runtime: its workers (pods it owns,
// with their tokens and idle times), the partial outputs streamed and not yet read, and counters.
//
// Thread-compatible: the control plane's mutex is held around every call. No I/O.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/clock.h"
#include "core/status.h"
#include "serverless/endpoint.h"
#include "serverless/job.h"

namespace suanli::server {

// The most partial outputs of one job kept unread for /stream, in number and in bytes.
inline constexpr size_t kMaxUnreadStreamChunks = 10'000;
inline constexpr size_t kMaxUnreadStreamBytes = size_t{16} << 20;

struct WorkerRuntime {
  std::string token_hash;        // SHA-256 hex of the worker's token
  std::string job_id;            // the job it pulled and runs; empty when idle
  std::set<std::string> pushed;  // worker_mode http: the jobs posted to it, not yet answered
  // worker_mode http: its answers of 500 and above in a row (or failures to reach it); it is
  // posted nothing before `push_after` (1 s, doubling, at most 30 s), so that a worker whose
  // server is down does not spend a job's retries in a moment.
  int push_failures = 0;
  core::TimePoint push_after;
  bool seen_running = false;   // its pod has run: idle_since counts from then
  bool stopping = false;       // asked to stop (scaled down, timed out, lost): no longer live
  core::TimePoint idle_since;  // its last job ended, or it started running

  bool busy() const { return !job_id.empty() || !pushed.empty(); }
  int in_progress() const { return static_cast<int>(pushed.size()) + (job_id.empty() ? 0 : 1); }
};

struct EndpointRuntime {
  std::map<std::string, WorkerRuntime> workers;  // by pod id
  // Partial outputs a worker posted for a job (RunPod's streaming handlers), not yet read by
  // /stream; a job is here once its worker streamed. Memory only: lost when the server restarts.
  std::map<std::string, std::vector<std::string>> streams;
  int64_t retried = 0;      // jobs re-queued after a worker was lost, since the server started
  std::string scale_error;  // why the last worker could not be started; empty once one was

  // Whether any worker is live (not asked to stop).
  bool HasLiveWorker() const;
};

class ServerlessRegistry {
 public:
  using Ids = std::set<std::string>;
  using Queue = std::set<std::pair<uint64_t, std::string>>;  // (sequence, job id), oldest first
  using Expiries = std::set<std::pair<core::TimePoint, std::string>>;
  using StatusCounts = std::array<int64_t, 6>;  // by serverless::JobStatus

  // --- Endpoints ---
  const std::map<std::string, serverless::Endpoint>& endpoints() const { return endpoints_; }
  serverless::Endpoint* FindEndpoint(const std::string& id);
  const serverless::Endpoint* FindEndpoint(const std::string& id) const;
  serverless::Endpoint& AddEndpoint(serverless::Endpoint endpoint);
  // Removes the endpoint with its jobs and runtime; returns the ids of the jobs it had.
  std::vector<std::string> RemoveEndpoint(const std::string& id);
  // REQUIRES: the endpoint exists.
  EndpointRuntime& RuntimeOf(const std::string& endpoint_id) { return runtime_.at(endpoint_id); }
  const EndpointRuntime& RuntimeOf(const std::string& endpoint_id) const {
    return runtime_.at(endpoint_id);
  }
  size_t OwnedBy(const std::string& owner_id) const;

  // --- Jobs ---
  const std::map<std::string, serverless::Job>& jobs() const { return jobs_; }
  serverless::Job* FindJob(const std::string& id);
  // The job when it is `endpoint_id`'s, else nullptr.
  serverless::Job* FindJobOf(std::string_view endpoint_id, std::string_view job_id);
  const serverless::Job* FindJobOf(std::string_view endpoint_id, std::string_view job_id) const;
  // The sequence a job queued now takes: after every one given out or loaded.
  uint64_t NextSequence() { return ++last_sequence_; }
  // Adds a job of a known endpoint, indexed; returns it as stored.
  serverless::Job& AddJob(serverless::Job job);
  // The one upsert: moves `id`'s index entries to where the job belongs now.
  void Reindex(const std::string& id);
  // Forgets a job (its TTL passed); its stream goes with it.
  void RemoveJob(const std::string& id);

  // --- Indexes: each empty where nothing matches ---
  const Queue& QueueOf(const std::string& endpoint_id) const;
  const Ids& UnfinishedOf(const std::string& endpoint_id) const;
  const Expiries& ExpiriesOf(const std::string& endpoint_id) const;
  int64_t JobCount(const std::string& endpoint_id) const;
  StatusCounts CountsOf(const std::string& endpoint_id) const;
  // Bytes of input of `owner_id`'s unfinished jobs, on all their endpoints.
  size_t WaitingInputBytes(const std::string& owner_id) const;

  // --- Workers and their streams ---
  // The live worker `worker_id` of the endpoint whose token hashes to `token_hash`: NOT_FOUND
  // when it is being stopped, UNAUTHENTICATED when the endpoint has no such worker or the token
  // is not its own.
  core::Result<WorkerRuntime*> FindWorker(std::string_view endpoint_id, std::string_view worker_id,
                                          std::string_view token_hash);
  // Keeps a partial output of `job` for /stream: RESOURCE_EXHAUSTED when kMaxUnreadStreamChunks
  // or kMaxUnreadStreamBytes wait unread already.
  core::Status AppendStream(const serverless::Job& job, std::string output);
  // What was streamed for `job` since the last read (which this takes); nullopt when its worker
  // never streamed.
  std::optional<std::vector<std::string>> TakeStream(const serverless::Job& job);

  // --- Loading ---
  // The stored jobs, after the endpoints and their workers: each in its queue or on its worker.
  // A job of an http-mode endpoint that was IN_PROGRESS is queued again (its request to the
  // worker ended with the server), and one whose worker is not known any more is given a worker
  // entry that is already lost, so that the first tick queues it again. Jobs of an endpoint
  // that is gone (never written so, but a store edited by hand) are dropped.
  void LoadJobs(std::vector<serverless::Job> jobs, core::TimePoint now);

  // Whether every index is what the jobs' fields make it: for tests; a description of the first
  // difference else. Walks everything.
  core::Status CheckIndexes() const;

 private:
  // Where one job belongs in each index.
  struct Keys {
    std::string endpoint;
    std::string owner;
    serverless::JobStatus status = serverless::JobStatus::kInQueue;
    uint64_t sequence = 0;
    core::TimePoint expires_at;  // final jobs only
    size_t waiting_bytes = 0;    // unfinished jobs only

    bool operator==(const Keys&) const = default;
  };
  struct EndpointIndex {
    Queue queue;
    Ids unfinished;
    Expiries expiries;
    StatusCounts counts{};
  };
  static Keys KeysOf(const serverless::Job& job);
  void Unindex(const std::string& id, const Keys& keys);
  void Index(const std::string& id, const Keys& keys);

  std::map<std::string, serverless::Endpoint> endpoints_;
  std::map<std::string, EndpointRuntime> runtime_;
  std::map<std::string, serverless::Job> jobs_;
  std::unordered_map<std::string, Keys> keys_;  // where each job is indexed now
  std::map<std::string, EndpointIndex> by_endpoint_;
  std::unordered_map<std::string, size_t> waiting_bytes_;  // by owner
  uint64_t last_sequence_ = 0;
};

}  // namespace suanli::server
