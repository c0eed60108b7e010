// The control plane: nodes and join tokens (an admin's), and the agents' side of the protocol.
#include "server/control_plane.h"
#include "server/control_plane_internal.h"
#include "server/secrets.h"

namespace suanli::server {

// --- Nodes ---------------------------------------------------------------------------------------

Result<Written<std::pair<core::JoinToken, std::string>>> ControlPlane::CreateJoinToken(
    const Principal& caller, std::string note) {
  SUANLI_RETURN_IF_ERROR(AdminOnly(caller));
  Locked locked(*this);
  auto [token, secret] = credentials_.IssueJoinToken(NewId("join"), std::move(note), Now(),
                                                     options_.join_token_lifetime);
  Change change(*this);
  change.Dirty(Collection::kJoinTokens, token.id);
  return Written<std::pair<core::JoinToken, std::string>>{{std::move(token), secret},
                                                          change.Commit()};
}

Result<Written<std::vector<core::JoinToken>>> ControlPlane::ListJoinTokens(
    const Principal& caller) const {
  SUANLI_RETURN_IF_ERROR(AdminOnly(caller));
  core::MutexLock lock(mutex_);
  std::vector<core::JoinToken> tokens;
  for (const auto& entry : credentials_.join_tokens()) tokens.push_back(entry.second);
  return Written<std::vector<core::JoinToken>>{std::move(tokens), queue_.submitted()};
}

Result<Written<core::JoinToken>> ControlPlane::DeleteJoinToken(const Principal& caller,
                                                               std::string_view id) {
  SUANLI_RETURN_IF_ERROR(AdminOnly(caller));
  Locked locked(*this);
  std::optional<core::JoinToken> token = credentials_.RemoveJoinToken(id);
  if (!token) return core::NotFoundError("no join token " + std::string(id));
  Change change(*this);
  change.Dirty(Collection::kJoinTokens, token->id);
  return Written<core::JoinToken>{std::move(*token), change.Commit()};
}

Result<Written<std::vector<core::Node>>> ControlPlane::ListNodes(const Principal& caller) const {
  SUANLI_RETURN_IF_ERROR(AdminOnly(caller));
  core::MutexLock lock(mutex_);
  std::vector<core::Node> nodes;
  for (const auto& entry : nodes_) nodes.push_back(entry.second);
  return Written<std::vector<core::Node>>{std::move(nodes), queue_.submitted()};
}

Result<Written<core::Node>> ControlPlane::GetNode(const Principal& caller,
                                                  std::string_view id) const {
  SUANLI_RETURN_IF_ERROR(AdminOnly(caller));
  core::MutexLock lock(mutex_);
  const auto it = nodes_.find(std::string(id));
  if (it == nodes_.end()) return core::NotFoundError("no node " + std::string(id));
  return Written<core::Node>{it->second, queue_.submitted()};
}

Result<Principal> ControlPlane::AuthenticatePodLink(std::string_view pod_id,
                                                    std::string_view link) const {
  core::MutexLock lock(mutex_);
  const auto pod = pods_.find(std::string(pod_id));
  // Hashes compared, so the time taken says nothing about how much of the token was right.
  if (link.empty() || pod == pods_.end() || pod->second.link_token.empty() ||
      Sha256Hex(link) != Sha256Hex(pod->second.link_token)) {
    return core::UnauthenticatedError(
        "this pod link is wrong, or the pod is gone; copy the link again from the pod's page, or "
        "send an API token");
  }
  // The owner, as a plain user: the link opens this pod's ports and nothing else.
  return Principal{pod->second.owner_id, core::Role::kUser, "", ""};
}

std::string ControlPlane::NodeAddress(std::string_view node_id) const {
  core::MutexLock lock(mutex_);
  const auto node = nodes_.find(std::string(node_id));
  return node == nodes_.end() ? "" : node->second.address;
}

Result<Written<core::Node>> ControlPlane::ActOnNode(const Principal& caller, std::string_view id,
                                                    NodeAction action) {
  SUANLI_RETURN_IF_ERROR(AdminOnly(caller));
  Locked locked(*this);
  const auto it = nodes_.find(std::string(id));
  if (it == nodes_.end()) return core::NotFoundError("no node " + std::string(id));
  core::Node& node = it->second;
  Change change(*this);
  switch (action) {
    case NodeAction::kCordon:
      node.cordoned = true;
      break;
    case NodeAction::kUncordon:
      node.cordoned = false;
      node.draining = false;
      node.drain_reason.clear();
      capacity_changed_ = true;
      break;
    case NodeAction::kDrain:
      Drain(change, node, "stopped: node " + node.name + " is being drained");
      break;
  }
  change.Dirty(Collection::kNodes, node.id);
  return Written<core::Node>{node, change.Commit()};
}

void ControlPlane::Drain(Change& change, core::Node& node, const std::string& reason) {
  node.cordoned = true;
  node.draining = true;
  change.Emit(NodeEvent(node, "node.drained",
                        node.drain_reason.empty() ? "drained" : "drained: " + node.drain_reason));
  const std::set<std::string> bound = pods_.OnNode(node.id);
  for (const std::string& pod_id : bound) {
    core::Pod& pod = pods_.at(pod_id);
    if (pod.desired != core::DesiredState::kRunning) continue;
    SetDesired(change, pod, core::DesiredState::kStopped, reason);
    NotifyPod(change, pod, "pod.node_drained", reason);
  }
}

Result<Written<core::Node>> ControlPlane::DeleteNode(const Principal& caller, std::string_view id) {
  SUANLI_RETURN_IF_ERROR(AdminOnly(caller));
  Locked locked(*this);
  const auto it = nodes_.find(std::string(id));
  if (it == nodes_.end()) return core::NotFoundError("no node " + std::string(id));
  const std::set<std::string> bound = pods_.OnNode(it->second.id);
  const core::TimePoint now = Now();
  const bool lost = it->second.state == core::NodeState::kUnreachable &&
                    now - it->second.last_heartbeat >= options_.lost_node_grace;
  if (!bound.empty() && !lost) {
    const auto minutes =
        std::chrono::duration_cast<std::chrono::minutes>(options_.lost_node_grace).count();
    return core::FailedPreconditionError(
        "node " + it->second.name + " still has " + std::to_string(bound.size()) +
        " pod(s); drain it first (suanli nodes drain), or, if it is gone for good, remove it once "
        "it has been unreachable for " +
        std::to_string(minutes) + " minutes: its pods are then lost, billed to its last heartbeat");
  }
  core::Node node = it->second;
  Change change(*this);
  // A node that never came back: its pods are lost with it. Each is billed to the node's last
  // heartbeat (the last sign it ran), its unfinished moves leave the data at their source, and its
  // own volume, which was on the node, is gone.
  for (const std::string& pod_id : bound) {
    core::Pod& pod = pods_.at(pod_id);
    const core::TimePoint end =
        pod.running_since ? std::max(node.last_heartbeat, *pod.running_since) : now;
    Unbind(change, pod);
    pod.desired = core::DesiredState::kTerminated;
    SetState(change, pod, PodState::kTerminated, end,
             "lost: its node " + node.name + " was removed after no heartbeat since " +
                 FormatTime(node.last_heartbeat) + "; billed to then");
    NotifyPod(change, pod, "pod.lost", pod.state_reason);
  }
  credentials_.RemoveNode(node.token_hash);
  nodes_.erase(it);
  // Pods whose volume only this node could delete: with the node gone, so is the volume.
  for (const std::string& pod_id : std::set<std::string>(pods_.LeavingNode(node.id))) {
    SetState(change, pods_.at(pod_id), PodState::kTerminated, Now(),
             "terminated; its node " + node.name + " was removed");
  }
  LoseSnapshotsOn(change, node);
  change.Dirty(Collection::kNodes, node.id);
  return Written<core::Node>{std::move(node), change.Commit()};
}

Result<Written<std::vector<Availability>>> ControlPlane::GpuAvailability(
    const Principal& caller) const {
  SUANLI_RETURN_IF_ERROR(PersonOnly(caller));
  core::MutexLock lock(mutex_);
  std::map<std::string, Availability> by_type;
  std::map<std::string, std::vector<core::GpuMeasurement>> measured_by_type;
  for (const sched::Node& view : SchedulerNodes()) {
    if (view.gpu_type.empty()) continue;
    Availability& entry = by_type[view.gpu_type];
    entry.gpu_type = view.gpu_type;
    entry.price_per_hour = PriceLocked(view.gpu_type);
    const core::Node& node = nodes_.at(view.id);
    entry.simulated = entry.simulated || node.gpus.front().simulated;
    std::ranges::copy(node.gpu_measurements, std::back_inserter(measured_by_type[view.gpu_type]));
    if (!view.schedulable) continue;
    // Free GPUs count only where a pod with the default vCPU and RAM could have them.
    const int free = sched::UsableFreeGpus(view);
    // MIG slices count as the GPUs they are part of.
    const int gpus =
        static_cast<int>((view.GpuMilliCapacity() + core::kMilliGpu / 2) / core::kMilliGpu);
    entry.total += gpus;
    entry.free += free;
    entry.stranded += view.FreeGpus() - free;
    entry.largest_free_on_one_node = std::max(entry.largest_free_on_one_node, free);
    entry.largest_on_one_node = std::max(entry.largest_on_one_node, gpus);
    const int share_cap = sched::LargestShareCovered(view.free);
    for (int left : view.gpu_free_milli) {
      if (left == core::kMilliGpu || left <= 0) continue;
      entry.shared_free_milli += std::min(left, share_cap);
      entry.largest_share_free_milli =
          std::max(entry.largest_share_free_milli, std::min(left, share_cap));
    }
  }
  std::vector<Availability> out;
  for (auto& [type, entry] : by_type) {
    entry.measured = advisor::SummariseMeasurements(measured_by_type[type]);
    out.push_back(std::move(entry));
  }
  return Written<std::vector<Availability>>{std::move(out), queue_.submitted()};
}

// --- The agent's side ----------------------------------------------------------------------------

Status ControlPlane::CheckNodeReport(NodeReport& report) const {
  SUANLI_RETURN_IF_ERROR(CheckName("node name", report.name));
  if (report.vcpu < 0 || report.memory_gb < 0 || report.disk_gb < 0) {
    return core::InvalidArgumentError("vcpu, memory_gb and disk_gb cannot be negative");
  }
  if (report.gpus.size() > 64) return core::InvalidArgumentError("a node has at most 64 GPUs");
  const bool address_ok =
      report.address.size() <= 253 &&
      std::all_of(report.address.begin(), report.address.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == ':';
      });
  if (!address_ok) {
    return core::InvalidArgumentError("address: '" + report.address +
                                      "' is not a host name or an IP address");
  }
  for (const auto& [key, value] : report.labels) {
    auto label_text = [](std::string_view text, size_t most) {
      return !text.empty() && text.size() <= most && std::ranges::all_of(text, [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_' ||
               c == '/';
      });
    };
    if (!label_text(key, 128) || !label_text(value, 128)) {
      return core::InvalidArgumentError("labels: '" + key + "=" + value +
                                        "' is not a label; keys and values are 1 to 128 letters, "
                                        "digits, '.', '-', '_' or '/'");
    }
  }
  std::set<int> indices;
  for (core::GpuDevice& gpu : report.gpus) {
    Result<catalog::GpuMatch> type = catalog_.Find(gpu.type);
    if (!type.ok()) return type.status().WithContext("gpus");
    gpu.type = type->gpu->name;
    if (gpu.type != report.gpus.front().type) {
      return core::InvalidArgumentError("a node's GPUs must all be of one type; found " +
                                        report.gpus.front().type + " and " + gpu.type);
    }
    if (gpu.index < 0 || gpu.index >= 64 || !indices.insert(gpu.index).second) {
      return core::InvalidArgumentError("gpus: indices must be distinct, from 0 to 63");
    }
  }
  std::set<int> measured;
  for (const core::GpuMeasurement& gpu : report.gpu_measurements) {
    if (!indices.contains(gpu.index) || !measured.insert(gpu.index).second) {
      return core::InvalidArgumentError(
          "gpu_measurements: index " + std::to_string(gpu.index) +
          " is not one of the node's GPUs, or is measured twice; each entry is one GPU of gpus");
    }
  }
  return Status::Ok();
}

