// VolumeMover: the receiving side of volume moves (volume_move.h) for the pods this node is to
// start: before a moved pod's container is created, each of its moves is fetched into the engine's
// volume in the background, its progress reported on the pod about once a second, and its end
// noted in the state database ("moved/<move id>"), so a move done before a restart is not fetched
// again.
//
// Threads: each pod's moves run as one background job of the agent's ("move:<pod id>",
// agent_context.h), so Stop waits for it (a fetch ends soon after the agent stops).
// Thread-safety: any thread; it keeps no state of its own besides the state database's.
#pragma once

#include "agent/agent_context.h"
#include "agent/status_reporter.h"
#include "core/domain.h"
#include "core/mutex.h"

namespace suanli::agent {

class VolumeMover {
 public:
  VolumeMover(AgentContext& context, StatusReporter& reporter)
      : context_(context), reporter_(reporter) {}
  VolumeMover(const VolumeMover&) = delete;
  VolumeMover& operator=(const VolumeMover&) = delete;

  // Whether every move of `pod` is in (the state database says so).
  bool MovesDone(const core::Pod& pod) const;
  // Starts fetching the pod's moves unless that runs already.
  void MoveFor(const core::Pod& pod) EXCLUDES(context_.mutex());

 private:
  // A pod's moves, on its job's thread.
  void Move(const core::Pod& pod) EXCLUDES(context_.mutex());

  AgentContext& context_;
  StatusReporter& reporter_;
};

}  // namespace suanli::agent
