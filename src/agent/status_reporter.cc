#include "agent/status_reporter.h"

#include <utility>

namespace suanli::agent {

void StatusReporter::Queue(const PodReportFields& report) {
  core::MutexLock lock(context_.mutex());
  QueueLocked(report);
}

void StatusReporter::QueueLocked(const PodReportFields& fields) {
  core::Result<PendingReport> queued = context_.state().Enqueue(fields.pod_id, [&](int64_t seq) {
    wire::PodReport report;
    report.seq = seq;
    report.state = fields.state;
    report.at = fields.at;
    report.container_id = fields.container_id;
    report.port_mappings = fields.port_mappings;
    report.message = fields.message;
    report.exit_code = fields.exit_code;
    if (fields.ready) report.ready = true;
    report.pull = fields.pull;
    report.logs = fields.logs;
    report.move = fields.move;
    return wire::EncodePodReport(report);
  });
  if (!queued.ok()) {
    // The report is not durable, so the agent must not believe it was made: the next pass tries
    // again.
    context_.Log("cannot queue a report on " + fields.pod_id + ": " + queued.status().message());
    return;
  }
  int64_t generation = 0;
  for (const DesiredPod& pod : context_.DesiredLocked()) {
    if (pod.pod.id == fields.pod_id) generation = pod.pod.generation;
  }
  if (fields.state != core::PodState::kStarting) {
    reported_[fields.pod_id] = {fields.state, fields.container_id, generation};
  }
  if (fields.state == core::PodState::kRunning && !fields.ready) {
    unready_[fields.pod_id] = {fields.container_id, fields.port_mappings};
  } else {
    unready_.erase(fields.pod_id);
  }
  reports_queued_ = true;
  queued_wake_.NotifyAll();
}

std::map<std::string, Reported> StatusReporter::LastReported() const {
  core::MutexLock lock(context_.mutex());
  return reported_;
}

bool StatusReporter::AnyUnready() const {
  core::MutexLock lock(context_.mutex());
  return !unready_.empty();
}

std::map<std::string, UnreadyPod> StatusReporter::Unready() const {
  core::MutexLock lock(context_.mutex());
  return unready_;
}

int StatusReporter::Send(const std::function<ReportOutcome(const PendingReport&)>& send,
                         size_t limit) {
  core::Result<std::vector<PendingReport>> pending = context_.state().Pending(limit);
  if (!pending.ok()) return 0;
  int sent = 0;
  for (const PendingReport& report : *pending) {
    if (send(report) == ReportOutcome::kRetry) return -1;
    (void)context_.state().Acknowledge(report.id);
    ++sent;
  }
  return sent;
}

void StatusReporter::WaitForReports(std::chrono::milliseconds timeout) {
  core::MutexLock lock(context_.mutex());
  queued_wake_.WaitFor(context_.mutex(), timeout, [this]() REQUIRES(context_.mutex()) {
    return context_.StoppingLocked() || reports_queued_;
  });
  reports_queued_ = false;
}

}  // namespace suanli::agent
