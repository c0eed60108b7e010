// A pod that fails or exits by itself keeps its volume, and so keeps paying for it: what the pod,
// its owner's notices and its events say then (issue 34, item 13: a pod whose image could not be
// pulled billed its 50 GB volume with nothing said).
#include <gtest/gtest.h>

#include <algorithm>

#include "server/control_plane_testing.h"

namespace suanli::server {
namespace {

using core::PodState;

class PodFailuresTest : public ControlPlaneOnStoreTest {
 protected:
  core::Pod FailWith(const Principal& alice, int volume_gb, PodState state) {
    if (!node_) node_ = NewNode("n1", 1);
    const core::Pod pod = CreatePod(alice, 1, volume_gb);
    EXPECT_EQ(Get(alice, pod.id).node_id, node_->node_id) << "the failed pods before it left";
    PodReport report;
    report.seq = 1;
    report.state = state;
    report.message = "pulling runpod/nonexistent:latest: manifest unknown";
    report.at = clock_.Now();
    auto result = plane_->ReportPod(*node_, pod.id, report);
    EXPECT_TRUE(result.ok()) << result.status().ToString();
    if (result.ok()) Durable(result->sequence);
    return Get(alice, pod.id);
  }

  std::vector<std::string> StateEvents(const Principal& alice, const std::string& pod_id) {
    store::EventQuery query;
    query.object_id = pod_id;
    query.kind = "pod.state";
    const core::Result<std::vector<core::Event>> events = plane_->Events(alice, query);
    EXPECT_TRUE(events.ok()) << events.status().ToString();
    std::vector<std::string> messages;
    if (!events.ok()) return messages;
    for (const core::Event& event : *events) messages.push_back(event.message);
    return messages;
  }

  std::optional<Principal> node_;
};

SUANLI_INSTANTIATE_ON_SQLITE(PodFailuresTest);

TEST_P(PodFailuresTest, AFailedPodSaysItsVolumeIsKeptAndBilledAndHowToEndIt) {
  const Principal alice = NewUser("alice", "10");
  const core::Pod pod = FailWith(alice, 50, PodState::kFailed);
  ASSERT_EQ(pod.state, PodState::kFailed);
  const std::string said =
      "its 50 GB volume is kept and billed ($5.00/month) until the pod is "
      "terminated (suanli pods rm " +
      pod.id + ")";
  EXPECT_NE(pod.state_reason.find("manifest unknown"), std::string::npos) << pod.state_reason;
  EXPECT_NE(pod.state_reason.find(said), std::string::npos) << pod.state_reason;
  const std::vector<std::string> notices = plane_->GetUser(alice, "me")->value.notices;
  EXPECT_TRUE(std::any_of(notices.begin(), notices.end(), [&](const std::string& notice) {
    return notice.find(said) != std::string::npos;
  })) << "the owner is told in their notices";
  const std::vector<std::string> events = StateEvents(alice, pod.id);
  EXPECT_TRUE(std::any_of(events.begin(), events.end(), [&](const std::string& message) {
    return message.find(said) != std::string::npos;
  })) << "and in the pod's events";
}

TEST_P(PodFailuresTest, APodWithNoVolumeOrOneEndingAnywaySaysNothingOfBilling) {
  const Principal alice = NewUser("alice", "10");
  const core::Pod no_volume = FailWith(alice, 0, PodState::kExited);
  EXPECT_EQ(no_volume.state, PodState::kExited);
  EXPECT_EQ(no_volume.state_reason.find("billed"), std::string::npos) << no_volume.state_reason;

  const core::Pod exited = FailWith(alice, 20, PodState::kExited);
  EXPECT_NE(exited.state_reason.find("its 20 GB volume is kept and billed ($2.00/month)"),
            std::string::npos)
      << exited.state_reason;
}

}  // namespace
}  // namespace suanli::server