Status ControlPlane::CheckJoinToken(std::string_view join_secret) const {
  core::MutexLock lock(mutex_);
  return credentials_.CheckJoinToken(join_secret, Now());
}

Result<Written<std::pair<core::Node, std::string>>> ControlPlane::RegisterNode(
    std::string_view join_secret, NodeReport report) {
  Locked locked(*this);
  SUANLI_RETURN_IF_ERROR(credentials_.CheckJoinToken(join_secret, Now()));
  SUANLI_RETURN_IF_ERROR(CheckNodeReport(report));
  const core::TimePoint now = Now();
  for (const auto& [id, node] : nodes_) {
    if (node.name == report.name) {
      return core::AlreadyExistsError("a node named '" + report.name +
                                      "' is registered; remove it first (suanli nodes rm " + id +
                                      ") or start the agent with its saved credentials");
    }
  }
  core::Node node;
  node.id = NewId("node");
  std::string secret;
  std::tie(secret, node.token_hash) = credentials_.IssueNodeSecret(node.id);
  node.name = report.name;
  node.labels = std::move(report.labels);
  node.gpus = std::move(report.gpus);
  node.vcpu = report.vcpu;
  node.memory_gb = report.memory_gb;
  node.disk_gb = report.disk_gb;
  node.agent_version = report.agent_version;
  node.address = report.address;
  node.gpu_health = std::move(report.gpu_health);
  node.gpu_measurements = std::move(report.gpu_measurements);
  node.registered_at = now;
  node.last_heartbeat = now;
  nodes_[node.id] = node;
  capacity_changed_ = true;
  Change change(*this);
  change.Dirty(Collection::kNodes, node.id);
  return Written<std::pair<core::Node, std::string>>{{std::move(node), secret}, change.Commit()};
}

