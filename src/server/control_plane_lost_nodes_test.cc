// A node that never comes back (issue 34, item 6): what its pods are billed, and how an admin
// removes it.
#include <gtest/gtest.h>

#include "billing/meter.h"
#include "server/control_plane_testing.h"

namespace suanli::server {
namespace {

using core::Money;
using core::PodState;
using std::chrono::minutes;
using std::chrono::seconds;

class LostNodesTest : public ControlPlaneOnStoreTest {
 protected:
  // A running pod of alice's on a node of one GPU whose last heartbeat is `last_beat` (returned),
  // 90 s after the pod started (`*started`).
  core::TimePoint RunThenGoSilent(const Principal& alice, const Principal& node,
                                  const core::Pod& pod, core::TimePoint* started) {
    *started = clock_.Now();
    EXPECT_TRUE(Report(node, pod.id, 1, PodState::kRunning, *started).ok());
    clock_.Advance(seconds(90));
    Heartbeat(node, 1);
    const core::TimePoint last_beat = clock_.Now();
    clock_.Advance(seconds(31));
    Durable(plane_->Tick());
    EXPECT_EQ(plane_->GetNode(admin_, node.node_id)->value.state, core::NodeState::kUnreachable);
    EXPECT_EQ(Get(alice, pod.id).state, PodState::kRunning);
    return last_beat;
  }

  Money Expected(core::TimePoint started, core::TimePoint end) {
    return billing::ChargeBetween(plane_->GpuPrice("RTX 4090"), started, started, end);
  }
};

SUANLI_INSTANTIATE_ON_SQLITE(LostNodesTest);

// Once billed -12,333 µ$ a minute, still counting, for a pod its owner had terminated.
TEST_P(LostNodesTest, APodTerminatedOnASilentNodeIsBilledToTheNodesLastHeartbeatOnly) {
  const Principal alice = NewUser("alice", "10");
  const Principal node = NewNode("n1", 1);
  const core::Pod pod = CreatePod(alice);
  core::TimePoint started;
  const core::TimePoint last_beat = RunThenGoSilent(alice, node, pod, &started);
  for (int i = 0; i < 3; ++i) {  // the meter charges the silent node's pod on, while it is wanted
    clock_.Advance(seconds(61));
    Durable(plane_->Tick());
  }
  EXPECT_GT(Money() - LedgerSum(alice, pod.id), Expected(started, last_beat));
  ASSERT_TRUE(plane_->Act(alice, pod.id, core::PodAction::kTerminate).ok());
  for (int i = 0; i < 30; ++i) {
    clock_.Advance(seconds(61));
    Durable(plane_->Tick());
  }
  EXPECT_EQ(Money() - LedgerSum(alice, pod.id), Expected(started, last_beat));
  // What the balance and the pod's cost show counts no more than the ledger does.
  EXPECT_EQ(plane_->GetUser(alice, "me")->value.balance,
            *Money::ParseDollars("10") - Expected(started, last_beat));
  EXPECT_EQ(Get(alice, pod.id).cost, Expected(started, last_beat));
  // The node comes back: its agent reports when the container really stopped, and that is billed.
  Heartbeat(node, 1);
  const core::TimePoint stopped = last_beat + seconds(20);
  ASSERT_TRUE(Report(node, pod.id, 2, PodState::kTerminated, stopped).ok());
  EXPECT_EQ(Money() - LedgerSum(alice, pod.id), Expected(started, stopped));
}

TEST_P(LostNodesTest, ADeadNodeIsRemovedAfterTheGraceWithItsPodsLostAndBilledToItsLastHeartbeat) {
  const Principal alice = NewUser("alice", "10");
  const Principal node = NewNode("n1", 1);
  const core::Pod pod = CreatePod(alice);
  core::TimePoint started;
  const core::TimePoint last_beat = RunThenGoSilent(alice, node, pod, &started);
  // Silent for less than the grace: it may come back, so it must be drained first.
  const auto early = plane_->DeleteNode(admin_, node.node_id);
  ASSERT_EQ(early.status().code(), core::StatusCode::kFailedPrecondition);
  EXPECT_NE(early.status().message().find("unreachable for 10 minutes"), std::string::npos)
      << early.status().message();
  for (int i = 0; i < 10; ++i) {
    clock_.Advance(seconds(61));
    Durable(plane_->Tick());
  }
  const auto removed = plane_->DeleteNode(admin_, node.node_id);
  ASSERT_TRUE(removed.ok()) << removed.status().ToString();
  Durable(removed->sequence);
  const core::Pod lost = Get(alice, pod.id);
  EXPECT_EQ(lost.state, PodState::kTerminated);
  EXPECT_EQ(lost.node_id, "");
  EXPECT_NE(lost.state_reason.find("lost: its node n1 was removed"), std::string::npos)
      << lost.state_reason;
  EXPECT_EQ(Money() - LedgerSum(alice, pod.id), Expected(started, last_beat));
  EXPECT_EQ(plane_->GetUser(alice, "me")->value.balance,
            *Money::ParseDollars("10") - Expected(started, last_beat));
  // Nothing more is charged, and the node is gone.
  clock_.Advance(minutes(5));
  Durable(plane_->Tick());
  EXPECT_EQ(Money() - LedgerSum(alice, pod.id), Expected(started, last_beat));
  EXPECT_EQ(plane_->GetNode(admin_, node.node_id).status().code(), core::StatusCode::kNotFound);
}

}  // namespace
}  // namespace suanli::server
