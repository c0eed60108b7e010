// The control plane: partial outputs of jobs (RunPod's streaming handlers, whose worker library
// posts each yielded value), kept until /v2/{endpoint}/stream/{job} reads them. Memory only: a
// partial output is a progress report, and the final output, which is stored, stays the result.
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
  const Job* found_job = serverless_.FindJobOf(endpoint_id, job_id);
  if (found_job == nullptr) {
    return core::NotFoundError("endpoint " + std::string(endpoint_id) + " has no job " +
                               std::string(job_id));
  }
  const Job& job = *found_job;
  if (job.status != JobStatus::kInProgress || job.worker_id != worker_id) {
    return core::FailedPreconditionError(
        "job " + job.id + " is not running on worker " + std::string(worker_id) + " (it is " +
        std::string(serverless::JobStatusName(job.status)) + "): its output is not taken");
  }
  SUANLI_RETURN_IF_ERROR(serverless_.AppendStream(job, std::move(output)));
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
  if (std::optional<std::vector<std::string>> chunks = serverless_.TakeStream(read.job)) {
    read.streamed = true;
    read.chunks = std::move(*chunks);
  }
  return Written<StreamRead>{std::move(read), queue_.submitted()};
}

}  // namespace suanli::server
