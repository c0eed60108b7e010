// For process tests that run pods on the real engine (Podman here): where it is, the local test
// image, and the cleanup of what a failed test left behind.
#pragma once

#include <cstdlib>
#include <string>
#include <string_view>

#include "agent/engine.h"
#include "agent/reconcile.h"

namespace suanli::testing {

// The image scripts/engine.sh builds locally, so the tests need no registry.
inline constexpr std::string_view kTestImage = "localhost/suanli/busybox:latest";

// SUANLI_ENGINE_SOCKET, else the first socket FindEngineSocket finds; "" for none.
inline std::string EngineSocket() {
  if (const char* socket = std::getenv("SUANLI_ENGINE_SOCKET"); socket != nullptr && *socket) {
    return socket;
  }
  return agent::FindEngineSocket();
}

// Removes node `node_id`'s containers and their volumes (nothing when the id is empty), and every
// owner network left without a container (the engine refuses to remove the others): the agent
// prunes them itself, but not when a test kills it first, and the engine's subnets are few.
inline void RemoveContainersOfNode(agent::Engine& engine, const std::string& node_id) {
  if (node_id.empty()) return;
  auto containers = engine.ListLabelled("suanli.node");
  if (!containers.ok()) return;
  for (const agent::ContainerInfo& container : *containers) {
    const auto node = container.labels.find("suanli.node");
    if (node == container.labels.end() || node->second != node_id) continue;
    (void)engine.Remove(container.id);
    (void)engine.RemoveVolume(agent::VolumeName(container.labels.at("suanli.pod")));
  }
  auto networks = engine.ListLabelledNetworks(agent::kNetworkLabel);
  if (!networks.ok()) return;
  for (const std::string& network : *networks) (void)engine.RemoveNetwork(network);
}

}  // namespace suanli::testing
