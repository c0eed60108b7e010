#include "serverless/job.h"

#include <algorithm>
#include <array>
#include <utility>

namespace suanli::serverless {
namespace {

constexpr std::array<std::string_view, 6> kStatusNames = {"IN_QUEUE", "IN_PROGRESS", "COMPLETED",
                                                          "FAILED",   "CANCELLED",   "TIMED_OUT"};

int64_t Millis(core::Duration duration) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(duration).count();
}

void End(Job& job, JobStatus status, std::string error, core::TimePoint now) {
  job.status = status;
  job.error = std::move(error);
  job.finished_at = now;
}

}  // namespace

std::string_view JobStatusName(JobStatus status) {
  return kStatusNames.at(static_cast<size_t>(status));
}

std::optional<JobStatus> ParseJobStatus(std::string_view name) {
  for (size_t i = 0; i < kStatusNames.size(); ++i) {
    if (kStatusNames[i] == name) return static_cast<JobStatus>(i);
  }
  return std::nullopt;
}

bool IsFinal(JobStatus status) {
  return status != JobStatus::kInQueue && status != JobStatus::kInProgress;
}

int64_t DelayMillis(const Job& job, core::TimePoint now) {
  return Millis(job.started_at.value_or(now) - job.created_at);
}

int64_t ExecutionMillis(const Job& job, core::TimePoint now) {
  if (!job.started_at) return 0;
  return Millis(job.finished_at.value_or(now) - *job.started_at);
}

core::Status Start(Job& job, std::string worker_id, core::TimePoint now) {
  if (job.status != JobStatus::kInQueue) {
    return core::FailedPreconditionError("job " + job.id + " is " +
                                         std::string(JobStatusName(job.status)) + ", not queued");
  }
  job.status = JobStatus::kInProgress;
  job.worker_id = std::move(worker_id);
  job.started_at = now;
  return core::Status::Ok();
}

core::Status Finish(Job& job, std::string_view worker_id, std::string output, std::string error,
                    core::TimePoint now) {
  if (job.status != JobStatus::kInProgress || job.worker_id != worker_id) {
    return core::FailedPreconditionError(
        "job " + job.id + " is not running on worker " + std::string(worker_id) + " (it is " +
        std::string(JobStatusName(job.status)) + "): its result is not taken");
  }
  job.output = std::move(output);
  const JobStatus status = error.empty() ? JobStatus::kCompleted : JobStatus::kFailed;
  End(job, status, std::move(error), now);
  return core::Status::Ok();
}

core::Status Cancel(Job& job, core::TimePoint now) {
  if (IsFinal(job.status)) {
    return core::FailedPreconditionError("job " + job.id + " is already " +
                                         std::string(JobStatusName(job.status)));
  }
  End(job, JobStatus::kCancelled, "cancelled by its owner", now);
  return core::Status::Ok();
}

core::Status Requeue(Job& job, uint64_t sequence) {
  if (job.status != JobStatus::kFailed && job.status != JobStatus::kTimedOut &&
      job.status != JobStatus::kCancelled) {
    return core::FailedPreconditionError(
        "job " + job.id + " is " + std::string(JobStatusName(job.status)) +
        ": only a FAILED, TIMED_OUT or CANCELLED job can be retried");
  }
  job.status = JobStatus::kInQueue;
  job.output.clear();
  job.error.clear();
  job.worker_id.clear();
  job.started_at.reset();
  job.finished_at.reset();
  job.sequence = sequence;
  return core::Status::Ok();
}

bool WorkerLost(Job& job, int max_retries, std::string_view reason, core::TimePoint now) {
  if (job.retries < max_retries) {
    ++job.retries;
    job.status = JobStatus::kInQueue;
    job.started_at.reset();
    return true;
  }
  End(job, JobStatus::kFailed,
      "its worker " + job.worker_id + " was lost (" + std::string(reason) + ") " +
          std::to_string(job.retries + 1) + " times; giving up",
      now);
  return false;
}

bool CheckTimeouts(Job& job, core::TimePoint now) {
  if (IsFinal(job.status)) return false;
  if (job.status == JobStatus::kInProgress && job.started_at &&
      now - *job.started_at >= job.execution_timeout) {
    End(job, JobStatus::kTimedOut,
        "ran longer than the endpoint's execution timeout of " +
            std::to_string(job.execution_timeout.count()) + " s",
        now);
    return true;
  }
  if (now - job.created_at >= job.ttl) {
    End(job, JobStatus::kTimedOut,
        "not finished within its TTL of " + std::to_string(job.ttl.count()) + " s", now);
    return true;
  }
  return false;
}

core::TimePoint ExpiresAt(const Job& job) {
  const core::TimePoint finished = job.finished_at.value_or(job.created_at);
  return std::max(job.created_at + job.ttl, finished + kMinResultRetention);
}

bool Expired(const Job& job, core::TimePoint now) {
  return IsFinal(job.status) && now - job.created_at >= job.ttl && job.finished_at &&
         now - *job.finished_at >= kMinResultRetention;
}

}  // namespace suanli::serverless
