// The agent's reconcile step as a pure function: desired pods (from the server) and the containers
// on this host in, the next actions out. No I/O, so every case is a unit test.
//
// Level-triggered, as kubelet does it: the agent calls Plan, carries out what it says, and calls it
// again until it says nothing (and again on every change and every few seconds), so an action lost
// to a crash or a dead engine is simply planned again. Each call plans at most one step per pod;
// steps that depend on the engine's answer (a stop's exit time) come on the next call.
//
// Containers are named and labelled by pod: `suanli.pod` (the pod id) and `suanli.restarts` (the
// pod's restart count when it was created; a higher count on the server means "restart": a new
// container). A stopped pod's container is removed, its volume (`suanli-<pod id>`) kept until the
// pod is terminated, as RunPod does: the container disk is scratch, the volume persists.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "agent/engine.h"
#include "core/clock.h"
#include "core/domain.h"
#include "wire/agent_protocol.h"

namespace suanli::agent {

inline constexpr std::string_view kPodLabel = "suanli.pod";
inline constexpr std::string_view kRestartsLabel = "suanli.restarts";
inline constexpr std::string_view kNodeLabel = "suanli.node";  // the agent manages only its own

std::string ContainerName(std::string_view pod_id);  // "suanli-pod_abc"
std::string VolumeName(std::string_view pod_id);     // "suanli-pod_abc"

// Each owner's pods share a network of their own on a host, which no other owner's pod can reach
// (Engine::CreateIsolatedNetwork): "suanli-net-usr_abc", labelled kNetworkLabel = the owner. Not
// labelled with the node: agents that share an engine share these networks.
inline constexpr std::string_view kNetworkLabel = "suanli.owner";
std::string OwnerNetworkName(std::string_view owner_id);

// A pod as the server wants it: its view (desired state, generation, its state) and its owner's
// SSH keys, as the agent protocol carries it.
using wire::DesiredPod;

// What the agent last told the server about a pod (kept in memory: repeating a report after an
// agent restart is harmless, the server ignores a report of the state a pod is already in).
struct Reported {
  core::PodState state = core::PodState::kPending;
  std::string container_id;
  int64_t generation = 0;  // the pod's generation when the report was made
};

struct Action {
  enum class Kind { kCreate, kStart, kStop, kRemove, kRemoveVolume, kReport };
  Kind kind = Kind::kReport;
  std::string pod_id;
  std::string container_id;  // kStart, kStop, kRemove; kReport: the container it is about
  // kReport:
  core::PodState state = core::PodState::kRunning;
  core::TimePoint at;
  std::optional<int> exit_code;
  std::string message;
  std::vector<core::PortMapping> port_mappings;
};

// `containers` are those carrying kPodLabel. `now` stands in for a time the engine did not give.
std::vector<Action> Plan(const std::vector<DesiredPod>& desired,
                         const std::vector<ContainerInfo>& containers,
                         const std::map<std::string, Reported>& reported, core::TimePoint now);

// `text` with each ${NAME} whose NAME is in `variables` replaced by its value; other text, unknown
// names included, stays as it is (a shell in the container may still expand them).
std::string ExpandVariables(std::string_view text,
                            const std::map<std::string, std::string>& variables);

// The protocol's port list for a container: each of the pod's ports with the host port the engine
// published it on ("http" ports keep their protocol; the engine only knows tcp).
std::vector<core::PortMapping> MappingsOf(const core::Pod& pod, const ContainerInfo& container);

}  // namespace suanli::agent
