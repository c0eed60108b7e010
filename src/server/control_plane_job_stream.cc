// The control plane: partial outputs of jobs (RunPod's streaming handlers, whose worker library
// posts each yielded value), kept until /v2/{endpoint}/stream/{job} reads them. Memory only: a
// partial output is a progress report, and the final output, which is stored, stays the result.
#include <numeric>

#include "server/control_plane.h"
#include "server/control_plane_internal.h"

namespace suanli::server {

using serverless::Job;
using serverless::JobStatus;

Result<Written<Job>> ControlPlane::StreamJobOutput(std::string_view endpoint_id,
                                                   std::string_view worker_id,
                                                   std::string_view token, std::string_view job_id,
                                                   std::string output) {
  Locked locked(*this);
  Result<WorkerRuntime*> found = FindWorker(endpoint_id, worker_id, token);
  if (!found.ok()) return found.status();
  const auto it = jobs_.find(std::string(job_id));
  if (it == jobs_.end() || it->second.endpoint_id != endpoint_id) {
    return core::NotFoundError("endpoint " + std::string(endpoint_id) + " has no job " +
                               std::string(job_id));
  }
  const Job& job = it->second;
  if (job.status != JobStatus::kInProgress || job.worker_id != worker_id) {
    return core::FailedPreconditionError(
        "job " + job.id + " is not running on worker " + std::string(worker_id) + " (it is " +
        std::string(serverless::JobStatusName(job.status)) + "): its output is not taken");
  }
  std::vector<std::string>& chunks = endpoint_runtime_.at(job.endpoint_id).streams[job.id];
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
  // A client waiting on the job's status learns of it (runsync does not: it waits for the end).
  return Written<Job>{job, queue_.submitted()};
}

Result<Written<ControlPlane::StreamRead>> ControlPlane::ReadJobStream(const Principal& caller,
                                                                      std::string_view endpoint_id,
                                                                      std::string_view job_id) {
  SUANLI_RETURN_IF_ERROR(PersonOnly(caller));
  Locked locked(*this);
  Result<Job*> found = FindOwnJob(caller, endpoint_id, job_id, Access::kRead);
  if (!found.ok()) return found.status();
  StreamRead read;
  read.job = **found;
  EndpointRuntime& runtime = endpoint_runtime_.at(read.job.endpoint_id);
  const auto stream = runtime.streams.find(read.job.id);
  if (stream != runtime.streams.end()) {
    read.streamed = true;
    read.chunks = std::exchange(stream->second, {});
  }
  return Written<StreamRead>{std::move(read), queue_.submitted()};
}

}  // namespace suanli::server
