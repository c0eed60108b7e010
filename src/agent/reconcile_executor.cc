#include "agent/reconcile_executor.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <system_error>
#include <utility>

#include "agent/container_spec.h"
#include "agent/ports.h"
#include "agent/relay.h"
#include "agent/ssh_keys.h"
#include "wire/agent_protocol.h"

namespace suanli::agent {
namespace {

using core::PodState;
using core::Result;
using core::Status;

// The lines of a stopped container's output read for its report (then cut to
// wire::kMaxReportedLogBytes): a bound on what the engine sends.
constexpr int kSavedLogLines = 2000;

}  // namespace

ReconcileExecutor::ReconcileExecutor(AgentContext& context, StatusReporter& reporter,
                                     ImagePuller& puller, VolumeMover& mover, DiskGuard& disk_guard,
                                     const GpuInventory& gpus, GpuAccess gpu_access)
    : context_(context),
      reporter_(reporter),
      puller_(puller),
      mover_(mover),
      disk_guard_(disk_guard),
      gpus_(gpus),
      gpu_access_(gpu_access) {}

void ReconcileExecutor::ReconcileOnce() {
  Engine& engine = context_.engine();
  // Each pass plans one step per pod; steps that need the engine's answer come next pass.
  for (int pass = 0; pass < 8 && !context_.Stopping(); ++pass) {
    Result<std::vector<ContainerInfo>> containers = engine.ListLabelled(kPodLabel);
    if (!containers.ok()) return context_.NoteEngine(containers.status());
    context_.NoteEngine(Status());
    // Only this node's containers: another agent may share the engine (a second installation,
    // tests in parallel), and its pods are not this agent's orphans.
    const std::string node = context_.node_id();
    if (node.empty()) return;
    std::erase_if(*containers, [&](const ContainerInfo& container) {
      const auto owner = container.labels.find(std::string(kNodeLabel));
      return owner == container.labels.end() || owner->second != node;
    });
    const std::vector<DesiredPod> desired = context_.Desired();
    const std::map<std::string, Reported> reported = reporter_.LastReported();
    // Keys changed while pods run (a member removed): rewritten into them (ssh_keys.h).
    FollowAuthorizedKeys(engine, desired, *containers, keys_written_,
                         [this](const std::string& line) { context_.Log(line); });
    const std::vector<Action> actions =
        Plan(desired, *containers, reported, context_.clock().Now());
    if (actions.empty()) return;
    std::map<std::string, const DesiredPod*> by_id;
    for (const DesiredPod& pod : desired) by_id[pod.pod.id] = &pod;
    for (const Action& action : actions) {
      const auto it = by_id.find(action.pod_id);
      Carry(action, it == by_id.end() ? nullptr : it->second);
    }
  }
}

void ReconcileExecutor::Fail(const std::string& pod_id, const std::string& message) {
  {
    PodReportFields report(pod_id, PodState::kFailed, context_.clock().Now());
    report.message = message;
    reporter_.Queue(report);
  }
}

void ReconcileExecutor::RunPreStop(const Action& action, const core::Pod& pod) {
  context_.Log("running the pre-stop command of " + action.pod_id);
  Result<ExecResult> done = context_.engine().Exec(
      action.container_id, {"sh", "-c", pod.pre_stop_command}, context_.options().pre_stop_timeout);
  if (!done.ok()) {
    context_.Log("the pre-stop command of " + action.pod_id +
                 " did not run: " + done.status().message());
    return;
  }
  std::string tail =
      done->output.substr(done->output.size() - std::min<size_t>(done->output.size(), 512));
  context_.Log("the pre-stop command of " + action.pod_id + " exited " +
               std::to_string(done->exit_code) + (tail.empty() ? "" : ": " + tail));
}

void ReconcileExecutor::Carry(const Action& action, const DesiredPod* pod) {
  using Kind = Action::Kind;
  Engine& engine = context_.engine();
  switch (action.kind) {
    case Kind::kCreate:
      if (pod != nullptr) CreatePod(*pod);
      return;
    case Kind::kStart:
      if (Status started = engine.Start(action.container_id); !started.ok()) {
        {
          PodReportFields report(action.pod_id, PodState::kFailed, context_.clock().Now());
          report.container_id = action.container_id;
          report.message = "the container would not start: " + started.message();
          reporter_.Queue(report);
        }
      }
      return;
    case Kind::kStop:
      if (pod != nullptr && !pod->pod.pre_stop_command.empty()) RunPreStop(action, pod->pod);
      context_.Log("stopping " + action.pod_id);
      if (Status stopped = engine.Stop(action.container_id, context_.options().stop_grace);
          !stopped.ok()) {
        context_.NoteEngine(stopped);
      }
      return;
    case Kind::kRemove:
      if (Status removed = engine.Remove(action.container_id);
          !removed.ok() && removed.code() != core::StatusCode::kNotFound) {
        context_.NoteEngine(removed);
        return;
      }
      PruneNetworks();
      return;
    case Kind::kRemoveVolume:
      if (Status removed = engine.RemoveVolume(VolumeName(action.pod_id));
          !removed.ok() && removed.code() != core::StatusCode::kNotFound) {
        context_.NoteEngine(removed);
      }
      return;
    case Kind::kReport: {
      // A pod without ports is ready as soon as it runs; the others once their ports answer.
      const bool ready =
          action.state == PodState::kRunning && pod != nullptr && pod->pod.ports.empty();
      std::string message = action.message;
      // Its exit was the disk guard's stop: say why.
      if (action.state == PodState::kExited) {
        if (std::optional<std::string> why = disk_guard_.TakeStopReason(action.container_id)) {
          message = std::move(*why);
        }
      }
      {
        PodReportFields report(action.pod_id, action.state, action.at);
        report.container_id = action.container_id;
        report.port_mappings = action.port_mappings;
        report.message = message;
        report.exit_code = action.exit_code;
        report.ready = ready;
        report.logs = LastLogs(action);
        reporter_.Queue(report);
      }
      if (action.state == PodState::kRunning) {
        context_.Log(action.pod_id + " is running (container " + action.container_id.substr(0, 12) +
                     ")");
      } else {
        context_.Log(action.pod_id + " is " + std::string(core::PodStateName(action.state)));
      }
      return;
    }
  }
}

// The container is removed next, and its logs with it, so the server keeps them (docs/agent.md).
std::optional<std::string> ReconcileExecutor::LastLogs(const Action& action) {
  if (!core::IsDown(action.state) || action.state == PodState::kTerminated ||
      action.container_id.empty()) {
    return std::nullopt;
  }
  LogOptions options;
  options.tail = kSavedLogLines;
  options.timestamps = true;
  Result<std::string> logs = context_.engine().Logs(action.container_id, options);
  if (!logs.ok()) {
    context_.Log("cannot keep the logs of " + action.pod_id + ": " + logs.status().message());
    return std::nullopt;
  }
  std::string text = NormalizeLogTimestamps(*logs);
  if (text.size() > wire::kMaxReportedLogBytes) {
    // The newest lines matter most; start at a whole line.
    const size_t cut = text.size() - wire::kMaxReportedLogBytes;
    const size_t line = text.find('\n', cut);
    text.erase(0, line == std::string::npos ? cut : line + 1);
  }
  return text;
}

// Owned by the pod's root (the remapped one when pods run remapped).
Status ReconcileExecutor::MakeSharedVolumes(const core::Pod& pod) const {
  const AgentOptions& options = context_.options();
  for (const core::VolumeMount& mount : pod.volumes) {
    if (!mount.shared) continue;
    if (options.shared_volume_dir.empty()) {
      return core::FailedPreconditionError(
          "volume " + mount.volume_id +
          " is on the shared backend, which this node lacks (start its agent with "
          "--shared-volumes PATH)");
    }
    const std::filesystem::path dir =
        SharedVolumeDirectory(options.shared_volume_dir.string(), mount.volume_id);
    std::error_code error;
    if (std::filesystem::create_directory(dir, error) && options.user_namespace == "remap") {
      if (::chown(dir.c_str(), kRemappedRootId, kRemappedRootId) != 0)
        error.assign(errno, std::generic_category());
    }
    if (error) {
      return core::UnavailableError("the shared backend's directory " + dir.string() +
                                    " could not be made: " + error.message());
    }
  }
  return Status::Ok();
}

void ReconcileExecutor::CreatePod(const DesiredPod& desired) {
  const AgentOptions& options = context_.options();
  Engine& engine = context_.engine();
  const core::Pod& pod = desired.pod;
  // Its data comes first when it is on another node (volume_move.h): the container starts once
  // every move is in.
  if (!mover_.MovesDone(pod)) return mover_.MoveFor(pod);
  if (Status shared = MakeSharedVolumes(pod); !shared.ok()) return Fail(pod.id, shared.message());
  // One per pod port. Once started (or given up), the engine holds them: the kernel will not
  // hand them out.
  std::vector<int> host_ports;
  struct ReleasePorts {
    ReconcileExecutor& executor;
    const std::vector<int>& ports;
    ~ReleasePorts() { executor.ReleaseHostPorts(ports); }
  } release{*this, host_ports};
  Status ports_found;
  {
    core::MutexLock lock(context_.mutex());
    while (host_ports.size() < pod.ports.size()) {
      Result<int> host_port = FreeHostPort(options.publish_address, ports_handed_out_);
      if (!host_port.ok()) {
        ports_found = host_port.status();
        break;
      }
      ports_handed_out_.insert(*host_port);
      host_ports.push_back(*host_port);
    }
  }
  if (!ports_found.ok()) return Fail(pod.id, ports_found.message());
  const ContainerSpec spec =
      BuildContainerSpec(desired, host_ports,
                         {context_.node_id(), options.publish_address, gpus_.gpus, gpu_access_,
                          options.pids_limit, options.pod_network == "owner",
                          options.user_namespace == "remap", options.shared_volume_dir.string()});
  if (!spec.network.empty()) {
    if (Status made = engine.CreateIsolatedNetwork(spec.network,
                                                   {{std::string(kNetworkLabel), pod.owner_id}});
        !made.ok()) {
      if (made.code() == core::StatusCode::kUnavailable) return context_.NoteEngine(made);
      return Fail(pod.id, "the pod's network could not be created: " + made.message());
    }
    core::MutexLock lock(context_.mutex());
    networks_made_.insert(spec.network);
  }
  const std::string keys = AuthorizedKeys(desired);
  Result<std::string> created = engine.Create(spec);
  if (!created.ok()) {
    if (created.status().code() == core::StatusCode::kAlreadyExists) return;  // next pass sees it
    // Its network was removed between the two calls (by another program sharing the engine):
    // the next pass makes it again.
    if (created.status().code() == core::StatusCode::kFailedPrecondition && !spec.network.empty() &&
        created.status().message().starts_with("network ")) {
      return;
    }
    // Create first, pull only when the engine lacks the image: the common case (the image is
    // there) then costs one round trip less on every start.
    if (created.status().code() == core::StatusCode::kNotFound) return puller_.PullFor(pod);
    if (created.status().code() == core::StatusCode::kUnavailable) {
      return context_.NoteEngine(created.status());
    }
    return Fail(pod.id, "the container could not be created: " + created.status().message());
  }
  Status put;
  if (!keys.empty() && !spec.volume_name.empty()) {
    // For images that read keys from the volume rather than from PUBLIC_KEY; rewritten while it
    // runs when they change, or when this failed (ReconcileOnce). PUBLIC_KEY stays either way.
    put = PutAuthorizedKeys(engine, *created, spec.volume_mount_path, keys);
    if (!put.ok()) {
      context_.Log("could not write authorized_keys into " + pod.id + ": " + put.message());
    }
  }
  if (Status host_key = PutHostKey(engine, *created, pod); !host_key.ok()) {
    // Its SSH server then makes a key of its own, which `pods ssh` will refuse: said, not fatal.
    context_.Log("could not write the SSH host key into " + pod.id + ": " + host_key.message());
  }
  keys_written_.erase(pod.id);  // what did not go in, FollowAuthorizedKeys writes again
  if (put.ok()) keys_written_[pod.id] = keys;
  if (Status started = engine.Start(*created); !started.ok()) {
    (void)engine.Remove(*created);
    // Another program bound a host port after it was picked: the next pass picks others.
    if (started.message().find("address already in use") != std::string::npos) {
      context_.Log("a host port of " + pod.id + " was taken before the start; trying other ports");
      return;
    }
    // Its network went between the create and the start (removed by another program sharing
    // the engine, a test's cleanup): the next pass makes both again.
    if (!spec.network.empty() && started.message().find("network") != std::string::npos &&
        started.message().find("not found") != std::string::npos) {
      context_.Log("the network of " + pod.id + " went before its start; trying again");
      return;
    }
    {
      PodReportFields report(pod.id, PodState::kFailed, context_.clock().Now());
      report.container_id = *created;
      report.message = "the container would not start: " + started.message();
      reporter_.Queue(report);
    }
    return;
  }
  context_.Log("started " + pod.id + " (" + pod.image + ") as container " + created->substr(0, 12));
}

// Only its own networks: another agent sharing the engine may be about to use one. On the
// reconcile thread, as CreatePod, so never between a network's creation and its first use.
// Networks made before a restart are left (at most one per owner; `suanli agent` on the same
// engine again reuses them). A host which served many owners so does not run out of the engine's
// subnets.
void ReconcileExecutor::PruneNetworks() {
  std::set<std::string> made;
  {
    core::MutexLock lock(context_.mutex());
    made = networks_made_;
  }
  for (const std::string& network : made) {
    Status removed = context_.engine().RemoveNetwork(network);
    if (removed.code() == core::StatusCode::kFailedPrecondition) continue;  // in use
    if (!removed.ok() && removed.code() != core::StatusCode::kNotFound) {
      return context_.Log("cannot remove network " + network + ": " + removed.message());
    }
    if (removed.ok()) context_.Log("removed network " + network + ": no pod of its owner is here");
    core::MutexLock lock(context_.mutex());
    networks_made_.erase(network);
  }
}

void ReconcileExecutor::ReleaseHostPorts(const std::vector<int>& ports) {
  core::MutexLock lock(context_.mutex());
  for (int port : ports) ports_handed_out_.erase(port);
}

}  // namespace suanli::agent
