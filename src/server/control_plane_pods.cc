// The control plane: pods, their state and billing as it changes, and scheduling.
#include <algorithm>
#include <bit>
#include <map>

#include "advisor/advisor.h"
#include "billing/spend.h"
#include "core/mount_path.h"
#include "core/suggest.h"
#include "net/ssh_host_key.h"
#include "server/control_plane.h"
#include "server/control_plane_internal.h"
#include "server/secrets.h"

namespace suanli::server {
namespace {

// The nodes as the scheduler would see them with no pod bound (free = capacity), cordoned and
// unreachable ones too: what the cluster could ever offer, for sched::WhyNeverPlaced.
std::vector<sched::Node> CapacityOf(const std::map<std::string, core::Node>& nodes) {
  std::vector<sched::Node> out;
  out.reserve(nodes.size());
  for (const auto& [id, node] : nodes) {
    sched::Node& view = out.emplace_back();
    view.id = id;
    view.gpu_type = node.gpus.empty() ? "" : node.gpus.front().type;
    bool mig = false;
    for (const core::GpuDevice& gpu : node.gpus) {
      if (view.gpu_free_milli.size() == sched::kMaxGpusPerNode) break;
      view.gpu_free_milli.push_back(gpu.capacity_milli);
      mig = mig || gpu.capacity_milli < core::kMilliGpu;
    }
    if (mig) view.gpu_capacity_milli = view.gpu_free_milli;
    view.free = {node.vcpu, int64_t{node.memory_gb} * 1024, node.disk_gb};
    view.vcpu_total = node.vcpu;
    view.labels = node.labels;
  }
  return out;
}

sched::PodRequest RequestOf(const core::Pod& pod) {
  std::map<std::string, std::string> node_selector = pod.node_selector;
  // Its volumes on the shared backend are there only on nodes that have it.
  if (std::ranges::any_of(pod.volumes, &core::VolumeMount::shared)) {
    node_selector[std::string(core::kSharedVolumesLabel)] = core::kSharedVolumesLabelValue;
  }
  return {pod.id,
          pod.gpu_type,
          pod.gpu_count,
          pod.gpu_milli,
          sched::Resources{pod.vcpu, int64_t{pod.memory_gb} * 1024,
                           int64_t{pod.container_disk_gb} + pod.volume_gb},
          pod.priority,
          pod.sequence,
          pod.interruptible,
          std::move(node_selector),
          /*data_node=*/"",
          /*node_required=*/false};
}

}  // namespace

// --- Pod state -----------------------------------------------------------------------------------

void ControlPlane::SetState(Change& change, core::Pod& pod, PodState to, core::TimePoint at,
                            std::string reason) {
  pod.ready = false;  // a new state: the agent probes the ports again
  if (pod.state == PodState::kRunning && to != PodState::kRunning) {
    ChargePod(change, pod, at);
    RefundGpuPast(change, pod, at);
    pod.running_since.reset();
  }
  if (to == PodState::kTerminated) ChargePod(change, pod, at);
  if (to == PodState::kRunning && pod.state != PodState::kRunning) {
    pod.running_since = at;
    pod.gpu_billed_to = at;
    pod.gpu_price_per_hour = PodGpuRate(pod);
    if (!pod.ran) {
      // Its volume exists from its first run: storage is billed from here, not from creation.
      pod.ran = true;
      pod.storage_billed_to = at;
    }
  }
  change.Append(core::Transition{0, pod.id, pod.owner_id, at, pod.state, to, pod.node_id,
                                 pod.gpu_type, pod.gpu_count, pod.gpu_price_per_hour, reason});
  pod.state = to;
  pod.state_since = at;
  pod.state_reason = std::move(reason);
  // No container, no ports: a stopped pod's host ports may be another pod's by now.
  if (IsDown(to) || to == PodState::kPending) pod.port_mappings.clear();
  Rerate(pod);
  change.Dirty(Collection::kPods, pod.id);
}

void ControlPlane::TouchNode(Change& change, const std::string& node_id) {
  const auto it = nodes_.find(node_id);
  if (it == nodes_.end()) return;
  ++it->second.generation;
  change.Dirty(Collection::kNodes, node_id);
  change.TouchedNode(node_id);
}

void ControlPlane::SetDesired(Change& change, core::Pod& pod, core::DesiredState desired,
                              std::string reason) {
  pod.desired = desired;
  ++pod.generation;
  Rerate(pod);
  change.Dirty(Collection::kPods, pod.id);
  const core::TimePoint now = Now();
  if (pod.node_id.empty()) {
    // Nothing runs: the change takes effect at once, but for a volume left on the node the pod
    // last ran on (a stop unbinds the pod, the volume stays): that node's agent is told to
    // delete it and reports the pod terminated (DesiredFor, ReportPod), or the volume would stay
    // on the node forever.
    if (desired == core::DesiredState::kStopped && !IsDown(pod.state)) {
      SetState(change, pod, PodState::kStopped, now, std::move(reason));
    } else if (desired == core::DesiredState::kTerminated) {
      if (pod.volume_gb > 0 && nodes_.contains(pod.last_node_id)) {
        pod.state_reason = std::move(reason);  // leaving its last node (IsLeaving)
        TouchNode(change, pod.last_node_id);
      } else {
        SetState(change, pod, PodState::kTerminated, now, std::move(reason));
      }
    }
    return;
  }
  if (desired != core::DesiredState::kRunning) pod.state_reason = std::move(reason);
  TouchNode(change, pod.node_id);
}

void ControlPlane::Unbind(Change& change, core::Pod& pod) {
  if (pod.node_id.empty()) return;
  const std::string node_id = pod.node_id;
  pod.last_node_id = node_id;
  AbandonMoves(change, pod);
  pod.node_id.clear();
  pod.gpu_indices.clear();
  change.Dirty(Collection::kPods, pod.id);
  TouchNode(change, node_id);
  capacity_changed_ = true;
}

std::string ControlPlane::NodeName(const std::string& node_id) const {
  const auto it = nodes_.find(node_id);
  return it == nodes_.end() ? node_id : it->second.name;
}

Result<std::string> ControlPlane::PodIdFor(const Principal& caller, std::string_view id) const {
  std::string key(id);
  if (pods_.contains(key)) return key;
  // By name, as volumes and templates are: among the live pods the caller sees, their own
  // first, then their projects'. Names are not unique, so a name two pods share is refused.
  std::set<std::string> named;
  const auto match = [&](const std::set<std::string>& ids) REQUIRES(mutex_) {
    for (const std::string& pod_id : ids) {
      const core::Pod& pod = pods_.at(pod_id);
      if (pod.name == id && pod.state != PodState::kTerminated &&
          access_.Allowed(caller, pod.owner_id, pod.project_id, Access::kRead)) {
        named.insert(pod_id);
      }
    }
  };
  if (caller.project_id.empty()) match(pods_.OfOwner(caller.user_id));
  if (named.empty()) {
    for (const auto& [project_id, project] : access_.projects()) {
      if (AccessPolicy::SeesProject(caller, project)) match(pods_.InProject(project_id));
    }
  }
  if (named.size() > 1) {
    std::string ids;
    for (const std::string& pod_id : named) ids += (ids.empty() ? "" : ", ") + pod_id;
    return core::InvalidArgumentError(std::to_string(named.size()) +
                                      " of the pods you see are named " + key + " (" + ids +
                                      "): give the one you mean by its id");
  }
  return named.empty() ? key : *named.begin();
}

Result<core::Pod*> ControlPlane::FindOwnPod(const Principal& caller, std::string_view name) {
  Result<std::string> id = PodIdFor(caller, name);
  if (!id.ok()) return id.status();
  const auto it = pods_.find(*id);
  if (it == pods_.end() ||
      !access_.Allowed(caller, it->second.owner_id, it->second.project_id, Access::kRead)) {
    return core::NotFoundError("you have no pod " + std::string(name) + " (suanli pods list)");
  }
  if (!access_.Allowed(caller, it->second.owner_id, it->second.project_id, Access::kWrite)) {
    return core::PermissionDeniedError("you are a viewer of pod " + it->second.id +
                                       "'s project: ask its owner to make you a member");
  }
  return &it->second;
}

std::string ControlPlane::ResolveCheapest(int gpu_count, int gpu_milli) const {
  std::string best;
  std::string cheapest_anywhere;
  for (const sched::Node& node : SchedulerNodes()) {
    if (node.gpu_free_milli.empty()) continue;
    const Money price = PriceLocked(node.gpu_type);
    if (cheapest_anywhere.empty() || price < PriceLocked(cheapest_anywhere)) {
      cheapest_anywhere = node.gpu_type;
    }
    const bool room = gpu_milli < core::kMilliGpu
                          ? gpu_milli <= sched::LargestShareCovered(node.free) &&
                                std::ranges::any_of(node.gpu_free_milli,
                                                    [&](int free) { return free >= gpu_milli; })
                          : sched::UsableFreeGpus(node) >= gpu_count;
    if (node.schedulable && room && (best.empty() || price < PriceLocked(best))) {
      best = node.gpu_type;
    }
  }
  return best.empty() ? cheapest_anywhere : best;
}

Result<Written<catalog::Catalog>> ControlPlane::PricedCatalog(const Principal& caller) const {
  SUANLI_RETURN_IF_ERROR(PersonOnly(caller));
  catalog::Catalog priced = catalog_;
  core::MutexLock lock(mutex_);
  for (const auto& [gpu, price] : price_overrides_) {
    Result<const catalog::GpuType*> type = priced.FindExact(gpu);
    if (!type.ok()) continue;
    catalog::Price changed = (*type)->price;
    changed.rent_per_hour = price;
    priced.SetPrice(gpu, changed);
  }
  return Written<catalog::Catalog>{std::move(priced), queue_.submitted()};
}

Status ControlPlane::ResolveByAdvice(const advisor::Workload& workload, std::string* gpu_type,
                                     int* gpu_count) const {
  advisor::AdviseOptions options;
  std::set<std::string> seen;
  int most_free = 1;
  for (const sched::Node& node : SchedulerNodes()) {
    const int free = sched::UsableFreeGpus(node);
    if (!node.schedulable || free == 0 || !seen.insert(node.gpu_type).second) continue;
    Result<const catalog::GpuType*> gpu = catalog_.FindExact(node.gpu_type);
    if (!gpu.ok()) continue;
    options.gpus.push_back({*gpu, 0, 0});
    most_free = std::max(most_free, free);
  }
  if (options.gpus.empty()) {
    return core::FailedPreconditionError(
        "no GPU is free now, so the advisor has nothing to choose from; name a gpu_type to queue "
        "for one");
  }
  options.max_count = std::min(most_free, 8);
  const advisor::Advice advice = advisor::Advise(workload, catalog_, options);
  if (!advice.recommendation.index) {
    return core::ResourceExhaustedError("no free GPU type fits this workload: " +
                                        advice.recommendation.reason);
  }
  const advisor::Estimate& best = advice.estimates[*advice.recommendation.index];
  *gpu_type = best.gpu->name;
  *gpu_count = best.count;
  return Status::Ok();
}

Result<Written<core::Pod>> ControlPlane::CreatePod(const Principal& caller, PodSpec spec) {
  SUANLI_RETURN_IF_ERROR(PersonOnly(caller));
  if (spec.project.empty()) spec.project = caller.project_id;  // a project token's pods are its
  if (!spec.name.empty()) SUANLI_RETURN_IF_ERROR(CheckName("pod name", spec.name));
  if (spec.gpu_count < 1 || spec.gpu_count > kMaxGpusPerPod) {
    return core::InvalidArgumentError("gpu_count: must be from 1 to 64");
  }
  if (spec.gpu_milli < 1 || spec.gpu_milli > core::kMilliGpu ||
      (spec.gpu_milli < core::kMilliGpu && spec.gpu_count != 1)) {
    return core::InvalidArgumentError(
        "gpu_count: a share of one GPU (0.001 to 0.999, e.g. 0.5) or a whole number of GPUs");
  }
  SUANLI_RETURN_IF_ERROR(CheckEnv(spec.env));
  Locked locked(*this);
  Change change(*this);
  Result<core::Pod*> added = AddPod(change, caller, std::move(spec));
  if (!added.ok()) return added.status();
  return Written<core::Pod>{**added, change.Commit()};
}

Result<core::Pod*> ControlPlane::AddPod(Change& change, const Principal& caller, PodSpec spec) {
  const core::TimePoint now = Now();
  core::Pod pod;
  // A project's pod bills the project's owner, within the owner's quotas, cap and budget.
  Result<AccessPolicy::CreateScope> scope = access_.ScopeToCreateIn(caller, spec.project);
  if (!scope.ok()) return scope.status();
  pod.project_id = scope->project_id;
  pod.owner_id = scope->payer_id;
  if (!spec.template_id.empty()) {
    Result<const core::Template*> found = FindTemplate(caller, spec.template_id);
    if (!found.ok()) return found.status();
    const core::Template& base = **found;
    pod.template_id = base.id;
    pod.image = base.image;
    pod.command = base.command;
    pod.env = base.env;
    pod.ports = base.ports;
    pod.container_disk_gb = base.container_disk_gb;
    pod.volume_gb = base.volume_gb;
    pod.volume_mount_path = base.volume_mount_path;
  } else {
    pod.container_disk_gb = 20;
    pod.volume_mount_path = "/workspace";
  }
  if (!spec.image.empty()) pod.image = spec.image;
  if (pod.image.empty()) {
    return core::InvalidArgumentError(
        "give a template (suanli templates lists them) or an image to run");
  }
  if (spec.command) pod.command = *spec.command;
  for (auto& [name, value] : spec.env) pod.env[name] = value;
  if (spec.ports) pod.ports = *spec.ports;
  if (spec.container_disk_gb) pod.container_disk_gb = *spec.container_disk_gb;
  if (spec.volume_gb) pod.volume_gb = *spec.volume_gb;
  if (spec.volume_mount_path) pod.volume_mount_path = *spec.volume_mount_path;
  SUANLI_RETURN_IF_ERROR(core::CheckMountPath(pod.volume_mount_path));
  SUANLI_RETURN_IF_ERROR(AttachVolumes(caller, spec.volumes, pod));

  std::string gpu_name = spec.gpu_type;
  if ((gpu_name.empty() || gpu_name == "cheapest") && spec.workload) {
    SUANLI_RETURN_IF_ERROR(ResolveByAdvice(*spec.workload, &gpu_name, &spec.gpu_count));
  } else if (gpu_name.empty() || gpu_name == "cheapest") {
    gpu_name = ResolveCheapest(spec.gpu_count, spec.gpu_milli);
    if (gpu_name.empty()) {
      return core::FailedPreconditionError(
          "no node has GPUs yet, so there is no cheapest type; name one with gpu_type");
    }
  }
  Result<catalog::GpuMatch> gpu = catalog_.Find(gpu_name);
  if (!gpu.ok()) return gpu.status().WithContext("gpu_type");
  pod.gpu_type = gpu->gpu->name;
  pod.gpu_count = spec.gpu_count;
  pod.gpu_milli = spec.gpu_milli;
  // 2 vCPU and 8 GB per GPU, in proportion for a share (at least 1 vCPU and 1 GB).
  const sched::Resources defaults = sched::DefaultNeeds(spec.gpu_count, spec.gpu_milli);
  pod.vcpu = spec.vcpu.value_or(defaults.vcpu);
  pod.memory_gb = spec.memory_gb.value_or(static_cast<int>(defaults.ram_mb / 1024));
  pod.interruptible = spec.interruptible;
  pod.stop_after_s = spec.stop_after_s;
  pod.idle_stop_after_s = spec.idle_stop_after_s;
  pod.terminate_after_stopped_s = spec.terminate_after_stopped_s;
  if (pod.terminate_after_stopped_s > 0 && pod.volume_gb > 0 && !spec.terminate_deletes_volume) {
    return core::InvalidArgumentError(
        "terminate_after_stopped: its " + std::to_string(pod.volume_gb) +
        " GB volume would be deleted with the pod; agree with \"terminate_deletes_volume\": true "
        "(suanli pods create --terminate-deletes-volume), or keep what must last on a volume of "
        "your own (--volume NAME:/path), which outlives the pod");
  }
  pod.pre_stop_command = std::move(spec.pre_stop_command);
  pod.node_selector = std::move(spec.node_selector);
  pod.storage_price_per_gb_month = options_.storage_per_gb_month;

  core::User& user = users_.at(pod.owner_id);
  SUANLI_RETURN_IF_ERROR(CheckQuota(user, /*new_pod=*/true));
  SUANLI_RETURN_IF_ERROR(CheckPayerBudgets(pod, PodGpuRate(pod), now));
  SUANLI_RETURN_IF_ERROR(
      CheckCanAfford(user,
                     spend_.Rate(user.id) + PodGpuRate(pod) +
                         billing::StoragePerHour(pod.storage_price_per_gb_month, pod.volume_gb),
                     now));
  // A request no node here could ever meet would wait forever: refused, unless asked to queue.
  if (!spec.queue) {
    if (std::optional<std::string> never =
            sched::WhyNeverPlaced(RequestOf(pod), CapacityOf(nodes_))) {
      return core::FailedPreconditionError(
          *never +
          "; or queue it on purpose until such a node joins (\"queue\": true, suanli pods "
          "create --queue)");
    }
  }

  pod.id = NewId("pod");
  pod.jupyter_token = HexEncode(entropy_.Bytes(24));
  pod.link_token = HexEncode(entropy_.Bytes(24));
  if (std::ranges::any_of(pod.ports,
                          [](const core::PortSpec& port) { return port.container_port == 22; })) {
    // Made once and kept with the pod, so that it answers with one host key all its life.
    Result<net::SshHostKey> host_key =
        net::SshHostKeyFromSeed(entropy_.Bytes(net::kSshHostKeySeedBytes));
    if (!host_key.ok()) return host_key.status();
    pod.ssh_host_key_seed = host_key->seed;
    pod.ssh_host_key = net::OpenSshPublicKey(*host_key);
  }
  pod.created_by = caller.user_id;
  pod.name = spec.name.empty() ? pod.id : std::move(spec.name);
  pod.sequence = ++last_pod_sequence_;
  pod.created_at = now;
  pod.state_since = now;
  pod.storage_billed_to = now;
  pod.gpu_billed_to = now;
  pod.state_reason = "waiting for a GPU";
  core::Pod& stored = pods_.Add(std::move(pod));
  change.Append(core::Transition{0, stored.id, stored.owner_id, now, PodState::kPending,
                                 PodState::kPending, "", stored.gpu_type, stored.gpu_count, Money(),
                                 "created"});
  Rerate(stored);
  change.Dirty(Collection::kPods, stored.id);
  // Place it now, so a pod on an idle cluster starts at once (first come, first served: after a
  // capacity change, every pending pod is tried in order).
  Schedule(change, now);
  return &stored;
}

Result<Written<std::vector<core::Pod>>> ControlPlane::ListPods(const Principal& caller) const {
  SUANLI_RETURN_IF_ERROR(PersonOnly(caller));
  core::MutexLock lock(mutex_);
  std::vector<core::Pod> pods;
  const core::TimePoint now = Now();
  for (const auto& entry : pods_) {
    if (access_.Allowed(caller, entry.second.owner_id, entry.second.project_id, Access::kRead)) {
      pods.push_back(entry.second);
      pods.back().cost =
          pods.back().cost + billing::Unbilled(entry.second, MeteredTo(entry.second, nodes_, now));
    }
  }
  return Written<std::vector<core::Pod>>{std::move(pods), queue_.submitted()};
}

Result<PodPageEnd> ControlPlane::VisitPods(
    const Principal& caller, const PodPage& page,
    const std::function<void(const PodListEntry&)>& visit) const {
  SUANLI_RETURN_IF_ERROR(PersonOnly(caller));
  core::MutexLock lock(mutex_);
  const core::TimePoint now = Now();
  static const std::string kNoAddress;
  auto show = [&](const core::Pod& pod) REQUIRES(mutex_) {
    const auto node = nodes_.find(pod.node_id);
    visit(PodListEntry{pod, pods_.Revision(pod.id),
                       node == nodes_.end() ? kNoAddress : node->second.address,
                       pod.cost + billing::Unbilled(pod, MeteredTo(pod, nodes_, now))});
  };
  PodPageEnd end{queue_.submitted(), ""};
  // Both walks are in id order, from just after `page.after`: a page costs its own pods only.
  auto walk = [&](auto it, auto finish, auto pod_of) REQUIRES(mutex_) {
    size_t shown = 0;
    std::string last;
    for (; it != finish; ++it) {
      if (shown == page.limit) {
        end.next_after = std::move(last);
        return;
      }
      const core::Pod& pod = *pod_of(it);
      show(pod);
      last = pod.id;
      ++shown;
    }
  };
  static const std::set<std::string> kNone;
  const auto pod_at = [this](auto it) REQUIRES(mutex_) { return &pods_.at(*it); };
  if (!page.project.empty()) {
    Result<std::string> project = access_.FindProject(caller, page.project);
    if (!project.ok()) return project.status();
    const std::set<std::string>& pods = pods_.InProject(*project);
    walk(pods.upper_bound(page.after), pods.end(), pod_at);
    return end;
  }
  // A project token sees its project's pods only, not its user's own.
  const std::set<std::string>& own =
      caller.project_id.empty() ? pods_.OfOwner(caller.user_id) : kNone;
  // The projects' pods the caller sees besides their own: with none (most callers), the owner's
  // index is the page's order as it is; else the union, in id order.
  std::set<std::string> seen;
  for (const auto& [project_id, project] : access_.projects()) {
    if (caller.is_admin() || !AccessPolicy::SeesProject(caller, project)) continue;
    const std::set<std::string>& pods = pods_.InProject(project_id);
    seen.insert(pods.upper_bound(page.after), pods.end());
  }
  if (caller.is_admin()) {
    walk(pods_.upper_bound(page.after), pods_.end(), [](auto it) { return &it->second; });
  } else if (seen.empty()) {
    walk(own.upper_bound(page.after), own.end(), pod_at);
  } else {
    seen.insert(own.upper_bound(page.after), own.end());
    walk(seen.begin(), seen.end(), pod_at);
  }
  return end;
}

Result<Written<core::Pod>> ControlPlane::GetPod(const Principal& caller,
                                                std::string_view id) const {
  SUANLI_RETURN_IF_ERROR(PersonOnly(caller));
  core::MutexLock lock(mutex_);
  Result<std::string> found = PodIdFor(caller, id);
  if (!found.ok()) return found.status();
  const auto it = pods_.find(*found);
  if (it == pods_.end() ||
      !access_.Allowed(caller, it->second.owner_id, it->second.project_id, Access::kRead)) {
    return core::NotFoundError("you have no pod " + std::string(id) + " (suanli pods list)");
  }
  core::Pod pod = it->second;
  pod.cost = pod.cost + billing::Unbilled(pod, MeteredTo(pod, nodes_, Now()));
  return Written<core::Pod>{std::move(pod), queue_.submitted()};
}

Result<PodPlacement> ControlPlane::Placement(const Principal& caller, std::string_view pod_id,
                                             Reach reach) const {
  Result<Written<core::Pod>> pod = GetPod(caller, pod_id);
  if (!pod.ok()) return pod.status();
  PodPlacement placement{std::move(pod->value), "", false};
  core::MutexLock lock(mutex_);
  if (reach == Reach::kPorts &&
      !access_.Allowed(caller, placement.pod.owner_id, placement.pod.project_id, Access::kWrite)) {
    return core::PermissionDeniedError("you are a viewer of pod " + placement.pod.id +
                                       "'s project: its ports are for its members");
  }
  if (placement.pod.node_id.empty()) return placement;
  const auto node = nodes_.find(placement.pod.node_id);
  placement.node_name = NodeName(placement.pod.node_id);
  placement.node_reachable = node != nodes_.end() && node->second.state == core::NodeState::kReady;
  return placement;
}

Result<Written<core::Pod>> ControlPlane::Act(const Principal& caller, std::string_view id,
                                             core::PodAction action, bool force) {
  SUANLI_RETURN_IF_ERROR(PersonOnly(caller));
  Locked locked(*this);
  Result<core::Pod*> found = FindOwnPod(caller, id);
  if (!found.ok()) return found.status();
  core::Pod& pod = **found;
  SUANLI_RETURN_IF_ERROR(core::CheckAction(pod.state, action));
  if (pod.desired == core::DesiredState::kTerminated) {
    return core::FailedPreconditionError(
        "pod " + pod.id + " is being terminated: its node " +
        NodeName(pod.node_id.empty() ? pod.last_node_id : pod.node_id) +
        " is removing it and its volume; wait until it is terminated");
  }
  const core::TimePoint now = Now();
  Change change(*this);
  switch (action) {
    case core::PodAction::kStop:
      if (pod.desired == core::DesiredState::kStopped) {
        return core::FailedPreconditionError("pod " + pod.id + " is already stopping");
      }
      SetDesired(change, pod, core::DesiredState::kStopped, "stopped by its owner");
      break;
    case core::PodAction::kStart: {
      core::User& user = users_.at(pod.owner_id);
      SUANLI_RETURN_IF_ERROR(CheckQuota(user, /*new_pod=*/false));
      SUANLI_RETURN_IF_ERROR(CheckPayerBudgets(pod, PodGpuRate(pod), now));
      SUANLI_RETURN_IF_ERROR(CheckCanAfford(user, spend_.Rate(user.id) + PodGpuRate(pod), now));
      pod.desired = core::DesiredState::kRunning;
      ++pod.generation;
      SetState(change, pod, PodState::kPending, now, "waiting for a GPU");
      Schedule(change, now);
      break;
    }
    case core::PodAction::kRestart:
      ++pod.restarts;
      ++pod.generation;
      change.Dirty(Collection::kPods, pod.id);
      TouchNode(change, pod.node_id);
      break;
    case core::PodAction::kTerminate:
      // A pod that never ran (pending, or failed before its container started) wrote nothing.
      if (pod.volume_gb > 0 && pod.ran && !pod.volume_confirmed_empty && !force) {
        return core::FailedPreconditionError(
            "pod " + pod.id + " has a " + std::to_string(pod.volume_gb) +
            " GB volume that may hold data, and terminating deletes it; terminate with --force "
            "(API: ?force=true) once you have copied what you need");
      }
      // What happens to each volume: its own goes with it; volumes of their own stay.
      SetDesired(change, pod, core::DesiredState::kTerminated,
                 "terminated by its owner" + VolumesKept(pod));
      break;
  }
  return Written<core::Pod>{pod, change.Commit()};
}

// --- Scheduling ----------------------------------------------------------------------------------

std::vector<sched::Node> ControlPlane::SchedulerNodes() const {
  std::vector<sched::Node> out;
  out.reserve(nodes_.size());
  for (const auto& [id, node] : nodes_) {
    sched::Node view;
    view.id = id;
    view.gpu_type = node.gpus.empty() ? "" : node.gpus.front().type;
    bool mig = false;
    for (const core::GpuDevice& gpu : node.gpus) {
      if (view.gpu_free_milli.size() == sched::kMaxGpusPerNode) break;
      view.gpu_free_milli.push_back(gpu.capacity_milli);
      view.gpu_link_group.push_back(gpu.link_group);
      mig = mig || gpu.capacity_milli < core::kMilliGpu;
    }
    if (mig) view.gpu_capacity_milli = view.gpu_free_milli;  // before any pod takes its part
    if (Result<const catalog::GpuType*> type = catalog_.FindExact(view.gpu_type); type.ok()) {
      view.gpu_memory_gb = (*type)->memory_gb;
    }
    view.free = {node.vcpu, int64_t{node.memory_gb} * 1024, node.disk_gb};
    view.vcpu_total = node.vcpu;
    view.schedulable = node.state == core::NodeState::kReady && !node.cordoned && !node.draining;
    view.labels = node.labels;
    for (const std::string& pod_id : pods_.OnNode(id)) {
      const core::Pod& pod = pods_.at(pod_id);
      if (!HoldsGpus(pod.state)) continue;
      for (int index : pod.gpu_indices) {
        if (index >= 0 && static_cast<size_t>(index) < view.gpu_free_milli.size())
          view.gpu_free_milli[static_cast<size_t>(index)] -= pod.gpu_milli;
      }
      view.free.vcpu -= pod.vcpu;
      view.free.ram_mb -= int64_t{pod.memory_gb} * 1024;
      view.free.disk_gb -= pod.container_disk_gb + pod.volume_gb;
    }
    out.push_back(std::move(view));
  }
  return out;
}

void ControlPlane::Schedule(Change& change, core::TimePoint now) {
  // Pods that could not be placed stay so until the capacity changes (a node, a freed GPU), so
  // without such a change only the pods that became pending since the last round are tried.
  const std::set<std::string>& candidates =
      capacity_changed_ ? pods_.Pending() : pods_.NewlyPending();
  if (candidates.empty()) return;
  std::vector<sched::Node> nodes = SchedulerNodes();
  std::vector<sched::PodRequest> requests;
  requests.reserve(candidates.size());
  // Every pending pod is tried this round: the waits for data are all worked out again.
  if (capacity_changed_) data_wait_until_.reset();
  std::map<std::string, std::pair<std::string, core::TimePoint>> data_waits;  // node, until
  for (const std::string& id : candidates) {
    const core::Pod& pod = pods_.at(id);
    if (WaitsForSnapshot(pod)) continue;  // tried again once the snapshot is made
    requests.push_back(RequestOf(pod));
    if (const auto wait = PlaceNearData(pod, requests.back(), now)) {
      data_waits[pod.id] = {requests.back().data_node, *wait};
      data_wait_until_ = std::min(data_wait_until_.value_or(*wait), *wait);
    }
  }
  // Every bound pod: the mix packing keeps room for; the interruptible ones meant to run may be
  // preempted.
  std::vector<sched::RunningPod> running;
  for (const auto& [node_id, pod_ids] : pods_.ByNode()) {
    for (const std::string& pod_id : pod_ids) {
      const core::Pod& pod = pods_.at(pod_id);
      if (!HoldsGpus(pod.state)) continue;
      running.push_back({pod.id, node_id, pod.gpu_count, pod.gpu_milli, pod.gpu_indices,
                         sched::Resources{pod.vcpu, int64_t{pod.memory_gb} * 1024,
                                          int64_t{pod.container_disk_gb} + pod.volume_gb},
                         pod.priority, pod.sequence,
                         pod.interruptible && pod.desired == core::DesiredState::kRunning});
    }
  }
  capacity_changed_ = false;
  pods_.ClearNewlyPending();
  const sched::Plan plan = sched::Schedule(nodes, std::move(requests), running);
  for (const sched::Binding& binding : plan.bindings) {
    core::Pod& pod = pods_.at(binding.pod_id);
    PlanMoves(change, pod, binding.node_id, now);
    // Report sequence numbers are counted by each node's agent (its state file): the new node's
    // first report is seq 1, however far the last node's went.
    if (pod.last_node_id != binding.node_id) pod.report_seq = 0;
    pod.node_id = binding.node_id;
    pod.last_node_id = binding.node_id;
    pod.gpu_indices = binding.gpu_indices;
    ++pod.generation;
    SetState(change, pod, PodState::kStarting, now,
             "scheduled on " + NodeName(pod.node_id) +
                 (pod.moves.empty() ? "" : "; its volume moves there first"));
    TouchNode(change, pod.node_id);
  }
  for (const sched::Unplaced& unplaced : plan.unplaced) {
    core::Pod& pod = pods_.at(unplaced.pod_id);
    std::string reason = unplaced.reason;
    if (const auto wait = data_waits.find(pod.id); wait != data_waits.end()) {
      const auto& [node_id, until] = wait->second;
      reason = "waiting for room on node " + NodeName(node_id) + ", which holds its data, until " +
               FormatTime(until) +
               " (about as long as moving the data elsewhere would take); then it moves the data";
    }
    if (pod.state_reason != reason) {
      pod.state_reason = std::move(reason);
      change.Dirty(Collection::kPods, pod.id);
    }
  }
  for (const std::string& id : plan.preempt) {
    core::Pod& pod = pods_.at(id);
    const std::string reason = "preempted: an on-demand pod needed its GPUs (it was interruptible)";
    SetDesired(change, pod, core::DesiredState::kStopped, reason);
    NotifyPod(change, pod, "pod.preempted", reason);
  }
}

}  // namespace suanli::server
