// DiskGuard: holds each running pod of this node to the disk sizes it asked for (disk_quota.h):
// measures its container's writable layer and its volume's files, and stops a pod past a size,
// keeping the reason, which the reconcile executor tells as the message of the pod's exit.
//
// Threads: Check runs on a thread of the agent's (agent.cc), every disk_check_interval: a walk of
// a large volume takes seconds, which must not hold up reconciling or heartbeats.
// Thread-safety: any thread; stops_ is GUARDED_BY the agent's mutex (agent_context.h).
#pragma once

#include <map>
#include <optional>
#include <string>

#include "agent/agent_context.h"
#include "core/mutex.h"

namespace suanli::agent {

class DiskGuard {
 public:
  explicit DiskGuard(AgentContext& context) : context_(context) {}
  DiskGuard(const DiskGuard&) = delete;
  DiskGuard& operator=(const DiskGuard&) = delete;

  // Measures every running pod of this node once; stops those past a size (and pokes the
  // reconcile loop, which reports their exits now rather than at its next pass).
  void Check() EXCLUDES(context_.mutex());
  // Why the container was stopped here, once (the reason is forgotten as it is taken); nullopt for
  // a container this guard did not stop.
  std::optional<std::string> TakeStopReason(const std::string& container_id)
      EXCLUDES(context_.mutex());

 private:
  AgentContext& context_;
  // Containers stopped for writing past a size, by container id: the reason their exit is told.
  std::map<std::string, std::string> stops_ GUARDED_BY(context_.mutex());
};

}  // namespace suanli::agent