Result<Written<core::Node>> ControlPlane::Heartbeat(const Principal& caller, NodeReport report) {
  if (caller.node_id.empty()) return core::PermissionDeniedError("only a node's agent may do this");
  Locked locked(*this);
  const auto it = nodes_.find(caller.node_id);
  if (it == nodes_.end()) return core::NotFoundError("this node was removed; register it again");
  report.name = it->second.name;  // the name never changes after registration
  SUANLI_RETURN_IF_ERROR(CheckNodeReport(report));
  core::Node& node = it->second;
  Change change(*this);
  node.last_heartbeat = Now();
  // Readings change with every heartbeat: kept in memory, never a write of their own.
  node.gpu_health = std::move(report.gpu_health);
  node.gpu_measurements = std::move(report.gpu_measurements);
  NoteActivity(node, report.pod_activity);
  bool changed = node.state != core::NodeState::kReady;
  node.state = core::NodeState::kReady;
  auto same_gpus = [](const core::GpuDevice& a, const core::GpuDevice& b) {
    return a.index == b.index && a.uuid == b.uuid && a.type == b.type &&
           a.simulated == b.simulated && a.link_group == b.link_group &&
           a.capacity_milli == b.capacity_milli && a.mig_profile == b.mig_profile;
  };
  if (!std::equal(node.gpus.begin(), node.gpus.end(), report.gpus.begin(), report.gpus.end(),
                  same_gpus) ||
      node.vcpu != report.vcpu || node.memory_gb != report.memory_gb ||
      node.disk_gb != report.disk_gb || node.agent_version != report.agent_version ||
      node.address != report.address || node.labels != report.labels) {
    // Fewer GPUs than registered means a GPU failed or fell off the bus (XID 79): its pods may be
    // running on hardware that is gone, so the node takes no pods and its pods stop until an
    // admin has looked (and uncordons it). More GPUs are simply capacity.
    if (report.gpus.size() < node.gpus.size() && !node.draining) {
      node.drain_reason = "the agent found " + std::to_string(report.gpus.size()) +
                          " GPU(s) of the " + std::to_string(node.gpus.size()) + " it had";
      Drain(change, node, "stopped: node " + node.name + " lost GPUs (" + node.drain_reason + ")");
    }
    node.gpus = std::move(report.gpus);
    node.vcpu = report.vcpu;
    node.memory_gb = report.memory_gb;
    node.disk_gb = report.disk_gb;
    node.agent_version = report.agent_version;
    node.address = report.address;
    node.labels = std::move(report.labels);  // the agent's --label and --shared-volumes
    changed = true;
  }
  if (changed) {
    change.Dirty(Collection::kNodes, node.id);
    capacity_changed_ = true;
  }
  return Written<core::Node>{node, change.Commit()};
}

