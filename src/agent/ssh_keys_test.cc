// Which running pods get their keys written again (StaleAuthorizedKeys); the writes themselves go
// to a real engine in tests/agent_process_test.cc
// (AgentFaultTest.ARunningPodsAuthorizedKeysFollowItsProjectsMembersAndTheirKeys).
#include "agent/ssh_keys.h"

#include <gtest/gtest.h>

#include "agent/reconcile.h"

namespace suanli::agent {
namespace {

DesiredPod Wanted(std::string id, std::vector<std::string> keys,
                  core::DesiredState desired = core::DesiredState::kRunning) {
  DesiredPod pod;
  pod.pod.id = std::move(id);
  pod.pod.desired = desired;
  pod.ssh_keys = std::move(keys);
  return pod;
}

ContainerInfo Container(std::string id, const std::string& pod_id, bool running) {
  ContainerInfo container;
  container.id = std::move(id);
  container.labels[std::string(kPodLabel)] = pod_id;
  container.running = running;
  return container;
}

std::vector<std::string> PodsOf(const std::vector<StaleKeys>& stale) {
  std::vector<std::string> ids;
  for (const StaleKeys& entry : stale) ids.push_back(entry.pod->pod.id + "@" + entry.container_id);
  return ids;
}

TEST(SshKeysTest, OnlyRunningPodsWhoseKeysChangedOrAreUnknownAreWrittenAgain) {
  const std::vector<DesiredPod> desired = {
      Wanted("same", {"k1"}),
      Wanted("changed", {"k1"}),
      Wanted("emptied", {}),
      Wanted("unknown", {"k2"}),  // the agent restarted: written once again
      Wanted("not-running", {"k3"}),
      Wanted("stopping", {"k4"}, core::DesiredState::kStopped),
      Wanted("no-container", {"k5"}),
  };
  const std::vector<ContainerInfo> containers = {
      Container("c-same", "same", true),         Container("c-changed-old", "changed", false),
      Container("c-changed", "changed", true),   Container("c-emptied", "emptied", true),
      Container("c-unknown", "unknown", true),   Container("c-not-running", "not-running", false),
      Container("c-stopping", "stopping", true),
  };
  const std::map<std::string, std::string> written = {
      {"same", "k1\n"}, {"changed", "k0\nk1\n"}, {"emptied", "k1\n"}, {"not-running", "k0\n"}};
  const std::vector<StaleKeys> stale = StaleAuthorizedKeys(desired, containers, written);
  EXPECT_EQ(PodsOf(stale), (std::vector<std::string>{"changed@c-changed", "emptied@c-emptied",
                                                     "unknown@c-unknown"}));
  ASSERT_EQ(stale.size(), 3u);
  EXPECT_EQ(stale[0].keys, "k1\n");
  EXPECT_EQ(stale[1].keys, "") << "none: the removed key must go";
  EXPECT_EQ(stale[2].keys, "k2\n");
}

}  // namespace
}  // namespace suanli::agent
