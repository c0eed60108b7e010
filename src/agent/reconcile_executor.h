// ReconcileExecutor: carries out the reconcile plan (reconcile.h) on the engine, the thin side of
// ninja's Plan vs CommandRunner. Each pass lists this node's containers, plans, and acts: creates a
// pod's container (its volume moves and image pull first, each in the background: volume_mover.h,
// image_puller.h), starts, stops (the pod's pre-stop command first), removes containers, volumes
// and the owners' networks no container uses any more, and queues the plan's reports with the
// container's last logs when it went down (status_reporter.h). A step that needs the engine's
// answer comes at the next pass; an engine that does not answer is noted and waited out.
//
// Threads: the reconcile thread of the agent's (agent.cc) alone calls ReconcileOnce.
// Thread-safety: ReconcileOnce on one thread at a time; networks_made_ and ports_handed_out_ are
// GUARDED_BY the agent's mutex (agent_context.h), keys_written_ is the reconcile thread's alone.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "agent/agent_context.h"
#include "agent/disk_guard.h"
#include "agent/gpus.h"
#include "agent/image_puller.h"
#include "agent/reconcile.h"
#include "agent/status_reporter.h"
#include "agent/volume_mover.h"
#include "core/domain.h"
#include "core/mutex.h"
#include "core/status.h"

namespace suanli::agent {

class ReconcileExecutor {
 public:
  // Borrows every argument. `gpus` are the host's, `gpu_access` how the engine hands them over.
  ReconcileExecutor(AgentContext& context, StatusReporter& reporter, ImagePuller& puller,
                    VolumeMover& mover, DiskGuard& disk_guard, const GpuInventory& gpus,
                    GpuAccess gpu_access);
  ReconcileExecutor(const ReconcileExecutor&) = delete;
  ReconcileExecutor& operator=(const ReconcileExecutor&) = delete;

  // Plans and acts until the plan is empty (at most 8 passes), the engine fails, or the agent
  // stops. Does nothing before the node is registered.
  void ReconcileOnce() EXCLUDES(context_.mutex());

 private:
  void Carry(const Action& action, const DesiredPod* pod) EXCLUDES(context_.mutex());
  void CreatePod(const DesiredPod& desired) EXCLUDES(context_.mutex());
  // The pod's pre-stop command (sh -c, in its container), before the container is stopped; the
  // stop goes ahead whatever it does, after at most options().pre_stop_timeout.
  void RunPreStop(const Action& action, const core::Pod& pod);
  // The end of a container's output when it has stopped, exited or failed, for the report.
  std::optional<std::string> LastLogs(const Action& action);
  // Each of the pod's volumes on the shared backend gets its directory there on first use.
  core::Status MakeSharedVolumes(const core::Pod& pod) const;
  // Removes the owners' networks this agent made that no container is on any more.
  void PruneNetworks() EXCLUDES(context_.mutex());
  void ReleaseHostPorts(const std::vector<int>& ports) EXCLUDES(context_.mutex());
  void Fail(const std::string& pod_id, const std::string& message) EXCLUDES(context_.mutex());

  AgentContext& context_;
  StatusReporter& reporter_;
  ImagePuller& puller_;
  VolumeMover& mover_;
  DiskGuard& disk_guard_;
  const GpuInventory& gpus_;
  const GpuAccess gpu_access_;
  std::set<std::string> networks_made_ GUARDED_BY(context_.mutex());  // PruneNetworks
  // Host ports picked for pods being created, until the engine holds them.
  std::set<int> ports_handed_out_ GUARDED_BY(context_.mutex());
  std::map<std::string, std::string> keys_written_;  // by pod, into its container (ssh_keys.h)
};

}  // namespace suanli::agent
