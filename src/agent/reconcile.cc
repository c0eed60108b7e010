#include "agent/reconcile.h"

#include <set>

namespace suanli::agent {
namespace {

using core::PodState;
using Kind = Action::Kind;

std::string Label(const ContainerInfo& container, std::string_view key) {
  const auto it = container.labels.find(std::string(key));
  return it == container.labels.end() ? std::string() : it->second;
}

class Planner {
 public:
  Planner(const std::map<std::string, Reported>& reported, core::TimePoint now)
      : reported_(reported), now_(now) {}

  void Pod(const DesiredPod& desired, const std::vector<const ContainerInfo*>& containers) {
    const core::Pod& pod = desired.pod;
    if (pod.desired == core::DesiredState::kRunning) {
      Running(pod, containers);
    } else {
      Down(pod, containers);
    }
  }

  // A container of a pod this node no longer runs (stopped and unbound, moved, removed): stop it,
  // say so if the server last heard it was running, and remove it. Its volume stays.
  void Orphan(const ContainerInfo& container) {
    const std::string pod_id = Label(container, kPodLabel);
    if (container.running) {
      Add(Kind::kStop, pod_id, container.id);
      return;
    }
    const Reported* last = Last(pod_id);
    if (last != nullptr && last->container_id == container.id && !core::IsDown(last->state) &&
        &Report(pod_id, PodState::kStopped, &container, FinishedAt(container)) != &none_) {
      return;
    }
    Add(Kind::kRemove, pod_id, container.id);
  }

  std::vector<Action> Take() { return std::move(actions_); }

 private:
  void Running(const core::Pod& pod, const std::vector<const ContainerInfo*>& containers) {
    const std::string restarts = std::to_string(pod.restarts);
    const ContainerInfo* current = nullptr;
    bool removed_stale = false;
    for (const ContainerInfo* container : containers) {
      if (current == nullptr && Label(*container, kRestartsLabel) == restarts) {
        current = container;
      } else {
        // A restart asked for a new container (or a duplicate appeared): the old one goes first,
        // so two never run at once on the pod's GPUs and ports.
        Add(Kind::kRemove, pod.id, container->id);
        removed_stale = true;
      }
    }
    if (removed_stale) return;
    if (current == nullptr) {
      Add(Kind::kCreate, pod.id, "");
      return;
    }
    if (current->running) {
      Report(pod.id, PodState::kRunning, current, current->started_at.value_or(now_),
             MappingsOf(pod, *current));
      return;
    }
    if (!current->started_at) {  // created, never started
      if (current->error.empty()) {
        Add(Kind::kStart, pod.id, current->id);
        return;
      }
      Report(pod.id, PodState::kFailed, current, now_, {}, current->error);
      return;
    }
    // It ran and ended. If that end was reported and the pod has been started again since (a new
    // generation), this is the old run's container: make room for a new one.
    const Reported* last = Last(pod.id);
    if (last != nullptr && last->container_id == current->id && core::IsDown(last->state) &&
        pod.generation > last->generation) {
      {
        Add(Kind::kRemove, pod.id, current->id);
        return;
      }
    }
    Action& exited =
        Report(pod.id, PodState::kExited, current, FinishedAt(*current), MappingsOf(pod, *current));
    if (&exited != &none_) exited.exit_code = current->exit_code;
  }

  // Desired stopped or terminated: stop (the GPU's billing ends at the container's exit time),
  // report stopped, remove the container, and for a terminated pod remove its volume and report
  // terminated.
  void Down(const core::Pod& pod, const std::vector<const ContainerInfo*>& containers) {
    bool stopping = false;
    for (const ContainerInfo* container : containers) {
      if (container->running) {
        Add(Kind::kStop, pod.id, container->id);
        stopping = true;
      }
    }
    if (stopping) return;
    const ContainerInfo* latest = nullptr;
    for (const ContainerInfo* container : containers) {
      if (latest == nullptr || FinishedAt(*container) > FinishedAt(*latest)) latest = container;
    }
    const Reported* last = Last(pod.id);
    if (last != nullptr && last->state == PodState::kTerminated) return;  // all done
    // The server's view may lag what was reported: say "stopped" once.
    const bool server_thinks_up =
        !core::IsDown(pod.state) && !(last != nullptr && core::IsDown(last->state));
    if (server_thinks_up && &Report(pod.id, PodState::kStopped, latest,
                                    latest ? FinishedAt(*latest) : now_) != &none_) {
      return;
    }
    if (!containers.empty()) {
      for (const ContainerInfo* container : containers) {
        Add(Kind::kRemove, pod.id, container->id);
      }
      return;
    }
    if (pod.desired != core::DesiredState::kTerminated) return;
    Add(Kind::kRemoveVolume, pod.id, "");
    Report(pod.id, PodState::kTerminated, nullptr, now_);
  }

