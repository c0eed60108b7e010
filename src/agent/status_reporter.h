// StatusReporter: the agent's reports on its pods, through the durable outbox (state_db.h).
//
// Every manager that has something to tell the server about a pod (a state, a pull's or a move's
// progress, readiness) queues it here; the report is in the state database (fsync'd) before
// Queue returns, and only then does the agent remember having made it (Reported, which the
// reconcile plan reads, and which running pods still wait for their ports: the readiness
// prober's work). Send drains the outbox in order through a sender that the server session gives
// (HTTP in production, a function in tests): a report the server refuses for good is dropped, one
// it could not take now stays queued, so nothing is lost.
//
// Thread-safety: any thread; its fields are GUARDED_BY the agent's mutex (agent_context.h).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "agent/agent_context.h"
#include "agent/reconcile.h"
#include "agent/state_db.h"
#include "core/clock.h"
#include "core/domain.h"
#include "core/mutex.h"
#include "wire/agent_protocol.h"

namespace suanli::agent {

// One report, as Queue takes it (wire::PodReport without its seq, which the outbox gives): the
// pod, its state and when, then what applies.
struct PodReportFields {
  PodReportFields(std::string pod, core::PodState pod_state, core::TimePoint time)
      : pod_id(std::move(pod)), state(pod_state), at(time) {}

  std::string pod_id;
  core::PodState state;
  core::TimePoint at;
  std::string container_id;
  std::vector<core::PortMapping> port_mappings;
  std::string message;
  std::optional<int> exit_code;
  bool ready = false;
  std::optional<core::PullProgress> pull;
  std::optional<std::string> logs;
  std::optional<wire::MoveProgress> move;
};

// A running pod whose ports have not all answered yet.
struct UnreadyPod {
  std::string container_id;
  std::vector<core::PortMapping> ports;
};

// How the server took one report (the sender's answer): kSent (acknowledged, or refused for
// good: dropped), or kRetry (not taken now: the server is unreachable or busy).
enum class ReportOutcome { kSent, kRetry };

class StatusReporter {
 public:
  explicit StatusReporter(AgentContext& context) : context_(context) {}
  StatusReporter(const StatusReporter&) = delete;
  StatusReporter& operator=(const StatusReporter&) = delete;

  // Queues the report durably and notes it (Reported, unready pods). A report the outbox cannot
  // take is logged and not noted, so the next reconcile pass makes it again.
  void Queue(const PodReportFields& report) EXCLUDES(context_.mutex());

  // What was last reported per pod (kStarting progress left out), for the reconcile plan.
  std::map<std::string, Reported> LastReported() const EXCLUDES(context_.mutex());
  // Running pods reported not ready yet, by pod id.
  std::map<std::string, UnreadyPod> Unready() const EXCLUDES(context_.mutex());
  bool AnyUnready() const EXCLUDES(context_.mutex());

  // Sends up to `limit` queued reports in order through `send`, stopping at the first kRetry.
  // Returns how many went (acknowledged or dropped); -1 when one must be retried (back off).
  int Send(const std::function<ReportOutcome(const PendingReport&)>& send, size_t limit = 32);
  // Waits until something is queued, the agent stops, or `timeout`.
  void WaitForReports(std::chrono::milliseconds timeout) EXCLUDES(context_.mutex());

 private:
  void QueueLocked(const PodReportFields& report) REQUIRES(context_.mutex());

  AgentContext& context_;
  core::CondVar queued_wake_;  // the outbox has something
  bool reports_queued_ GUARDED_BY(context_.mutex()) = false;
  std::map<std::string, Reported> reported_ GUARDED_BY(context_.mutex());
  std::map<std::string, UnreadyPod> unready_ GUARDED_BY(context_.mutex());
};

}  // namespace suanli::agent
