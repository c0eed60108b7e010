// Job: one request to a serverless endpoint, and the rules of its life.
//
// IN_QUEUE -> IN_PROGRESS (a worker took it) -> COMPLETED or FAILED (the worker's answer) or
// TIMED_OUT (it ran past the endpoint's execution timeout). A queued or running job may be
// CANCELLED. A job whose worker died is queued again, at most `max_retries` times, then FAILED with
// the reason. A job left unfinished at the end of its TTL is TIMED_OUT; a finished one is removed
// then (Expired). The names and the fields mirror RunPod's job API (`delayTime`, `executionTime`
// in milliseconds). Pure: the control plane stores jobs and calls these on requests and ticks.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/clock.h"
#include "core/status.h"

namespace suanli::serverless {

enum class JobStatus { kInQueue, kInProgress, kCompleted, kFailed, kCancelled, kTimedOut };
inline constexpr JobStatus kJobStatuses[] = {JobStatus::kInQueue,   JobStatus::kInProgress,
                                             JobStatus::kCompleted, JobStatus::kFailed,
                                             JobStatus::kCancelled, JobStatus::kTimedOut};
// "IN_QUEUE", "IN_PROGRESS", "COMPLETED", "FAILED", "CANCELLED", "TIMED_OUT".
std::string_view JobStatusName(JobStatus status);
std::optional<JobStatus> ParseJobStatus(std::string_view name);
// COMPLETED, FAILED, CANCELLED, TIMED_OUT: nothing happens to it any more but its removal.
bool IsFinal(JobStatus status);

// A finished job's result is kept at least this long after it finished, even past its TTL, so
// that a client polling for it can read it.
inline constexpr std::chrono::seconds kMinResultRetention{60};

struct Job {
  std::string id;  // "job_..."
  std::string endpoint_id;
  std::string owner_id;
  JobStatus status = JobStatus::kInQueue;
  std::string input;      // JSON text of the request's "input"
  std::string output;     // JSON text of the worker's "output"; empty when it sent none
  std::string error;      // why it FAILED, TIMED_OUT or was CANCELLED
  std::string webhook;    // URL told of the result; empty for none
  std::string worker_id;  // the worker (pod) running it, or that last ran it
  int retries = 0;        // times re-queued after its worker died
  uint64_t sequence = 0;  // queue order: lower first
  core::TimePoint created_at;
  std::optional<core::TimePoint> started_at;   // taken by a worker (the last time)
  std::optional<core::TimePoint> finished_at;  // reached a final status
  std::chrono::seconds execution_timeout{600};
  std::chrono::seconds ttl{24 * 3'600};

  friend bool operator==(const Job&, const Job&) = default;
};

// Milliseconds from creation to its (last) start, or to `now` while it waits: RunPod's delayTime.
int64_t DelayMillis(const Job& job, core::TimePoint now);
// Milliseconds from its start to its end, or to `now` while it runs; 0 before it started.
int64_t ExecutionMillis(const Job& job, core::TimePoint now);

// IN_QUEUE -> IN_PROGRESS on `worker_id`. FAILED_PRECONDITION from any other status.
core::Status Start(Job& job, std::string worker_id, core::TimePoint now);
// The worker's answer: COMPLETED with `output` (JSON text, may be empty), or FAILED when `error` is
// not empty (RunPod keeps both). FAILED_PRECONDITION when the job is not IN_PROGRESS on
// `worker_id` (it was cancelled, timed out, or re-queued and given to another worker).
core::Status Finish(Job& job, std::string_view worker_id, std::string output, std::string error,
                    core::TimePoint now);
// A queued or running job -> CANCELLED. FAILED_PRECONDITION for a finished one.
core::Status Cancel(Job& job, core::TimePoint now);
// A finished FAILED, TIMED_OUT or CANCELLED job -> IN_QUEUE again, its output and error cleared
// (RunPod's /retry). FAILED_PRECONDITION for any other.
core::Status Requeue(Job& job, uint64_t sequence);

// Its worker died or was lost while it ran: back IN_QUEUE (with `sequence`, normally its own, so
// it keeps its place) if it has retries left, else FAILED with `reason`. Returns true when
// re-queued. REQUIRES: job.status == kInProgress.
bool WorkerLost(Job& job, int max_retries, std::string_view reason, core::TimePoint now);

// Checks the clock: an IN_PROGRESS job past its execution timeout, or an unfinished one at the end
// of its TTL, becomes TIMED_OUT. Returns true when it changed.
bool CheckTimeouts(Job& job, core::TimePoint now);
// A finished job whose TTL has passed (and that finished at least kMinResultRetention ago): to be
// removed.
bool Expired(const Job& job, core::TimePoint now);
// When a finished job expires: the first `now` for which Expired holds. REQUIRES: IsFinal.
core::TimePoint ExpiresAt(const Job& job);

}  // namespace suanli::serverless