Result<Written<core::Pod>> ControlPlane::ReportPod(const Principal& caller, std::string_view pod_id,
                                                   const PodReport& report) {
  if (caller.node_id.empty()) return core::PermissionDeniedError("only a node's agent may do this");
  Locked locked(*this);
  const auto it = pods_.find(std::string(pod_id));
  if (it == pods_.end() ||
      (it->second.node_id != caller.node_id && it->second.last_node_id != caller.node_id)) {
    return core::PermissionDeniedError("pod " + std::string(pod_id) + " is not on this node");
  }
  core::Pod& pod = it->second;
  Change change(*this);
  if (report.seq <= pod.report_seq || pod.state == PodState::kTerminated) {
    return Written<core::Pod>{pod, change.Commit()};  // a repeat: already applied
  }
  pod.report_seq = report.seq;
  change.Dirty(Collection::kPods, pod.id);
  const core::TimePoint now = Now();
  const core::TimePoint at = std::clamp(core::TruncateToMillis(report.at), pod.state_since, now);
  if (!report.container_id.empty()) pod.container_id = report.container_id;
  if (!report.port_mappings.empty()) pod.port_mappings = report.port_mappings;
  const PodState to = report.state;
  // A stopped, exited or failed container's last output, readable once it is gone.
  if (report.logs && IsDown(to)) {
    pod.last_logs = report.logs->substr(report.logs->size() -
                                        std::min(report.logs->size(), wire::kMaxReportedLogBytes));
  }
  if (report.move && to == PodState::kStarting) {
    NoteMove(change, pod, *report.move, caller.node_id);  // its progress shown as a pull's
  } else {
    pod.pull = to == PodState::kStarting ? report.pull : std::nullopt;
  }
  if (to == pod.state) {
    if (!report.message.empty()) pod.state_reason = report.message;
    if (report.ready && to == PodState::kRunning) pod.ready = *report.ready;
    return Written<core::Pod>{pod, change.Commit()};
  }
  std::string reason = report.message;
  if (to == PodState::kExited && reason.empty()) {
    reason = "the container exited" +
             (report.exit_code ? " with code " + std::to_string(*report.exit_code) : "");
  }
  if (reason.empty() && to == PodState::kRunning) reason = "running on " + NodeName(pod.node_id);
  if (reason.empty() && pod.desired != core::DesiredState::kRunning) reason = pod.state_reason;
  if (reason.empty()) reason = "reported by its node";
  if ((to == PodState::kFailed || to == PodState::kExited) && pod.volume_gb > 0 &&
      pod.desired != core::DesiredState::kTerminated) {
    // Its data is kept, and so is paid for: a pod that failed at its first pull would otherwise
    // bill its volume, unseen, until someone looked (issue 34, item 13).
    const Money per_month = Money::FromMicros(pod.storage_price_per_gb_month.micros() *
                                              static_cast<int64_t>(pod.volume_gb));
    reason += "; its " + std::to_string(pod.volume_gb) + " GB volume is kept and billed (" +
              per_month.ToString() + "/month) until the pod is terminated (suanli pods rm " +
              pod.id + ")";
  }
  SetState(change, pod, to, at, reason);
  if (to == PodState::kRunning) NoteRunning(pod);
  if (report.ready && to == PodState::kRunning) pod.ready = *report.ready;
  if (IsDown(to)) {
    if (pod.desired == core::DesiredState::kRunning) {
      // It stopped by itself: it stays down until its owner starts it again.
      pod.desired = core::DesiredState::kStopped;
      ++pod.generation;
      Rerate(pod);
    }
    if (to == PodState::kTerminated || pod.desired != core::DesiredState::kTerminated) {
      Unbind(change, pod);
    }
    if (to == PodState::kFailed || to == PodState::kExited) {
      Notify(change, users_.at(pod.owner_id),
             "pod " + pod.id + " " + std::string(core::PodStateName(to)) + ": " + pod.state_reason);
    }
  }
  return Written<core::Pod>{pod, change.Commit()};
}

