// ReadinessProber: reports `ready` for each running pod whose published ports all answer
// (readiness_probe.h), so that `pods create --wait` ends. Which pods wait is the status
// reporter's record (a running pod reported without ready); a pod without ports is ready as soon
// as it runs and never waits here.
//
// Threads: Probe runs on the reconcile thread after each pass (every 200 ms while a pod waits).
// Thread-safety: any thread; it keeps no state of its own.
#pragma once

#include <functional>
#include <string>

#include "agent/agent_context.h"
#include "agent/status_reporter.h"
#include "core/domain.h"

namespace suanli::agent {

class ReadinessProber {
 public:
  // Whether the port answers on the address (PortAnswers in production).
  using PortCheck = std::function<bool(const std::string& address, const core::PortMapping& port)>;

  // `check` replaces PortAnswers in tests; empty: PortAnswers.
  ReadinessProber(AgentContext& context, StatusReporter& reporter, PortCheck check = {});
  ReadinessProber(const ReadinessProber&) = delete;
  ReadinessProber& operator=(const ReadinessProber&) = delete;

  // Probes every pod that waits once, and reports those whose ports all answer as ready.
  void Probe();

 private:
  AgentContext& context_;
  StatusReporter& reporter_;
  const PortCheck check_;
};

}  // namespace suanli::agent