  // Adds a report unless the server was already told this state of this container; returns the
  // action, or none_ when nothing was added.
  Action& Report(const std::string& pod_id, PodState state, const ContainerInfo* container,
                 core::TimePoint at, std::vector<core::PortMapping> mappings = {},
                 std::string message = {}) {
    const std::string container_id = container ? container->id : std::string();
    const Reported* last = Last(pod_id);
    if (last != nullptr && last->state == state &&
        (last->container_id == container_id || container_id.empty())) {
      return none_;
    }
    Action& action = Add(Kind::kReport, pod_id, container_id);
    action.state = state;
    action.at = at;
    action.port_mappings = std::move(mappings);
    action.message = std::move(message);
    return action;
  }

  Action& Add(Kind kind, const std::string& pod_id, const std::string& container_id) {
    Action action;
    action.kind = kind;
    action.pod_id = pod_id;
    action.container_id = container_id;
    actions_.push_back(std::move(action));
    return actions_.back();
  }

  const Reported* Last(const std::string& pod_id) const {
    const auto it = reported_.find(pod_id);
    return it == reported_.end() ? nullptr : &it->second;
  }

  core::TimePoint FinishedAt(const ContainerInfo& container) const {
    return container.finished_at.value_or(now_);
  }

  const std::map<std::string, Reported>& reported_;
  const core::TimePoint now_;
  std::vector<Action> actions_;
  Action none_;  // the address Report answers with when it adds nothing
};

}  // namespace

std::string ContainerName(std::string_view pod_id) { return "suanli-" + std::string(pod_id); }
std::string VolumeName(std::string_view pod_id) { return "suanli-" + std::string(pod_id); }

std::string OwnerNetworkName(std::string_view owner_id) {
  return "suanli-net-" + std::string(owner_id);
}

std::string ExpandVariables(std::string_view text,
                            const std::map<std::string, std::string>& variables) {
  std::string expanded;
  size_t at = 0;
  while (at < text.size()) {
    const size_t open = text.find("${", at);
    const size_t close = open == std::string_view::npos ? open : text.find('}', open + 2);
    if (close == std::string_view::npos) break;
    expanded += text.substr(at, open - at);
    const auto variable = variables.find(std::string(text.substr(open + 2, close - open - 2)));
    expanded += variable == variables.end() ? text.substr(open, close - open + 1)
                                            : std::string_view(variable->second);
    at = close + 1;
  }
  expanded += text.substr(at);
  return expanded;
}

std::vector<core::PortMapping> MappingsOf(const core::Pod& pod, const ContainerInfo& container) {
  std::vector<core::PortMapping> mappings;
  for (const core::PortSpec& port : pod.ports) {
    for (const PublishedPort& published : container.ports) {
      if (published.container_port == port.container_port && published.host_port > 0) {
        mappings.push_back({port.container_port, port.protocol, published.host_port});
        break;
      }
    }
  }
  return mappings;
}

std::vector<Action> Plan(const std::vector<DesiredPod>& desired,
                         const std::vector<ContainerInfo>& containers,
                         const std::map<std::string, Reported>& reported, core::TimePoint now) {
  std::map<std::string, std::vector<const ContainerInfo*>> by_pod;
  for (const ContainerInfo& container : containers) {
    const std::string pod_id = Label(container, kPodLabel);
    if (!pod_id.empty()) by_pod[pod_id].push_back(&container);
  }
  Planner planner(reported, now);
  std::set<std::string> wanted;
  for (const DesiredPod& pod : desired) {
    wanted.insert(pod.pod.id);
    const auto it = by_pod.find(pod.pod.id);
    planner.Pod(pod, it == by_pod.end() ? std::vector<const ContainerInfo*>() : it->second);
  }
  for (const auto& [pod_id, mine] : by_pod) {
    if (wanted.contains(pod_id)) continue;
    for (const ContainerInfo* container : mine) planner.Orphan(*container);
  }
  return planner.Take();
}

}  // namespace suanli::agent