Result<DesiredPods> ControlPlane::DesiredFor(const Principal& caller) const {
  if (caller.node_id.empty()) return core::PermissionDeniedError("only a node's agent may do this");
  core::MutexLock lock(mutex_);
  const auto node = nodes_.find(caller.node_id);
  if (node == nodes_.end()) return core::NotFoundError("this node was removed; register it again");
  DesiredPods desired;
  desired.generation = node->second.generation;
  for (const std::string& id : pods_.OnNode(caller.node_id)) {
    const core::Pod& pod = pods_.at(id);
    desired.pods.push_back(pod);
    for (core::VolumeMount& mount : desired.pods.back().volumes) {
      const auto volume = volumes_.find(mount.volume_id);
      if (volume != volumes_.end()) mount.size_gb = volume->second.size_gb;
    }
    if (desired.ssh_keys.contains(KeyHolder(pod))) continue;
    std::vector<std::string>& keys = desired.ssh_keys[KeyHolder(pod)];
    for (const auto& entry : ssh_keys_) {
      Principal holder;
      holder.user_id = entry.second.user_id;
      if (access_.Allowed(holder, pod.owner_id, pod.project_id, Access::kWrite)) {
        keys.push_back(entry.second.public_key);
      }
    }
  }
  // Terminated pods whose volume is still here: the agent deletes it and reports them terminated.
  for (const std::string& id : pods_.LeavingNode(caller.node_id)) {
    desired.pods.push_back(pods_.at(id));
  }
  return desired;
}

void ControlPlane::TouchKeyHolders(Change& change, const std::set<std::string>& holders) {
  std::set<std::string> nodes;
  for (const std::string& holder : holders) {
    for (const auto* pods : {&pods_.InProject(holder), &pods_.OfOwner(holder)}) {
      for (const std::string& id : *pods) {
        const core::Pod& pod = pods_.at(id);
        if (KeyHolder(pod) == holder && !pod.node_id.empty()) nodes.insert(pod.node_id);
      }
    }
  }
  for (const std::string& node_id : nodes) TouchNode(change, node_id);
}

void ControlPlane::WhenNodeChanges(const Principal& caller, int64_t after, core::TimePoint deadline,
                                   std::function<void()> notify) {
  {
    core::MutexLock lock(mutex_);
    const auto node = nodes_.find(caller.node_id);
    if (node != nodes_.end() && node->second.generation <= after && deadline > clock_.Now()) {
      waiters_.Add(caller.node_id, deadline, std::move(notify));
      return;
    }
  }
  notify();
}

}  // namespace suanli::server
